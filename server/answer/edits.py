"""The edit model every answer format resolves to, and its one applier.

An answer proposes changes as edit blocks (:mod:`contenox.answer.blocks`), as whole definitions quoted in a fenced
block (:mod:`contenox.answer.resolve`) or, from the tool loop, as a unified diff (:mod:`contenox.answer.udiff`);
each becomes a :class:`ProposedEdit` per file: the file's text before (None: a new file) and after (None: the file
is deleted, as a rename that moves its file does), and the diff between, made from the real text so it applies by
construction. :func:`apply_edit` is the one way an edit is laid on a file's current text, wherever it is written
(the CLI's ``--apply``, the ACP writer, the scratch copy a verification checks): it checks that the file still
holds the text the edit was made from.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

import msgspec

from contenox.errors import StaleEdit

__all__ = ["DEFINITION_LINE", "EditBlock", "EditLike", "Located", "ProposedEdit", "ProposedEdits", "apply_edit", "definition_name",
           "first_changed_line", "indent_of", "remade", "unified_diff"]

Located = tuple[str, int, int]
"""(path, first line, last line) of a definition, 1-based (``Workspace.find_symbol`` gives these)."""

DEFINITION_LINE = re.compile(r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:static\s+)?(?:async\s+)?"
                  r"(?:def|class|function\*?|fn|func|interface|struct|enum|trait)\s+(?:\([^)]*\)\s*)?"
                  r"([A-Za-z_$][\w$]*)")
_ASSIGNED_FN = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*"
                          r"(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
_METHOD = re.compile(r"^(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?([A-Za-z_$][\w$]*)\s*\([^;]*\)\s*\{\s*$")
_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "else", "with"})


def definition_name(line: str) -> str | None:
    text = line.strip()
    for pattern in (DEFINITION_LINE, _ASSIGNED_FN, _METHOD):
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
    """The change to one file: its text before (None: a new file) and after (None: the file is deleted), and the
    unified diff between."""

    path: str
    old_text: str | None
    new_text: str | None
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


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A git-style unified diff of one file (``old`` None: a new file; ``new`` None: a deleted one) that
    ``git apply`` takes."""
    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else
                                                "deleted file mode 100644\n" if new is None else "")
    body = difflib.unified_diff(lines(old or ""), lines(new or ""), "/dev/null" if old is None else f"a/{path}",
                                "/dev/null" if new is None else f"b/{path}", n=3)
    text = "".join(body)
    return head + text if text else ""


class EditLike(Protocol):
    """What the applier needs of an edit (a :class:`ProposedEdit`, the scratch copy's ``EditLike``)."""

    @property
    def path(self) -> str: ...

    @property
    def old_text(self) -> str | None: ...

    @property
    def new_text(self) -> str | None: ...


def apply_edit(edit: EditLike, current: str | None) -> str | None:
    """The file's new text (None: delete it): ``edit.new_text`` when ``current`` (the file's text now; None: no
    such file) is the text the edit was made from; else :class:`StaleEdit`."""
    if current != edit.old_text:
        raise StaleEdit(f"{edit.path} changed since the edit was proposed; ask again", path=edit.path)
    return edit.new_text


def remade(proposed: ProposedEdits, texts: Mapping[str, str | None], originals: Mapping[str, str | None],
           notes: Sequence[str]) -> ProposedEdits:
    """``proposed`` remade from each file's text after (``texts``) and before (``originals``), its problems kept and
    ``notes`` its notes: what a step that changes more files than the answer's blocks (a rename carried, an import
    added, a file moved) returns; a text None deletes its file. A file whose text is unchanged has no edit."""
    blocks = {edit.path: edit.blocks for edit in proposed.edits}
    edits = []
    for path, text in texts.items():
        if diff := unified_diff(path, originals[path], text):
            edits.append(ProposedEdit(path=path, old_text=originals[path], new_text=text, diff=diff,
                                      blocks=blocks.get(path, 0)))
    return ProposedEdits(edits=tuple(edits), problems=proposed.problems, notes=tuple(notes))


def first_changed_line(edit: EditLike) -> int:
    """The edit's first changed line, 1-based in the new text (where an editor shows it)."""
    old = (edit.old_text or "").splitlines()
    new = (edit.new_text or "").splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return number
    return min(len(old), len(new)) + 1
