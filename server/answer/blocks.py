"""Edit blocks: the SEARCH/REPLACE form an answer writes its changes in, parsed and laid on a file's text.

Small models cannot write unified diffs: the line numbers and context lines they produce rarely apply.
They can copy the lines they want to change and write the new ones, so the system prompt asks for edit
blocks (the format aider made common)::

    src/pkg/module.py
    <<<<<<< SEARCH
    the exact lines to replace
    =======
    the new lines
    >>>>>>> REPLACE

:func:`parse_edit_blocks` reads them; :func:`apply_block` finds a block's search lines in a file's text: as
written, then ignoring trailing whitespace, then ignoring a uniform indentation (the replacement is
re-indented to match), then skipping blank lines. Resolving them against the workspace is
:mod:`contenox.answer.resolve`'s.
"""

from __future__ import annotations

import re

from contenox.answer.edits import EditBlock, indent_of

__all__ = ["SEARCH_LINE", "apply_block", "named_path", "parse_edit_blocks", "path_in"]

SEARCH_LINE = re.compile(r"^\s*<{5,9} ?SEARCH\b.*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b.*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_PATH = re.compile(r"((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})")


def path_in(line: str) -> str | None:
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
        if not SEARCH_LINE.match(lines[i]):
            i += 1
            continue
        path = None
        for back in range(i - 1, max(-1, i - 4), -1):
            candidate = lines[back]
            if not candidate.strip() or (_FENCE.match(candidate) and not path_in(candidate.strip("`~ "))):
                continue
            path = path_in(candidate.lstrip("`~ ")) if _FENCE.match(candidate) else path_in(candidate)
            break
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]) and not SEARCH_LINE.match(lines[j]):
            j += 1
        if j >= len(lines) or SEARCH_LINE.match(lines[j]):
            i = j
            continue  # no divider: not a block
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k]) and not SEARCH_LINE.match(lines[k]):
            k += 1
        if k >= len(lines) or SEARCH_LINE.match(lines[k]):  # an unfinished block (the answer was cut) is not an edit
            i = k
            continue
        path = path or last_path
        search = "\n".join(_strip_fences(lines[i + 1:j]))
        replace = "\n".join(_strip_fences(lines[j + 1:k]))
        blocks.append(EditBlock(path=path, search=search, replace=replace))
        last_path = path
        i = k + 1
    return blocks


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
            return start, start + n, indent_of(window[0])
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
                return first, last + 1, indent_of(text_lines[first]) if fix else None
    return None


def apply_block(text: str, block: EditBlock) -> str | None:
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
        base = indent_of(search[0])
        replace = [indent + r[len(base):] if r.startswith(base) else indent + r.lstrip() if r.strip() else r
                   for r in replace]
    out = [*lines[:start], *replace, *lines[end:]]
    trailing = "\n" if text.endswith("\n") or not text else ""
    return "\n".join(out) + trailing


def named_path(line: str) -> str | None:
    """The file a line before a code block names ("In `pkg/mod.py`:", "**mod.py**"), as the resolver reads it."""
    return path_in(line)
