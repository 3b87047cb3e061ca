"""A rename that moves its file: :func:`move_renamed_file`.

"Rename the parseOptions helper to normalizeOptions, including the file (internal/normalize-options.js)": the
question names a file that does not exist yet, of the same kind as the file whose definition the change renames.
That file moves there (its old path deleted, the new one created with its changed text), and every import of it
follows, by syntax tree, as an editor's "update imports on file move" does (``contenox.workspace.
retarget_imports``: JavaScript and TypeScript specifiers, Python ``from`` and ``import`` statements). Only a
question that asks for a rename moves anything, and only one file, to a path the question writes out; explain-context names the move and
each file whose imports changed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

from contenox.answer.edits import ProposedEdits, remade
from contenox.answer.renames import rename_asked, renamed_definitions

__all__ = ["Retarget", "asked_move", "move_renamed_file"]

Retarget = Callable[[str, str, str, str], tuple[str, int]]
"""``retarget(path, text, old_file, new_file)``: the file's text with its imports of ``old_file`` pointed at
``new_file``, and how many changed (``contenox.workspace.retarget_imports``)."""

_SUFFIXES = ("py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx")
_PATH = re.compile(r"(?<![\w./-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:" + "|".join(_SUFFIXES) + r"))(?![\w/-])")


def _suffix(path: str) -> str:
    return posixpath.splitext(path)[1]


def asked_move(question: str, renamed: Iterable[str], exists: Callable[[str], bool]) -> tuple[str, str] | None:
    """(old path, new path) when a rename question names one file that does not exist (``internal/normalize-
    options.js``, or a bare name, then beside the old one) and exactly one of the ``renamed`` files (those whose
    definitions the change renames) has its kind; else None."""
    if rename_asked(question) is None:
        return None
    named = list(dict.fromkeys(m.group(1).removeprefix("./") for m in _PATH.finditer(question)))
    renamed = list(dict.fromkeys(renamed))
    new = [path for path in named if not exists(path)]
    if len(new) != 1:
        return None
    sources = [path for path in renamed if _suffix(path) == _suffix(new[0])]
    if len(sources) != 1:
        return None
    target = new[0] if "/" in new[0] else posixpath.join(posixpath.dirname(sources[0]), new[0])
    if target == sources[0] or exists(target) or target.startswith("../"):
        return None
    return sources[0], target


def move_renamed_file(proposed: ProposedEdits, question: str, read: Callable[[str], str | None],
                      users: Callable[[str], Iterable[str]], retarget: Retarget) -> ProposedEdits:
    """The edits with the renamed definition's file moved where the question asks (:func:`asked_move`) and every
    import of it pointed there; ``users(word)`` are the files holding the word (the old file's name), ``read``
    a file's text (None: no such file). Unchanged when the question asks no move."""
    if rename_asked(question) is None or _PATH.search(question) is None:  # before any diffing: most turns ask none
        return proposed
    renamed = [edit.path for edit in proposed.edits if edit.old_text is not None and edit.new_text is not None
               and renamed_definitions(edit.old_text, edit.new_text)]
    move = asked_move(question, renamed, lambda path: read(path) is not None)
    if move is None:
        return proposed
    old_path, new_path = move
    texts: dict[str, str | None] = {edit.path: edit.new_text for edit in proposed.edits}
    originals: dict[str, str | None] = {edit.path: edit.old_text for edit in proposed.edits}
    texts[new_path], originals[new_path] = texts[old_path], None
    moved, count = retarget(new_path, texts[new_path] or "", old_path, new_path)  # its own relative imports
    texts[new_path], texts[old_path] = moved, None
    changed: dict[str, int] = {new_path: count} if count else {}
    stem = posixpath.splitext(posixpath.basename(old_path))[0]
    for path in dict.fromkeys(users(stem)):
        if path in (old_path, new_path):
            continue
        current = texts[path] if path in texts else read(path)
        if current is None:
            continue
        text, count = retarget(path, current, old_path, new_path)
        if count:
            originals.setdefault(path, current)
            texts[path] = text
            changed[path] = count
    places = ", ".join(f"{path} ({count})" for path, count in changed.items())
    note = (f"file {old_path} moved to {new_path}, as the question asks: "
            + (f"{sum(changed.values())} import(s) follow: {places}" if changed else "no file imports it by path"))
    return remade(proposed, texts, originals, [*proposed.notes, note])
