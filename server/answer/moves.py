"""A file moved, every import following: :func:`move_renamed_file` and :func:`move_file`.

"Rename the parseOptions helper to normalizeOptions, including the file (internal/normalize-options.js)": the
question names a file that does not exist yet, of the same kind as the file whose definition the change renames.
That file moves there (its old path deleted, the new one created with its changed text), and every import of it
follows, by syntax tree, as an editor's "update imports on file move" does (``contenox.workspace.
retarget_imports``: JavaScript and TypeScript specifiers, Python ``from`` and ``import`` statements, the moved
file's own relative imports). "Move src/pkg/lists.py into src/pkg/text/" moves a file with no rename: the node
makes that change itself, needing no edit block from the model (the file as the answer's blocks leave it, if they
changed it). Only one file moves, to a path or a folder the question writes out; explain-context names the move
and each file whose imports changed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

from contenox.answer.edits import ProposedEdits, remade
from contenox.answer.renames import rename_asked, renamed_definitions

__all__ = ["Retarget", "asked_file_move", "asked_move", "move_file", "move_renamed_file"]

Retarget = Callable[[str, str, str, str], tuple[str, int]]
"""``retarget(path, text, old_file, new_file)``: the file's text with its imports of ``old_file`` pointed at
``new_file``, and how many changed (``contenox.workspace.retarget_imports``)."""

_SUFFIXES = ("py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx")
_PATH = re.compile(r"(?<![\w./-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:" + "|".join(_SUFFIXES) + r"))(?![\w/-])")


_MOVE = re.compile(r"(?:^|[.!?:;\n]\s*|\band\s+)(?:(?:please|now|then|so|can you|could you|would you|let's|"
                   r"i want you to),?\s+)*move\b", re.IGNORECASE)
"""A sentence that tells the node to move something ("Move ...", "Please move ..."), not one asking about a move."""
_INTO = re.compile(r"\b(?:to|into)\s+(?:the\s+)?(?:folder\s+|directory\s+|package\s+)?`?((?:\.?/)?(?:[\w.-]+/)+)(?![\w-]|\.\w)")
"""A folder a file is moved to, written with its slash ("into src/pkg/text/")."""


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
    a file's text (None: no such file). Where several files rename definitions (the test of the renamed function
    too), the file is the one renaming to a name the question gives. Unchanged when the question asks no move."""
    if rename_asked(question) is None or _PATH.search(question) is None:  # before any diffing: most turns ask none
        return proposed
    renames = {edit.path: [new for _, new in renamed_definitions(edit.old_text, edit.new_text)]
               for edit in proposed.edits if edit.old_text is not None and edit.new_text is not None}
    asked = (rename_asked(question) or ("", []))[1]
    renamed = [path for path, new in renames.items() if set(new) & set(asked)]  # the rename the question asks
    renamed = renamed or [path for path, new in renames.items() if new]  # (its new name not written as code)
    move = asked_move(question, renamed, lambda path: read(path) is not None)
    return proposed if move is None else _moved(proposed, *move, read, users, retarget)


def asked_file_move(question: str, exists: Callable[[str], bool]) -> tuple[str, str] | None:
    """(old path, new path) when a question tells the node to move a file and renames nothing ("Move
    src/pkg/lists.py into src/pkg/text/", "move internal/re.js to lib/re.js"): it names exactly one file that
    exists and one place for it, a path of its kind that does not exist (a bare name: beside it) or a folder
    written with its slash after "to" / "into"; else None."""
    if rename_asked(question) is not None or not _MOVE.search(question):
        return None
    named = list(dict.fromkeys(m.group(1).removeprefix("./") for m in _PATH.finditer(question)))
    sources = [path for path in named if exists(path)]
    if len(sources) != 1:
        return None
    source = sources[0]
    new = [path for path in named if not exists(path)]
    if len(new) == 1 and _suffix(new[0]) == _suffix(source):
        target = new[0] if "/" in new[0] else posixpath.join(posixpath.dirname(source), new[0])
    elif not new and len(folders := _INTO.findall(question)) == 1:
        target = posixpath.join(folders[0].removeprefix("./").rstrip("/"), posixpath.basename(source))
    else:
        return None
    if target == source or exists(target) or target.startswith("../"):
        return None
    return source, target


def move_file(proposed: ProposedEdits, question: str, read: Callable[[str], str | None],
              users: Callable[[str], Iterable[str]], retarget: Retarget) -> ProposedEdits:
    """The edits with the file a question tells the node to move (:func:`asked_file_move`) moved, as it is or as
    the answer's edit blocks changed it, and every import of it pointed there: a move needs no model. Unchanged
    when the question asks no such move, or the answer already wrote the new file itself."""
    if not _MOVE.search(question):  # before anything else: most turns ask none
        return proposed
    move = asked_file_move(question, lambda path: read(path) is not None)
    if move is None or any(edit.path == move[1] for edit in proposed.edits):
        return proposed
    return _moved(proposed, *move, read, users, retarget)


def _moved(proposed: ProposedEdits, old_path: str, new_path: str, read: Callable[[str], str | None],
           users: Callable[[str], Iterable[str]], retarget: Retarget) -> ProposedEdits:
    """``proposed`` with the file at ``old_path`` (as the edits leave it) moved to ``new_path`` and the imports
    of it, and its own, following; named in a note."""
    texts: dict[str, str | None] = {edit.path: edit.new_text for edit in proposed.edits}
    originals: dict[str, str | None] = {edit.path: edit.old_text for edit in proposed.edits}
    if old_path not in texts:
        texts[old_path] = originals[old_path] = read(old_path)
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
