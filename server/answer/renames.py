"""A renamed definition carried to every use: :func:`propagate_renames`.

When a proposed change renames a definition (its first line changes name) and the old name is defined only
once, each use (callers, imports, tests) is renamed too, by syntax tree, as an editor's rename refactoring does.
A method's uses are attribute accesses on instances whose type no syntax tree knows; they follow in the files that
import from the method's package, unless a builtin type has a method of that name (``get``, ``items``...), where an
attribute use is as likely to be the builtin's.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Callable, Iterable

from contenox.answer.edits import Located, ProposedEdits, definition_name, indent_of, remade

__all__ = ["Rename", "added_definitions", "asked_names", "keep_overwritten", "propagate_renames", "rename_asked",
           "renamed_as_asked", "renamed_definitions"]

Rename = Callable[[str, str, str, str, bool, str, str], tuple[str, int]]
"""``rename(path, text, old, new, defining, package, definition)``: the file's text with the identifier renamed, and
how many places changed (``contenox.workspace.rename_identifier``, by syntax tree; 0 where the file does not use
it); ``package`` is the Python package of a renamed method ("" for anything else), whose importers' attribute uses
follow; ``definition`` the defining file's path (a JavaScript module's readers follow its exports)."""

_BUILTIN_METHODS = frozenset(name for kind in (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float,
                                               complex, object, io.TextIOWrapper, io.BufferedReader, io.BytesIO)
                             for name in dir(kind))


def _is_method(text: str, line: int) -> bool:
    """Whether the definition at 1-based ``line`` of a Python ``text`` is a method: indented, and the first line
    above it that is indented less (a comment aside) opens a class."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or not indent_of(lines[line - 1]):
        return False
    depth = len(indent_of(lines[line - 1]))
    for above in reversed(lines[:line - 1]):
        stripped = above.strip()
        if stripped and not stripped.startswith("#") and len(indent_of(above)) < depth:
            return stripped.startswith("class ")
    return False


def _python_package(path: str) -> str:
    """The top-level package a Python file's importers name: ``src/isodate/duration.py`` -> ``isodate``,
    ``humanize.py`` -> ``humanize``."""
    parts = path.split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


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


def keep_overwritten(proposed: ProposedEdits, locate: Callable[[str], list[Located]], question: str,
                     users: Callable[[str], Iterable[str]] | None = None) -> ProposedEdits:
    """The edits with each definition that a new one was written over kept, the new one added after it, where the
    question asks to add the new one (names it, and it is defined nowhere yet) and asks for no rename, removal or
    replacement, and the old one is named by the question or still used (by the change itself, or by another file:
    ``users(name)``): asked to "add a tax_rate(region) function next to tax_for", the 1.5B's block searched for
    ``def tax_for`` and replaced it with ``def tax_rate``, deleting the function the package still imports (SEARCH
    used as where to add, its text not repeated); asked for "a new PayloadTooLarge error, a kind of bad payload",
    it wrote ``class PayloadTooLarge(BadPayload)`` over ``class BadPayload``, which that very line and the package
    still use. Kept only when the old name is defined once, in the edited file; each kept definition is a note for
    explain-context."""
    if not question or rename_asked(question) is not None or _REMOVAL.search(question):
        return proposed
    texts = {edit.path: edit.new_text for edit in proposed.edits}
    originals = {edit.path: edit.old_text for edit in proposed.edits}
    notes = list(proposed.notes)
    for edit in proposed.edits:
        if edit.old_text is None or edit.new_text is None:
            continue
        had = _defined_names(edit.old_text)
        has = _defined_names(edit.new_text)
        added = [name for name in has if name not in had and _named(name, question) and not locate(name)]
        for old in (name for name in had if name not in has):
            defined = locate(old)
            text = texts[edit.path]
            if not added or len(defined) != 1 or defined[0][0] != edit.path or text is None:
                continue
            if not (_named(old, question) or _named(old, text)
                    or any(path != edit.path for path in (users(old) if users else ()))):
                continue
            kept = _with_definition(edit.old_text, defined[0][1], defined[0][2], text, added[0])
            if kept is not None:
                texts[edit.path] = kept
                notes.append(f"`{old}` kept: the change wrote `{added[0]}` over it, and the question asks to add "
                             f"`{added[0]}`, not to replace `{old}`" + ("" if _named(old, question) else
                                                                      ", which is still used") +
                             f": `{added[0]}` added after it")
    if notes == list(proposed.notes):
        return proposed
    return remade(proposed, texts, originals, notes)


_REMOVAL = re.compile(r"\b(?:remove|delete|drop|replace|replaces|replacing|instead of|get rid of|inline|merge)\b",
                      re.IGNORECASE)


def _defined_names(text: str) -> list[str]:
    return list(dict.fromkeys(name for line in text.split("\n") if (name := definition_name(line))))


def _named(name: str, question: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", question) is not None


def _with_definition(old_text: str, first: int, last: int, text: str, new: str) -> str | None:
    """``text`` with the definition at lines ``first``..``last`` of ``old_text`` (its decorators and the blank lines
    after it with it; at the file's end, as many blank lines as it has before it) put back before the first line
    that defines ``new`` at the same indentation (None: no such line)."""
    before = old_text.split("\n")
    if not 1 <= first <= last <= len(before):
        return None
    start = first - 1
    while start > 0 and before[start - 1].strip().startswith("@") and \
            indent_of(before[start - 1]) == indent_of(before[first - 1]):
        start -= 1
    end = last
    while end < len(before) and not before[end].strip():
        end += 1
    block = before[start:end]
    if end == len(before):  # the file's last definition: as many blank lines between the two as before it
        block = before[start:last]
        above = start
        while above > 0 and not before[above - 1].strip():
            above -= 1
        block += [""] * max(1, start - above)
    after = text.split("\n")
    at = next((i for i, line in enumerate(after) if definition_name(line) == new
               and indent_of(line) == indent_of(before[first - 1])), None)
    if at is None:
        return None
    while at > 0 and after[at - 1].strip().startswith("@") and indent_of(after[at - 1]) == indent_of(after[at]):
        at -= 1
    return "\n".join([*after[:at], *block, *after[at:]])


def propagate_renames(proposed: ProposedEdits, locate: Callable[[str], list[Located]],
                      users: Callable[[str], Iterable[str]], read: Callable[[str], str | None],
                      rename: Rename, question: str = "") -> ProposedEdits:
    """The edits with each renamed definition renamed at every use too, like an editor's rename refactoring:
    an answer that renames ``def old`` (small models rarely find every caller) has its callers, imports and
    tests follow. Carried only when the name is defined once in the workspace, in the edited file, and the
    new name nowhere (else the rename is left as written and a note says why); ``users(name)`` are the files
    holding the word; ``question``, when given, must ask for a rename: asked to add ``rename_key`` next to
    ``set_key``, a model that overwrote ``def set_key(`` with it renamed nothing the user wanted, and carrying it
    made a consistent change that passes the tests without ``set_key``. Each carried rename, and each left as
    written, is a note for explain-context."""
    texts = {edit.path: edit.new_text for edit in proposed.edits}
    unasked = bool(question) and rename_asked(question) is None
    originals = {edit.path: edit.old_text for edit in proposed.edits}
    notes = list(proposed.notes)
    for edit in proposed.edits:
        if edit.old_text is None or edit.new_text is None:
            continue
        for old, new in renamed_definitions(edit.old_text, edit.new_text):
            if unasked:
                notes.append(f"rename of `{old}` to `{new}` left as written: the question asks for no rename (the "
                             f"change overwrites the line that defines `{old}`)")
                continue
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
            package = ""
            if edit.path.endswith(".py") and _is_method(edit.old_text, defined[0][1]):
                if old in _BUILTIN_METHODS:
                    notes.append(f"`{old}` is a method, and builtin types have a method of that name too: its "
                                 f"attribute uses (`obj.{old}`) outside {edit.path} are left as they are")
                else:
                    package = _python_package(edit.path)
            for path in dict.fromkeys([edit.path, *users(old)]):
                current = texts[path] if path in texts else read(path)
                if current is None:
                    continue
                text, count = rename(path, current, old, new, path == edit.path, package, edit.path)
                if count:
                    originals.setdefault(path, current)
                    texts[path] = text
                    changed[path] = count
                elif path != edit.path:
                    left.append(path)
            if changed:
                places = ", ".join(f"{path} ({count})" for path, count in changed.items())
                through = (f" (a method: its `obj.{old}` uses in the files that import from `{package}`)"
                           if package else "")
                notes.append(f"rename of `{old}` to `{new}` carried to every use{through}: {sum(changed.values())} "
                             f"more place(s): {places}")
            if left:
                notes.append(f"rename of `{old}` not carried into {', '.join(left)}: the name is there but not "
                             "imported (a comment, a string, another object's attribute or a local); check them")
    return proposed if len(notes) == len(proposed.notes) else remade(proposed, texts, originals, notes)


_RENAME = re.compile(r"\brenam(?:e|ing)\b", re.IGNORECASE)
_TO_NAMES = re.compile(r"\bto\s+(`?[A-Za-z_$][\w$]*`?(?:\s*(?:,\s*(?:and\s+)?|and\s+)`?[A-Za-z_$][\w$]*`?)*)")
_NAME_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")


def rename_asked(question: str) -> tuple[str, list[str]] | None:
    """A rename question's two parts: the text that names what to rename (after "rename", up to the "to" of the
    new names, when there is one: "Rename this factory to _make_wrapper, together with its twin in the
    @cachedmethod module" renames no ``cachedmethod``) and the new names it gives, in order ("Rename int_to_bytes
    and bytes_to_int to encode_int and decode_int" -> encode_int, decode_int): the names after that "to", each a
    code name (an underscore, a capital after its first letter, a digit or ``$``) or in backticks; a plain word
    ends them ("to warn_on_parse_errors and update its callers"). None when the question asks no rename."""
    found = _RENAME.search(question)
    if found is None:
        return None
    to = _TO_NAMES.search(question, found.end())
    names: list[str] = []
    for raw in _NAME_SEPARATOR.split(to.group(1)) if to is not None else ():
        name = raw.strip("`")
        if not (raw.startswith("`") or "_" in name or "$" in name or any(c.isdigit() for c in name)
                or any(c.isupper() for c in name[1:])):
            break
        names.append(name)
    return question[found.end():to.start() if to is not None else len(question)], names


def asked_names(question: str) -> list[str]:
    """The new names a rename question gives (:func:`rename_asked`), empty when it gives none."""
    asked = rename_asked(question)
    return asked[1] if asked is not None else []


def added_definitions(diff: str) -> set[str]:
    """The names the change (a unified diff) defines on the lines it adds (``def to_bytes(``, ``const
    normalizeOptions =``, ``class PayloadTooLarge(``), not those it only uses (the 0.5B's ``s = s.to_bytes()``)."""
    return {name for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
            and (name := definition_name(line[1:])) is not None}


def renamed_as_asked(diff: str, names: Iterable[str]) -> bool:
    """The change (a unified diff) defines each of the new names a question asks for: a line it adds is a
    definition of that name (:func:`added_definitions`), not a use of it (the 0.5B's ``s = s.to_bytes()`` in the
    body of the ``bytesify`` it was asked to rename)."""
    defined = added_definitions(diff)
    return all(name in defined for name in names)
