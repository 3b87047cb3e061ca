"""An answer's changes resolved against the workspace: :func:`propose_edits`.

Each edit block (:mod:`contenox.answer.blocks`) is resolved against the file's current text (editor buffers
first). A block with no usable path is resolved in the one file whose text holds its search lines. An empty
search creates a new file (or appends to an existing one). What resolves becomes one unified diff per file, made
from the real text, so it applies by construction; what does not is a named problem ("search text not found in
src/x.py"), never dropped.

Small models also answer "here is the updated code": a fenced block holding whole definitions. A block
whose every top-level definition (a function, method or class, found by its first line) is a complete one
(no ``...`` placeholder) replaces the definitions of the same names, located through the workspace's
symbol index (``locate``); a path named on the line before the block picks among same-named ones. A class
with placeholders stands for its members: each complete method in it replaces that method; so does a class
quoted without some of its methods (the prompt shows a class's head and its methods as chunks of their own): what
it shows replaces the class's own (its head, the methods quoted), the methods it leaves out are kept, and
explain-context names them. Quoted code that equals the file's changes nothing and proposes nothing, nor does the
unchanged beginning of a definition (a long one as retrieval cut it, a class's head): that is a citation, named.
When the question or the answer speaks of a rename, a definition quoted whole under a new name rewrites the one in
the named file whose body it repeats.

A complete definition of a name the workspace does not define ("add rename_key next to set_key" answered with
the new function whole), and whose body does not repeat a definition of its file, is added to the file named on
the line before the block or in a path comment on its first line (``# src/pkg/main.py``): after the definition
the answer quoted just before it in that file, else at the end of the file (before a ``if __name__ ==
"__main__":`` block or a closing ``module.exports``), several in the order quoted; a new method of a class quoted
with placeholders goes at the end of that class. Without a named file it is not placed. A block whose closing
fence never came (the answer was cut at its token limit) may end in a cut definition: its last definition is not
used.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable

import msgspec

from contenox.answer.blocks import SEARCH_LINE, apply_block, parse_edit_blocks, path_in
from contenox.answer.edits import (
    DEFINITION_LINE,
    EditBlock,
    Located,
    ProposedEdit,
    ProposedEdits,
    definition_name,
    indent_of,
    unified_diff,
)

__all__ = ["defined_names", "propose_edits", "whole_file_edit"]

_PLACEHOLDER = re.compile(r"^\s*(?:\.\.\.|…|(?:#|//|/\*)\s*(?:\.\.\.|…|rest of|existing|unchanged|other))",
                          re.IGNORECASE)
_CODE_FENCE = re.compile(r"^(\s*)(```+|~~~+)[ \t]*([\w+#.-]*)[ \t]*$")
_CLOSER = re.compile(r"^[}\])]")
_PATH_COMMENT = re.compile(r"^\s*(?:#|//|/\*|--)\s*(?:(?:File|file|Path|path)\s*:\s*)?([\w./-]+\.[A-Za-z0-9]{1,8})\s*(?:\*/)?\s*$")
"""A block's first line that only names its file, as a comment: ``# src/pkg/main.py``, ``// lib/x.js``."""
_TAIL = re.compile(r"^(?:if\s+__name__\s*==\s*['\"]__main__['\"]\s*:|module\.exports\b|export\s+default\b)")
"""A file's closing statement that a definition added at its end goes before."""


class _Quoted(msgspec.Struct, frozen=True):
    """A fenced code block of the answer: the path (and definition name) on the line before it, its lines."""

    path: str | None
    name: str | None
    lines: list[str]
    closed: bool = True
    """False when the answer ended before the block's closing fence (cut at its token limit)."""


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
        commented = _PATH_COMMENT.match(body[0]) if body else None
        path = path_in(before) or (commented.group(1).removeprefix("./") if commented else None)
        if lang not in ("diff", "patch", "udiff") and not any(SEARCH_LINE.match(line) for line in body):
            out.append(_Quoted(path=path, name=name.group(1) if name else None, lines=body, closed=j < len(lines)))
        i = j + 1
    return out


def _segments(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(name, lines) of each definition at the lines' outermost indentation, with the decorators before it
    and the closing brackets after it; other statements at that level end a definition."""
    nonblank = [line for line in lines if line.strip()]
    if not nonblank:
        return []
    base = min(len(indent_of(line)) for line in nonblank)
    segments: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    decorators: list[str] = []
    for line in lines:
        if not line.strip():
            if current is not None:
                current[1].append(line)
            continue
        if len(indent_of(line)) > base:
            if current is not None:
                current[1].append(line)
            continue
        name = definition_name(line)
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
                  problems: list[str], renaming: bool = False, known: list[str] | None = None,
                  after: dict[str, int] | None = None) -> list[_Replacement]:
    """The definitions a quoted block replaces or adds, against the files' current text; with ``renaming`` (the
    answer speaks of a rename) a definition quoted under a new name may rewrite the one it renames. ``known``: the
    workspace's files (a shortened path in the block's header is one of them); ``after``: per file, the line index
    past the definition the answer quoted last there (a new definition goes after it), kept across blocks."""
    after = {} if after is None else after
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
        theirs, ours = indent_of(head), indent_of(lines[first - 1]) if first - 1 < len(lines) else ""
        moved = _indented(body, theirs, ours)
        after[path] = end
        if (shown := _beginning(moved, lines[start:end])) is not None:
            problems.append(f"code block: `{name}` quoted as far as the prompt may show it (its first {shown[0]} of "
                            f"{shown[1]} lines, unchanged): not a change")
            return
        if moved != lines[start:end]:
            out.append(_Replacement(path=path, start=start, end=end, lines=moved))

    def replace_head(body: list[str], home: Located) -> None:
        """A class's lines before its first member (its line, docstring, fields) rewritten by the quote's."""
        text = read(home[0])
        if text is None:
            return
        lines = text.splitlines()
        real = lines[home[1] - 1:min(home[2], len(lines))]
        ours_head, theirs_head = _class_head(real), _class_head(body)
        moved = _indented(theirs_head, indent_of(body[0]), indent_of(real[0]))
        if [x.rstrip() for x in moved if x.strip()] != [x.rstrip() for x in ours_head if x.strip()]:
            start = home[1] - 1
            out.append(_Replacement(path=home[0], start=start, end=start + len(_trim(ours_head)),
                                    lines=_trim(moved)))

    def add(name: str, body: list[str], home: Located | None = None) -> None:
        """A new definition: at the end of the class ``home``, else in the block's file (see the module doc)."""
        path = home[0] if home is not None else _home_file(quoted.path, read, known or [])
        text = read(path) if path is not None else None
        if path is None or text is None:
            return
        lines = text.splitlines()
        head = next((line for line in body if not line.lstrip().startswith("@")), body[0])
        if home is not None:  # a method: before the class's closing brace, or after its last line
            last = min(home[2], len(lines))
            at = last - 1 if last > home[1] and _CLOSER.match(lines[last - 1].strip()) else last
            member = next((line for line in lines[home[1]:at] if line.strip()), "")
            ours, gap = indent_of(member) or indent_of(lines[home[1] - 1]) + "    ", 1
        else:
            ours, gap = "", 2 if path.endswith((".py", ".pyi")) else 1
            at = after.get(path, -1)
            if at < 0:  # the end of the file, before its closing statement
                tail = next((i for i in range(len(lines) - 1, -1, -1) if _TAIL.match(lines[i])), len(lines))
                at = tail
                while at > 0 and not lines[at - 1].strip():
                    at -= 1
        after[path] = at
        out.append(_Replacement(path=path, start=at, end=at, lines=[""] * gap + _indented(body, indent_of(head), ours)))

    segments = _segments(quoted.lines)
    if not quoted.closed and segments:  # the answer was cut before the block closed: its last definition may be too
        problems.append(f"code block: `{segments[-1][0]}` not used: the answer was cut inside it (its block never "
                        "closed)")
        segments = segments[:-1]
    if len(segments) == 1 and quoted.name and _complete(segments[0][1]):  # a chunk header names what it rewrites
        named = quoted.name.split(".")[-1]
        if places(named) and named != segments[0][0]:
            replace(named, segments[0][1])
            return out
    for name, body in segments:
        if _complete(body) and (dropped := _members_left_out(name, body, places, read)):
            # a class quoted without some of its methods (as the prompt shows a class: its head, its methods in
            # chunks of their own) stands for what it shows: the methods it leaves out are kept, not deleted
            held = places(name)[0]
            problems.append(f"code block: class `{name}` quoted without its {', '.join(dropped)}: kept; what it "
                            "shows replaces the class's own")
            at = len(body) - len(_undecorated(body))
            replace_head(body[at:], held)
            body = [*body[:at + 1], indent_of(body[at]) + "    ...", *body[at + 1:]]
        if _complete(body):
            if locate(name):
                replace(name, body)
            elif (renamed := _renamed_from(quoted.path, name, body, read)) is None:
                add(name, body)
            elif renaming:
                replace(renamed, body)
            # else: an existing definition repeated under a new name, no rename spoken of: neither a rename nor new
        elif DEFINITION_LINE.match((own := _undecorated(body))[0].strip()) and "class " in own[0]:
            home = places(name)  # a class with placeholders: its methods
            if len(home) == 1:
                outer = len(indent_of(own[0]))
                inner = [line for line in own[1:] if not line.strip() or len(indent_of(line)) > outer]
                for member, member_body in _segments(inner):
                    if not _complete(member_body):
                        continue
                    if places(member, within=home[0]):
                        replace(member, member_body, within=home[0])
                    elif DEFINITION_LINE.match(member_body[0].strip()) or definition_name(member_body[0]) == member:
                        add(member, member_body, home=home[0])
    return out


def _beginning(quoted: list[str], real: list[str]) -> tuple[int, int] | None:
    """(k, n) when the quoted definition is the first k of the real one's n non-blank lines, k < n, unchanged: the
    beginning of a long definition as the prompt showed it (retrieval cuts a large one, and shows a class's head
    apart from its methods), a citation and not a change that would delete the rest; None otherwise."""
    want = [line.rstrip() for line in quoted if line.strip()]
    have = [line.rstrip() for line in real if line.strip()]
    if want and len(want) < len(have) and have[:len(want)] == want:
        return len(want), len(have)
    return None


def _undecorated(lines: list[str]) -> list[str]:
    """A quoted definition from its own line on (the decorators before it dropped)."""
    return list(itertools.dropwhile(lambda line: line.lstrip().startswith("@"), lines))


def _members(lines: list[str]) -> list[str]:
    """The names of a class's members (methods, nested definitions) in its lines (the class line first)."""
    outer = len(indent_of(lines[0])) if lines else 0
    inner = [line for line in lines[1:] if not line.strip() or len(indent_of(line)) > outer]
    return [name for name, _ in _segments(inner)]


def _class_head(lines: list[str]) -> list[str]:
    """A class's lines before its first member definition (or a decorator of one): its line, docstring, fields."""
    outer = len(indent_of(lines[0])) if lines else 0
    for i, line in enumerate(lines[1:], 1):
        if line.strip() and len(indent_of(line)) > outer and (definition_name(line) is not None
                                                               or line.strip().startswith("@")):
            return lines[:i]
    return lines


def _members_left_out(name: str, body: list[str], places: Callable[[str], list[Located]],
                      read: Callable[[str], str | None]) -> list[str]:
    """The methods of the class ``name`` (located once) that its complete quote ``body`` does not show; [] for
    anything else (not a class, a quote that is only the class's unchanged beginning, all its methods shown)."""
    body = _undecorated(body)
    if not body or "class " not in body[0]:
        return []
    found = places(name)
    text = read(found[0][0]) if len(found) == 1 else None
    if text is None:
        return []
    lines = text.splitlines()
    real = lines[found[0][1] - 1:min(found[0][2], len(lines))]
    if not real or _beginning(_indented(body, indent_of(body[0]), indent_of(real[0])), real) is not None:
        return []
    shown = set(_members(body))
    return [member for member in _members(real) if member not in shown]


def _indented(body: list[str], theirs: str, ours: str) -> list[str]:
    """``body`` moved from the indentation ``theirs`` to ``ours``."""
    return [ours + line[len(theirs):] if line.startswith(theirs) else (ours + line.lstrip() if line.strip() else "")
            for line in body]


def _home_file(path: str | None, read: Callable[[str], str | None], known: list[str]) -> str | None:
    """The workspace file a block names: as written, else the one file whose path ends with it (a path the
    model shortened); None where none or several."""
    if path is None:
        return None
    if path in known or read(path) is not None:
        return path
    suffix = [p for p in known if p.endswith("/" + path)]
    return suffix[0] if len(suffix) == 1 else None


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
        other = definition_name(line)
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
    """``text`` with the replacements made (bottom up; of two additions at one line, the first given goes first);
    None when two overlap."""
    lines = text.splitlines()
    ordered = [r for _, r in sorted(enumerate(replacements), key=lambda p: (p[1].start, p[1].end, p[0]), reverse=True)]
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
    after: dict[str, int] = {}
    for code in quoted:
        assert locate is not None
        for replacement in _replacements(code, locate, current, problems, renaming, known, after):
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
            if (found := _home_file(block.path, current, known)) is not None:
                return found
            if not block.search.strip():
                return block.path  # a new file
        return holder(block)

    def holder(block: EditBlock) -> str | None:
        if not block.search.strip():
            return None
        holders = [p for p in holder_paths if (text := current(p)) is not None and apply_block(text, block) is not None]
        return holders[0] if len(holders) == 1 else None

    for number, block in enumerate(blocks, 1):
        resolved = resolve_path(block)
        if resolved is None:
            named = f" ({block.path})" if block.path else ""
            problems.append(f"edit block {number}{named}: no workspace file holds its search lines")
            continue
        path = resolved
        text = current(path)
        updated = apply_block(text or "", block) if text is not None or not block.search.strip() else None
        if updated is None and (other := holder(block)) is not None:  # the file was misnamed or not repeated
            path, updated = other, apply_block(current(other) or "", block)
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
