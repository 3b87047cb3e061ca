"""Edits an answer proposes, as edit blocks, made into unified diffs that apply to the workspace.

Small models cannot write unified diffs: the line numbers and context lines they produce rarely apply.
They can copy the lines they want to change and write the new ones, so the system prompt asks for edit
blocks (the format aider made common)::

    src/pkg/module.py
    <<<<<<< SEARCH
    the exact lines to replace
    =======
    the new lines
    >>>>>>> REPLACE

:func:`propose_edits` parses the blocks of an answer and resolves each against the file's current text
(editor buffers first): the lines as written, then ignoring trailing whitespace, then ignoring a uniform
indentation (the replacement is re-indented to match). A block with no usable path is resolved in the one
file whose text holds its search lines. An empty search creates a new file (or appends to an existing
one). What resolves becomes one unified diff per file, made from the real text, so it applies by
construction; what does not is a named problem ("search text not found in src/x.py"), never dropped.

Small models also answer "here is the updated code": a fenced block holding whole definitions. A block
whose every top-level definition (a function, method or class, found by its first line) is a complete one
(no ``...`` placeholder) replaces the definitions of the same names, located through the workspace's
symbol index (``locate``); a path named on the line before the block picks among same-named ones. A class
with placeholders stands for its members: each complete method in it replaces that method. Quoted code that
equals the file's changes nothing and proposes nothing. When the question or the answer speaks of a rename, a
definition quoted whole under a new name rewrites the one in the named file whose body it repeats.

:func:`propagate_renames` then carries each renamed definition to every use (callers, imports, tests), as an
editor's rename refactoring does, when the old name is defined only once.
A unified diff the answer writes itself is left to the reader (the eval checks it with ``git apply``).
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable

import msgspec

__all__ = ["EditBlock", "Located", "ProposedEdit", "ProposedEdits", "Rename", "defined_names", "named_path",
           "parse_edit_blocks", "propagate_renames", "propose_edits", "renamed_definitions", "unified_diff",
           "whole_file_edit"]

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\b.*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b.*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_PATH = re.compile(r"((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})")


Located = tuple[str, int, int]
"""(path, first line, last line) of a definition, 1-based (``Workspace.find_symbol`` gives these)."""

_DEF = re.compile(r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:static\s+)?(?:async\s+)?"
                  r"(?:def|class|function\*?|fn|func|interface|struct|enum|trait)\s+(?:\([^)]*\)\s*)?"
                  r"([A-Za-z_$][\w$]*)")
_ASSIGNED_FN = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*"
                          r"(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
_METHOD = re.compile(r"^(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?([A-Za-z_$][\w$]*)\s*\([^;]*\)\s*\{\s*$")
_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "else", "with"})
_PLACEHOLDER = re.compile(r"^\s*(?:\.\.\.|…|(?:#|//|/\*)\s*(?:\.\.\.|…|rest of|existing|unchanged|other))",
                          re.IGNORECASE)
_CODE_FENCE = re.compile(r"^(\s*)(```+|~~~+)[ \t]*([\w+#.-]*)[ \t]*$")
_CLOSER = re.compile(r"^[}\])]")


def _def_name(line: str) -> str | None:
    text = line.strip()
    for pattern in (_DEF, _ASSIGNED_FN, _METHOD):
        match = pattern.match(text)
        if match and match.group(1) not in _KEYWORDS:
            return match.group(1)
    return None


class EditBlock(msgspec.Struct, frozen=True, kw_only=True):
    """One SEARCH/REPLACE block as written: ``path`` is None when no line before it names a file."""

    path: str | None
    search: str
    replace: str


class ProposedEdit(msgspec.Struct, frozen=True, kw_only=True):
    """The change to one file: its text before (None: a new file) and after, and the unified diff between."""

    path: str
    old_text: str | None
    new_text: str
    diff: str
    blocks: int
    """How many of the answer's blocks this file's change is made of."""


class ProposedEdits(msgspec.Struct, frozen=True, kw_only=True):
    edits: tuple[ProposedEdit, ...] = ()
    problems: tuple[str, ...] = ()
    """Blocks that did not resolve, each named with why ("search text not found in src/x.py")."""
    notes: tuple[str, ...] = ()
    """What the node did beyond the blocks as written (a rename carried to every use), for explain-context."""

    @property
    def diff(self) -> str:
        """All files' diffs, one patch ``git apply`` takes."""
        return "".join(edit.diff for edit in self.edits)


def _path_in(line: str) -> str | None:
    text = line.strip().strip("*#`:").strip()
    for prefix in ("File:", "file:", "Path:", "path:", "In", "in"):
        if text.startswith(prefix + " "):
            text = text[len(prefix) + 1:].strip().strip("*`:")
    found = _PATH.findall(text)
    return found[-1].removeprefix("./") if found else None


def _strip_fences(lines: list[str]) -> list[str]:
    """A section's lines without a code fence the model wrapped them in."""
    while lines and _FENCE.match(lines[0]):
        lines = lines[1:]
    while lines and _FENCE.match(lines[-1]):
        lines = lines[:-1]
    return lines


def parse_edit_blocks(answer: str) -> list[EditBlock]:
    """The answer's SEARCH/REPLACE blocks in order; the file of each is named on a line just before it (a
    fence line between is skipped), else it is the previous block's file."""
    lines = answer.splitlines()
    blocks: list[EditBlock] = []
    i, last_path = 0, None
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        path = None
        for back in range(i - 1, max(-1, i - 4), -1):
            candidate = lines[back]
            if not candidate.strip() or (_FENCE.match(candidate) and not _path_in(candidate.strip("`~ "))):
                continue
            path = _path_in(candidate.lstrip("`~ ")) if _FENCE.match(candidate) else _path_in(candidate)
            break
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]) and not _SEARCH.match(lines[j]):
            j += 1
        if j >= len(lines) or _SEARCH.match(lines[j]):
            i = j
            continue  # no divider: not a block
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k]) and not _SEARCH.match(lines[k]):
            k += 1
        if k >= len(lines) or _SEARCH.match(lines[k]):  # an unfinished block (the answer was cut) is not an edit
            i = k
            continue
        path = path or last_path
        search = "\n".join(_strip_fences(lines[i + 1:j]))
        replace = "\n".join(_strip_fences(lines[j + 1:k]))
        blocks.append(EditBlock(path=path, search=search, replace=replace))
        last_path = path
        i = k + 1
    return blocks


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _find(text_lines: list[str], search: list[str]) -> tuple[int, int, str | None] | None:
    """(start, end, indentation fix) of ``search`` in ``text_lines``: as written, then ignoring trailing
    whitespace, then ignoring a uniform leading indentation (the fix: the file's indentation of the first
    line, to put before each replacement line instead of the block's)."""
    n = len(search)
    if n == 0 or n > len(text_lines):
        return None
    for norm in (lambda s: s, str.rstrip):
        wanted = [norm(s) for s in search]
        for start in range(len(text_lines) - n + 1):
            if [norm(s) for s in text_lines[start:start + n]] == wanted:
                return start, start + n, None
    wanted = [s.strip() for s in search]
    for start in range(len(text_lines) - n + 1):
        window = text_lines[start:start + n]
        if [s.strip() for s in window] == wanted:
            return start, start + n, _indent(window[0])
    return _find_skipping_blank_lines(text_lines, search)


def _find_skipping_blank_lines(text_lines: list[str], search: list[str]) -> tuple[int, int, str | None] | None:
    """Small models drop the blank lines between the lines they copy: the search's non-blank lines matched
    against the file's non-blank lines (as written but for trailing whitespace, then ignoring a uniform
    indentation); the span runs from the first matched line to the last, blank lines between included."""
    kept = [s for s in search if s.strip()]
    where = [i for i, line in enumerate(text_lines) if line.strip()]
    n = len(kept)
    if n < 2:
        return None
    lines = [text_lines[i] for i in where]
    for norm, fix in ((str.rstrip, False), (str.strip, True)):
        wanted = [norm(s) for s in kept]
        for start in range(len(lines) - n + 1):
            if [norm(s) for s in lines[start:start + n]] == wanted:
                first, last = where[start], where[start + n - 1]
                return first, last + 1, _indent(text_lines[first]) if fix else None
    return None


def _apply(text: str, block: EditBlock) -> str | None:
    """``text`` with ``block`` applied, or None when its search lines are not in it."""
    lines = text.splitlines()
    search = block.search.splitlines()
    while search and not search[0].strip():  # blank lines at a section's ends are the model's layout
        search = search[1:]
    while search and not search[-1].strip():
        search = search[:-1]
    replace = block.replace.splitlines()
    if not search:
        joined = text if not text or text.endswith("\n") else text + "\n"
        return joined + block.replace.rstrip("\n") + "\n"
    found = _find(lines, search)
    if found is None:
        return None
    start, end, indent = found
    if indent is not None:
        base = _indent(search[0])
        replace = [indent + r[len(base):] if r.startswith(base) else indent + r.lstrip() if r.strip() else r
                   for r in replace]
    out = [*lines[:start], *replace, *lines[end:]]
    trailing = "\n" if text.endswith("\n") or not text else ""
    return "\n".join(out) + trailing


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A git-style unified diff of one file (``old`` None: a new file) that ``git apply`` takes."""
    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "")
    body = difflib.unified_diff(lines(old or ""), lines(new), "/dev/null" if old is None else f"a/{path}",
                                f"b/{path}", n=3)
    text = "".join(body)
    return head + text if text else ""


class _Quoted(msgspec.Struct, frozen=True):
    """A fenced code block of the answer: the path (and definition name) on the line before it, its lines."""

    path: str | None
    name: str | None
    lines: list[str]


def _quoted_blocks(answer: str) -> list[_Quoted]:
    """The answer's fenced code blocks that are not diffs or edit blocks."""
    lines = answer.splitlines()
    out: list[_Quoted] = []
    i = 0
    while i < len(lines):
        opening = _CODE_FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, lang = opening.group(2), opening.group(3).lower()
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])):
            j += 1
        body = lines[i + 1:j]
        before = next((lines[b] for b in range(i - 1, max(-1, i - 3), -1) if lines[b].strip()), "")
        name = re.search(r"\(([A-Za-z_$][\w$.]*)\)\s*:?\s*$", before.strip().strip("*#`"))
        if lang not in ("diff", "patch", "udiff") and not any(_SEARCH.match(line) for line in body):
            out.append(_Quoted(path=_path_in(before), name=name.group(1) if name else None, lines=body))
        i = j + 1
    return out


def _segments(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(name, lines) of each definition at the lines' outermost indentation, with the decorators before it
    and the closing brackets after it; other statements at that level end a definition."""
    nonblank = [line for line in lines if line.strip()]
    if not nonblank:
        return []
    base = min(len(_indent(line)) for line in nonblank)
    segments: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    decorators: list[str] = []
    for line in lines:
        if not line.strip():
            if current is not None:
                current[1].append(line)
            continue
        if len(_indent(line)) > base:
            if current is not None:
                current[1].append(line)
            continue
        name = _def_name(line)
        if name is not None:
            if current is not None:
                segments.append(current)
            current, decorators = (name, [*decorators, line]), []
        elif line.strip().startswith("@"):
            if current is not None:
                segments.append(current)
                current = None
            decorators.append(line)
        elif current is not None and _CLOSER.match(line.strip()):
            current[1].append(line)
        else:
            if current is not None:
                segments.append(current)
            current, decorators = None, []
    if current is not None:
        segments.append(current)
    return [(name, _trim(body)) for name, body in segments]


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _complete(lines: list[str]) -> bool:
    return not any(_PLACEHOLDER.match(line) for line in lines)


class _Replacement(msgspec.Struct, frozen=True):
    path: str
    start: int
    """0-based index of the first replaced line."""
    end: int
    """0-based index past the last replaced line."""
    lines: list[str]


def _replacements(quoted: _Quoted, locate: Callable[[str], list[Located]], read: Callable[[str], str | None],
                  problems: list[str], renaming: bool = False) -> list[_Replacement]:
    """The definitions a quoted block replaces, against the files' current text; with ``renaming`` (the answer
    speaks of a rename) a definition quoted under a new name may rewrite the one it renames."""
    def places(name: str, within: Located | None = None) -> list[Located]:
        found = locate(name)
        if within is not None:
            found = [f for f in found if f[0] == within[0] and within[1] <= f[1] and f[2] <= within[2]]
        elif quoted.path is not None:
            hinted = [f for f in found if f[0] == quoted.path or f[0].endswith("/" + quoted.path)]
            found = hinted or found
        return found

    out: list[_Replacement] = []

    def replace(name: str, body: list[str], within: Located | None = None) -> None:
        found = places(name, within)
        if len(found) != 1:
            if len(found) > 1:
                problems.append(f"code block: `{name}` is defined in {len(found)} places; name its file")
            return
        path, first, last = found[0]
        text = read(path)
        if text is None:
            return
        lines = text.splitlines()
        start, end = first - 1, min(last, len(lines))
        if body and body[0].lstrip().startswith("@"):
            while start > 0 and lines[start - 1].lstrip().startswith("@"):
                start -= 1
        head = next((line for line in body if not line.lstrip().startswith("@")), body[0])
        theirs, ours = _indent(head), _indent(lines[first - 1]) if first - 1 < len(lines) else ""
        moved = [ours + line[len(theirs):] if line.startswith(theirs) else (ours + line.lstrip() if line.strip()
                 else "") for line in body]
        if moved != lines[start:end]:
            out.append(_Replacement(path=path, start=start, end=end, lines=moved))

    segments = _segments(quoted.lines)
    if len(segments) == 1 and quoted.name and _complete(segments[0][1]):  # a chunk header names what it rewrites
        named = quoted.name.split(".")[-1]
        if places(named) and named != segments[0][0]:
            replace(named, segments[0][1])
            return out
    for name, body in segments:
        if _complete(body):
            renamed = _renamed_from(quoted.path, name, body, read) if renaming and not locate(name) else None
            replace(renamed or name, body)
        elif _DEF.match(body[0].strip()) and "class " in body[0]:  # a class with placeholders: its methods
            home = places(name)
            if len(home) == 1:
                outer = len(_indent(body[0]))
                inner = [line for line in body[1:] if not line.strip() or len(_indent(line)) > outer]
                for member, member_body in _segments(inner):
                    if _complete(member_body):
                        replace(member, member_body, within=home[0])
    return out


def _renamed_from(path: str | None, name: str, body: list[str], read: Callable[[str], str | None]) -> str | None:
    """The definition of the file at ``path`` that a quoted definition of the new name ``name`` rewrites: "here is
    the renamed function" quotes it whole under its new name. The one definition there of the same kind whose
    following lines are the quoted body (a ``difflib`` ratio of at least 0.9 once the new name in the body is
    read as the old one), else None: a new function that merely resembles an old one is not a rename."""
    text = read(path) if path is not None else None
    head = next((line for line in body if not line.lstrip().startswith("@")), "")
    want = [line.strip() for line in body[body.index(head) + 1:] if line.strip()] if head else []
    if text is None or not want:
        return None
    keyword = head.strip().split(name)[0]
    lines = text.splitlines()
    found: list[tuple[float, str]] = []
    for i, line in enumerate(lines):
        other = _def_name(line)
        if other is None or other == name or line.strip().split(other)[0] != keyword:
            continue
        following = [x.strip() for x in lines[i + 1:i + 1 + 3 * len(want)] if x.strip()][:len(want)]
        quoted = re.sub(rf"(?<![\w$]){re.escape(name)}(?![\w$])", other, "\n".join(want))
        ratio = difflib.SequenceMatcher(a=quoted, b="\n".join(following), autojunk=False).ratio()
        if ratio >= 0.9:
            found.append((ratio, other))
    found.sort(reverse=True)
    if not found or (len(found) > 1 and found[1][0] == found[0][0]):
        return None
    return found[0][1]


def _apply_replacements(text: str, replacements: list[_Replacement]) -> str | None:
    """``text`` with the replacements made (bottom up); None when two overlap."""
    lines = text.splitlines()
    ordered = sorted(replacements, key=lambda r: r.start, reverse=True)
    for later, earlier in itertools.pairwise(ordered):
        if earlier.end > later.start:
            return None
    for r in ordered:
        lines[r.start:r.end] = r.lines
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def propose_edits(answer: str, read: Callable[[str], str | None], paths: Iterable[str],
                  locate: Callable[[str], list[Located]] | None = None, shown: Iterable[str] = (),
                  question: str = "") -> ProposedEdits:
    """The answer's edits resolved against the workspace: ``read(path)`` is a file's current text (None: no
    such file), ``paths`` the workspace's files (to find a block's file by its text, or by a name the model
    shortened), ``locate(name)`` where a definition of that name is (for quoted whole definitions), ``shown``
    the files whose code the prompt held: a block without a usable path is looked for there (the model copies
    lines it saw; a large workspace is not read file by file after every answer), else in ``paths``;
    ``question`` what the answer answers (a rename asked for lets a definition quoted under a new name rename)."""
    blocks = parse_edit_blocks(answer)
    quoted = _quoted_blocks(answer) if locate is not None else []
    renaming = re.search(r"\brenam", question + "\n" + answer, re.IGNORECASE) is not None
    if not blocks and not quoted:
        return ProposedEdits()
    known = list(paths)
    holder_paths = list(shown) or known
    texts: dict[str, str | None] = {}
    original: dict[str, str | None] = {}
    counts: dict[str, int] = {}
    problems: list[str] = []

    def current(path: str) -> str | None:
        if path not in texts:
            texts[path] = original[path] = read(path)
        return texts[path]

    by_path: dict[str, list[_Replacement]] = {}
    for code in quoted:
        assert locate is not None
        for replacement in _replacements(code, locate, current, problems, renaming):
            by_path.setdefault(replacement.path, []).append(replacement)
    for path, replacements in by_path.items():
        updated = _apply_replacements(current(path) or "", replacements)
        if updated is None:
            problems.append(f"{path}: code blocks rewrite overlapping definitions")
            continue
        texts[path] = updated
        counts[path] = len(replacements)

    def resolve_path(block: EditBlock) -> str | None:
        if block.path is not None:
            if block.path in known or current(block.path) is not None:
                return block.path
            suffix = [p for p in known if p.endswith("/" + block.path)]
            if len(suffix) == 1:
                return suffix[0]
            if not block.search.strip():
                return block.path  # a new file
        return holder(block)

    def holder(block: EditBlock) -> str | None:
        if not block.search.strip():
            return None
        holders = [p for p in holder_paths if (text := current(p)) is not None and _apply(text, block) is not None]
        return holders[0] if len(holders) == 1 else None

    for number, block in enumerate(blocks, 1):
        resolved = resolve_path(block)
        if resolved is None:
            named = f" ({block.path})" if block.path else ""
            problems.append(f"edit block {number}{named}: no workspace file holds its search lines")
            continue
        path = resolved
        text = current(path)
        updated = _apply(text or "", block) if text is not None or not block.search.strip() else None
        if updated is None and (other := holder(block)) is not None:  # the file was misnamed or not repeated
            path, updated = other, _apply(current(other) or "", block)
        if updated is None:
            problems.append(f"edit block {number}: its search lines are not in {path}")
            continue
        texts[path] = updated
        counts[path] = counts.get(path, 0) + 1
    edits = []
    for path, count in counts.items():
        new = texts[path] or ""
        diff = unified_diff(path, original[path], new)
        if diff:
            edits.append(ProposedEdit(path=path, old_text=original[path], new_text=new, diff=diff, blocks=count))
        else:
            problems.append(f"{path}: the edit blocks change nothing")
    return ProposedEdits(edits=tuple(edits), problems=tuple(problems))


def named_path(line: str) -> str | None:
    """The file a line before a code block names ("In `pkg/mod.py`:", "**mod.py**"), as the resolver reads it."""
    return _path_in(line)


def defined_names(code: str) -> list[str]:
    """The names of the definitions at a code block's outermost level, in order (once each)."""
    return list(dict.fromkeys(name for name, _ in _segments(code.splitlines())))


def whole_file_edit(path: str, old: str | None, code: str) -> ProposedEdit | None:
    """``code`` as the whole new text of ``path`` (``old`` None: a new file), when it is one: no ``...``
    placeholder, and for an existing file every definition at its outermost level still there and at least 60% of
    its lines with its first line or half its lines kept (a whole rewrite of a file, not a snippet of it, nor a
    block that would drop a definition it does not show). None when it is not, or changes nothing."""
    new = code if code.endswith("\n") or not code else code + "\n"
    lines = [line for line in new.splitlines() if line.strip()]
    if not lines or not _complete(lines):
        return None
    if old is not None:
        before = [line for line in old.splitlines() if line.strip()]
        if before:
            if len(lines) < 0.6 * len(before) or not set(defined_names(old)) <= set(defined_names(new)):
                return None
            same_start = before[0].strip() == lines[0].strip()
            kept = difflib.SequenceMatcher(a=[x.strip() for x in before], b=[x.strip() for x in lines],
                                           autojunk=False).ratio()
            if not same_start and kept < 0.5:
                return None
    diff = unified_diff(path, old, new)
    return ProposedEdit(path=path, old_text=old, new_text=new, diff=diff, blocks=1) if diff else None


Rename = Callable[[str, str, str, str, bool], tuple[str, int]]
"""``rename(path, text, old, new, defining)``: the file's text with the identifier renamed, and how many
places changed (``contenox.workspace.rename_identifier``, by syntax tree; 0 where the file does not use it)."""


def renamed_definitions(old_text: str, new_text: str) -> list[tuple[str, str]]:
    """(old name, new name) of each definition whose first line the change renames: a changed line that
    defines one name before and another after (``def old(`` -> ``def new(``), in order, once each."""
    before, after = old_text.split("\n"), new_text.split("\n")
    pairs: dict[tuple[str, str], None] = {}
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        for a, b in zip(before[i1:i2], after[j1:j2], strict=False):
            old, new = _def_name(a), _def_name(b)
            if old and new and old != new and _indent(a) == _indent(b):
                pairs[(old, new)] = None
    return list(pairs)


def propagate_renames(proposed: ProposedEdits, locate: Callable[[str], list[Located]],
                      users: Callable[[str], Iterable[str]], read: Callable[[str], str | None],
                      rename: Rename) -> ProposedEdits:
    """The edits with each renamed definition renamed at every use too, like an editor's rename refactoring:
    an answer that renames ``def old`` (small models rarely find every caller) has its callers, imports and
    tests follow. Carried only when the name is defined once in the workspace, in the edited file, and the
    new name nowhere (else the rename is left as written and a note says why); ``users(name)`` are the files
    holding the word. Each carried rename is a note for explain-context."""
    texts = {edit.path: edit.new_text for edit in proposed.edits}
    originals = {edit.path: edit.old_text for edit in proposed.edits}
    notes = list(proposed.notes)
    for edit in proposed.edits:
        if edit.old_text is None:
            continue
        for old, new in renamed_definitions(edit.old_text, edit.new_text):
            defined = locate(old)
            if len(defined) > 1:
                notes.append(f"rename of `{old}` to `{new}` left as written: `{old}` is defined in "
                             f"{len(defined)} places, so its uses are ambiguous")
                continue
            if not defined or defined[0][0] != edit.path:
                notes.append(f"rename of `{old}` to `{new}` left as written: the symbol index has no definition "
                             f"of `{old}` in {edit.path}")
                continue
            if locate(new):
                notes.append(f"rename of `{old}` to `{new}` left as written: `{new}` is already defined")
                continue
            changed: dict[str, int] = {}
            left: list[str] = []
            for path in dict.fromkeys([edit.path, *users(old)]):
                current = texts[path] if path in texts else read(path)
                if current is None:
                    continue
                text, count = rename(path, current, old, new, path == edit.path)
                if count:
                    originals.setdefault(path, current)
                    texts[path] = text
                    changed[path] = count
                elif path != edit.path:
                    left.append(path)
            if changed:
                places = ", ".join(f"{path} ({count})" for path, count in changed.items())
                notes.append(f"rename of `{old}` to `{new}` carried to every use: {sum(changed.values())} more "
                             f"place(s): {places}")
            if left:
                notes.append(f"rename of `{old}` not carried into {', '.join(left)}: the name is there but not "
                             "imported (a comment, a string, another object's attribute or a local); check them")
    if len(notes) == len(proposed.notes):
        return proposed
    blocks = {edit.path: edit.blocks for edit in proposed.edits}
    edits = []
    for path, text in texts.items():
        diff = unified_diff(path, originals[path], text)
        if diff:
            edits.append(ProposedEdit(path=path, old_text=originals[path], new_text=text, diff=diff,
                                      blocks=blocks.get(path, 0)))
    return ProposedEdits(edits=tuple(edits), problems=proposed.problems, notes=tuple(notes))
