"""What a retrieval query's texts point at: identifiers, paths, stack-trace frames and changed diff lines.

Pure text parsing; the retriever resolves what is found against the index. Identifiers that look like code
(``snake_case``, ``camelCase``, ``Dotted.name``, ``call(``, backticked) are told apart from plain words
(``thread``, ``SSL``), which count for less, and stop words (``the``, ``return``) never match.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from contenox.workspace._bm25 import STOP_WORDS

__all__ = ["Frame", "Word", "changed_lines", "frames", "paths_in", "words_in"]

_BACKTICK = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(\()?")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,4}|(?:[\w.-]+/)+[\w.-]+)(?![\w/])")
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_JS_FRAME = re.compile(r"\bat (?:[^\s()]+ )?\(?((?:[A-Za-z]:)?[^\s():]+):(\d+):\d+\)?")
_LINE_REF = re.compile(r"((?:[A-Za-z]:)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,4}):(\d+)\b")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_FILE_SUFFIX = re.compile(r"\.(?:py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|cts|go|rs|java|c|h|cc|cpp|cxx|hpp|hh|hxx|md|txt|"
                          r"toml|json|yaml|yml|cfg|ini|rst)$")


class Word(NamedTuple):
    """An identifier found in a text; ``dotted`` is the full ``a.b.c`` form it came in (or the name)."""

    name: str
    dotted: str
    code: bool


class Frame(NamedTuple):
    path: str
    line: int
    trace: bool
    """From a stack trace (not a ``path:line`` reference in prose)."""


def _looks_like_code(token: str) -> bool:
    core = token.strip("_")
    return "_" in core or "." in token or "::" in token or _CAMEL.search(core) is not None


def words_in(text: str, *, all_code: bool = False) -> list[Word]:
    """Identifiers of ``text`` in first-appearance order, code-like ones flagged; stop words left out."""
    found: dict[str, Word] = {}
    backticked = {m.strip() for span in _BACKTICK.findall(text) for m in re.split(r"[^\w.:]+", span)}
    for match in _TOKEN.finditer(text):
        token = match.group(0).rstrip("( \t")
        if _FILE_SUFFIX.search(token):
            continue
        code = all_code or bool(match.group(1)) or token in backticked or _looks_like_code(token)
        parts = re.split(r"\.|::", token)
        name = parts[-1]
        if name.lower() in STOP_WORDS or (len(name) < 3 and not code):
            continue
        known = found.get(name)
        if known is None or (code and not known.code):
            found[name] = Word(name=name, dotted=".".join(parts), code=code)
        if len(parts) > 1:  # ``Signer.unsign`` names a class; ``conn.next_event`` an instance (a plain word)
            for part in parts[:-1]:
                if part not in found and part.lower() not in STOP_WORDS and len(part) > 2:
                    found[part] = Word(name=part, dotted=part,
                                       code=all_code or not part[0].islower() or _looks_like_code(part))
    return list(found.values())


def paths_in(text: str) -> list[str]:
    """Path-like words (``pkg/mod.py``, ``signer.py``, ``src/app``) in order of appearance."""
    return list(dict.fromkeys(m.group(1).strip(".") for m in _PATH.finditer(text)
                              if "/" in m.group(1) or _FILE_SUFFIX.search(m.group(1))))


def frames(text: str, *, trace: bool) -> list[Frame]:
    """Stack-trace frames and ``path:line`` references, innermost first (Python tracebacks are printed
    innermost last)."""
    python = [Frame(path, int(line), True) for path, line in _PY_FRAME.findall(text)]
    python.reverse()
    js = [Frame(path, int(line), True) for path, line in _JS_FRAME.findall(text)]
    other = [Frame(path, int(line), trace) for path, line in _LINE_REF.findall(text)]
    seen: set[tuple[str, int]] = set()
    result: list[Frame] = []
    for frame in (*python, *js, *other):
        if (frame.path, frame.line) not in seen:
            seen.add((frame.path, frame.line))
            result.append(frame)
    return result


def changed_lines(diff: str, *, both_sides: bool = False) -> dict[str, set[int]]:
    """The new-side lines a unified diff adds or deletes next to, per path (``+++ b/path``). ``both_sides``: where
    lines were only taken away, the line before the gap as well (a deleted last line of a function is next to the
    function, not only to what follows it)."""
    changed: dict[str, set[int]] = {}
    path: str | None = None
    line = 0
    gap = False
    for raw in [*diff.splitlines(), "@@"]:
        if gap and path is not None and both_sides and not raw.startswith(("+", "-")):
            changed.setdefault(path, set()).update(n for n in (line - 1, line) if n >= 1)
        if not raw.startswith("-") or raw.startswith("--- "):
            gap = False
        if raw.startswith("+++ "):
            target = raw[4:].split("\t")[0].strip()
            path = None if target == "/dev/null" else (target[2:] if target.startswith("b/") else target)
            continue
        if raw.startswith("--- ") or path is None:
            continue
        hunk = _HUNK.match(raw)
        if hunk:
            line = int(hunk.group(1))
        elif raw.startswith("+"):
            changed.setdefault(path, set()).add(line)
            line += 1
        elif raw.startswith("-"):
            changed.setdefault(path, set()).add(max(line, 1))
            gap = True
        elif raw.startswith(" ") or raw == "":
            line += 1
    return changed
