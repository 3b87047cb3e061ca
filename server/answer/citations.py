"""What an answer cites, checked against the workspace: real files, symbols and lines, and invented ones.

An answer names files (``itsdangerous/signer.py``, ``signer.py:120``) and code symbols (in backticks,
``Signer.unsign``, ``derive_key()``). Each is looked up through the workspace: a path is real when the
workspace indexes a file that ends with it (``signer.py`` for ``itsdangerous/signer.py``), a ``path:line`` when the
line exists, a symbol when the workspace defines or uses it. The rest is reported as unknown, which is
how invented functions and exceptions show up in explain-context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Protocol

import msgspec

__all__ = ["Citations", "WorkspaceFacts", "check_citations", "cited_paths", "cited_symbols"]


class Citations(msgspec.Struct, frozen=True, kw_only=True):
    """The files, symbols and line ranges an answer names, checked against the workspace."""

    files_real: tuple[str, ...] = ()
    files_unknown: tuple[str, ...] = ()
    """Paths the answer names that are not in the workspace (invented, or outside it)."""
    symbols_real: tuple[str, ...] = ()
    symbols_unknown: tuple[str, ...] = ()
    """Code names the answer presents as the workspace's that nothing in it defines or uses."""
    lines_unknown: tuple[str, ...] = ()
    """``path:line`` references past the end of their file."""

    @property
    def real(self) -> int:
        return len(self.files_real) + len(self.symbols_real)

    @property
    def unknown(self) -> int:
        return len(self.files_unknown) + len(self.symbols_unknown) + len(self.lines_unknown)

    def summary(self) -> str:
        """``cited: N real, M unknown`` and the unknown names (the invented ones)."""
        text = f"cited: {self.real} real, {self.unknown} unknown"
        flagged = [*self.files_unknown, *self.symbols_unknown, *self.lines_unknown]
        return text + (" (" + ", ".join(flagged[:8]) + (" ..." if len(flagged) > 8 else "") + ")" if flagged else "")


_EXT = r"(?:py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|cxx|md|toml|json|cfg|ini|yaml|yml|txt|rst)"
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\." + _EXT + r")(?::(\d+)(?:[-–](\d+))?)?(?![\w/])")
_TICKED = re.compile(r"`([^`\n]{1,120})`")
_CALL = re.compile(r"(?<![\w.`])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(\)")
_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?$")
_COMMON = frozenset("""
self cls None True False none true false null undefined this super print len str int float bool list dict set
tuple bytes object type isinstance range open return yield import from def class async await if else elif for
while try except finally with raise pass break continue lambda and or not in is new var let const function
string number boolean any void error err nil main test tests args kwargs value values key keys data result
""".split())


class WorkspaceFacts(Protocol):
    """The lookups the check needs (``contenox.workspace.Workspace`` provides them)."""

    def file_lines(self, rel_path: str) -> int | None: ...

    def indexed_paths(self) -> Iterable[str]: ...

    def knows_symbol(self, name: str) -> bool: ...


def cited_paths(text: str) -> list[tuple[str, int | None, int | None]]:
    """(path, first line, last line) of every file reference in ``text``, in order, without repeats."""
    seen: dict[tuple[str, int | None, int | None], None] = {}
    for match in _PATH.finditer(text):
        path = match.group(1).removeprefix("./")
        first = int(match.group(2)) if match.group(2) else None
        last = int(match.group(3)) if match.group(3) else first
        seen.setdefault((path, first, last), None)
    return list(seen)


def _code_like(raw: str) -> bool:
    """A name only code has: a call (``f()``), dotted, snake_case or CamelCase. A plain lowercase word in
    backticks (``binascii``, ``hexdump``) may be a module, a tool or a package, not a claim about the code."""
    name = raw.removesuffix("()")
    return raw.endswith("()") or "." in name or "_" in name.strip("_") or any(c.isupper() for c in name)


def cited_symbols(text: str) -> list[str]:
    """Code names the answer presents (in backticks, or written as calls ``name()``), in order."""
    names: dict[str, None] = {}
    candidates = [m.group(1).strip() for m in _TICKED.finditer(text)] + [m.group(1) + "()" for m in
                                                                         _CALL.finditer(text)]
    for raw in candidates:
        if not _NAME.match(raw) or _PATH.fullmatch(raw) or not _code_like(raw):
            continue
        name = raw.removesuffix("()")
        if name.split(".")[-1].lower() in _COMMON or len(name) < 3:
            continue
        names.setdefault(name, None)
    return list(names)


def _resolve(path: str, known: set[str], by_name: dict[str, list[str]]) -> str | None:
    """The indexed path ``path`` names (a partial path names the one file it ends; when several files
    end with it, it stays as written), or None when no indexed file ends with it."""
    if path in known:
        return path
    matches = [p for p in by_name.get(path.rsplit("/", 1)[-1], []) if p.endswith("/" + path)]
    if not matches:
        return None
    return matches[0] if len(matches) == 1 else path


def check_citations(text: str, facts: WorkspaceFacts,
                    known_paths: Callable[[], Iterable[str]] | None = None) -> Citations:
    """The answer's citations sorted into real and unknown (see the module docstring)."""
    known = set(known_paths() if known_paths else facts.indexed_paths())
    by_name: dict[str, list[str]] = {}
    for rel in known:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    files_real: dict[str, None] = {}
    files_unknown: dict[str, None] = {}
    lines_unknown: dict[str, None] = {}
    for path, first, last in cited_paths(text):
        found = _resolve(path, known, by_name)
        if found is None:
            files_unknown.setdefault(path, None)
            continue
        rel = found
        files_real.setdefault(rel, None)
        if first is not None and rel in known:
            count = facts.file_lines(rel)
            if count is not None and max(first, last or first) > count:
                lines_unknown.setdefault(f"{rel}:{first}" + (f"-{last}" if last and last != first else ""), None)
    symbols_real: list[str] = []
    symbols_unknown: list[str] = []
    for name in cited_symbols(text):
        parts = name.split(".")
        if facts.knows_symbol(name) or facts.knows_symbol(parts[-1]):
            symbols_real.append(name)
        elif len(parts) > 1 and all(not p[:1].isupper() for p in parts[:-1]) and not facts.knows_symbol(parts[0]):
            continue  # module.function of something outside the workspace (hmac.compare_digest): not a claim
        else:
            symbols_unknown.append(name)
    return Citations(files_real=tuple(files_real), files_unknown=tuple(files_unknown),
                     symbols_real=tuple(symbols_real), symbols_unknown=tuple(symbols_unknown),
                     lines_unknown=tuple(lines_unknown))
