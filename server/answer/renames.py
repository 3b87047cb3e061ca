"""A renamed definition carried to every use: :func:`propagate_renames`.

When a proposed change renames a definition (its first line changes name) and the old name is defined only
once, each use (callers, imports, tests) is renamed too, by syntax tree, as an editor's rename refactoring does.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from contenox.answer.edits import (
    Located,
    ProposedEdit,
    ProposedEdits,
    definition_name,
    indent_of,
    unified_diff,
)

__all__ = ["Rename", "propagate_renames", "renamed_definitions"]

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
            old, new = definition_name(a), definition_name(b)
            if old and new and old != new and indent_of(a) == indent_of(b):
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
