"""What a change leaves undone that an editor's quick fixes do (Python): :func:`complete_imports`.

Small models write the change where the question points and forget its bookkeeping in the other files: a name used
where nothing imports it (``raise PayloadTooLarge`` in ``url_safe.py``, the class defined in ``exc.py``), or a new
public name the question asks to export that the package's ``__init__.py`` neither imports nor lists in
``__all__``. An editor adds such an import with a quick fix (Pylance's "add import", rope's autoimport);
:func:`complete_imports` does the same to a proposed change, in the file's own style, each addition a note for
explain-context:

- a name the change starts using in a module, bound nowhere in it, and defined (``def``, ``class`` or an
  assignment) at the top level of exactly one other module of the same package, as the change leaves it, is
  imported from there, beside the module's other imports from that module (``from .exc import PayloadTooLarge``
  under ``from .exc import BadPayload``);
- where the question asks for an export ("export it from the package", "importable from the package root", "part
  of the public API", ``from pkg import *``), each name the question writes as code that a module of the package
  defines at its top level is imported by the package's ``__init__.py`` (and its ``.pyi`` stub) the way its other
  imports from that module are written, and listed in every ``__all__`` that lists names (the package's, and the
  defining module's own), beside the others.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from contenox.answer.edits import Located, ProposedEdits, remade

__all__ = ["IMPLICIT_NAMES", "complete_imports", "export_asked", "unbound_names"]

IMPLICIT_NAMES = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__loader__",
                                             "__package__", "__builtins__", "__path__", "__annotations__", "__dict__",
                                             "__class__", "__module__", "__qualname__"}
"""Names Python code reads without binding them: the builtins, a module's dunders, a class body's own."""
_EXPORT = re.compile(r"\bexport(?:s|ed|ing)?\b|\bimportable from\b|\bpublic API\b|\bimport \*|\bpackage root\b",
                     re.IGNORECASE)
_CODE_WORD = re.compile(r"`([^`\n]+)`|\b([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])\b")


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def unbound_names(code: str) -> set[str]:
    """Names the Python ``code`` reads that nothing in it binds (no import, definition, assignment, parameter or
    handler anywhere in the file) and that are not builtins; empty where it does not parse or star-imports."""
    tree = _parse(code)
    if tree is None:
        return set()
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return set()
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return used - bound - IMPLICIT_NAMES


def _top_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """A module's statements, those under a top-level ``if`` or ``try`` included (``try: import x`` ...)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_statements(node.body + node.orelse + node.finalbody
                                       + [s for h in node.handlers for s in h.body])


def _binds(tree: ast.Module, name: str, *, imports: bool = True) -> bool:
    """Whether the module binds ``name`` at its top level: a ``def``, ``class`` or assignment, or (``imports``) an
    import of it (which, in another module, is a re-export rather than its definition)."""
    for node in _top_statements(tree.body):
        if imports and isinstance(node, ast.Import | ast.ImportFrom) \
                and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _defines(code: str, name: str) -> bool:
    """Whether ``code`` defines ``name`` at its top level (an import of it aside)."""
    tree = _parse(code)
    return tree is not None and _binds(tree, name, imports=False)


def export_asked(question: str) -> list[str]:
    """The names a question asks to export from its package (the words it writes as code: backticked, with an
    underscore, CamelCase or ALL_CAPS, or dotted: ``pkg.Name`` is ``Name``), or [] where it asks for no export."""
    if not _EXPORT.search(question):
        return []
    names: dict[str, None] = {}
    for match in _CODE_WORD.finditer(question):
        raw = (match.group(1) or match.group(2)).strip().split("(")[0]
        word = raw.rsplit(".", 1)[-1]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
            continue
        if match.group(1) or "." in raw or "_" in word.strip("_") or word.startswith("__") or re.search(r"[a-z][A-Z]", word) \
                or (word.isupper() and len(word) > 1) or (word[0].isupper() and any(c.isupper() for c in word[1:])):
            names[word] = None
    return list(names)


class _Package:
    """The files of one change, their texts as the change leaves them, and the package layout around them."""

    def __init__(self, proposed: ProposedEdits, read: Callable[[str], str | None]) -> None:
        self.texts = {edit.path: edit.new_text for edit in proposed.edits}
        self.originals: dict[str, str | None] = {edit.path: edit.old_text for edit in proposed.edits}
        self._read = read

    def text(self, path: str) -> str | None:
        if path in self.texts:
            return self.texts[path]
        return self._read(path)

    def set(self, path: str, text: str) -> None:
        if path not in self.originals:
            self.originals[path] = self._read(path)
        self.texts[path] = text

    def root(self, path: str) -> str | None:
        """The top-level package directory holding the Python file ``path`` (each directory down to it has an
        ``__init__.py``); None outside any package."""
        parent = PurePosixPath(path).parent
        top = None
        while str(parent) not in ("", ".") and self.text(f"{parent}/__init__.py") is not None:
            top = parent
            parent = parent.parent
        return str(top) if top is not None else None


def _module(path: str, root: str) -> str:
    """The dotted absolute module of ``path`` in the package at ``root`` (``src/isodate/isoerror.py`` ->
    ``isodate.isoerror``)."""
    parts = [*PurePosixPath(root).parts[-1:], *PurePosixPath(path).relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _relative(importer: str, target: str) -> str:
    """``from <this> import``: the module ``target`` relative to the file ``importer``."""
    here = PurePosixPath(importer).parent.parts
    there = PurePosixPath(target).with_suffix("").parts
    common = 0
    while common < min(len(here), len(there) - 1) and here[common] == there[common]:
        common += 1
    rest = list(there[common:])
    if rest and rest[-1] == "__init__":
        rest = rest[:-1]
    return "." * (len(here) - common + 1) + ".".join(rest)


def _lines_insert(text: str, after_line: int, new_lines: list[str]) -> str:
    """``text`` with ``new_lines`` put after its 1-based line ``after_line`` (0: at the top)."""
    lines = text.split("\n")
    return "\n".join(lines[:after_line] + new_lines + lines[after_line:])


def _add_import(text: str, path: str, target: str, root: str, name: str) -> str | None:
    """``text`` (the module at ``path``) importing ``name`` from the module file ``target``, written as its other
    imports from that module are (one per line, ``X as X``, or inside their parentheses); None where it does
    not parse."""
    tree = _parse(text)
    if tree is None:
        return None
    relative, absolute = _relative(path, target), _module(target, root)
    top_imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    uses_relative = any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
    siblings = [n for n in top_imports if isinstance(n, ast.ImportFrom)
                and ("." * n.level + (n.module or "")) in (relative, absolute)]
    lines = text.split("\n")
    if siblings:
        last = siblings[-1]
        aliased = all(a.asname == a.name for a in last.names)
        entry = f"{name} as {name}" if aliased else name
        end = last.end_lineno or last.lineno
        if end > last.lineno and lines[end - 1].strip() == ")":  # parenthesized, one name a line
            previous = lines[end - 2]
            indent = previous[:len(previous) - len(previous.lstrip())] or "    "
            if previous.rstrip() and not previous.rstrip().endswith((",", "(")):
                lines[end - 2] = previous.rstrip() + ","
            return "\n".join([*lines[:end - 1], f"{indent}{entry},", *lines[end - 1:]])
        module = "." * last.level + (last.module or "")
        return _lines_insert(text, end, [f"from {module} import {entry}"])
    module = relative if uses_relative else absolute
    if top_imports:
        after = max(n.end_lineno or n.lineno for n in top_imports)
    else:
        first = tree.body[0] if tree.body else None
        docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str)
        after = (first.end_lineno or 0) if docstring and first is not None else 0
    return _lines_insert(text, after, [f"from {module} import {name}"])


def _listed(text: str, name: str) -> str | None:
    """``text`` with ``name`` added to its ``__all__`` list or tuple of strings (sorted where it is sorted, else
    last; quoted and laid out as its entries are); None where it has no such ``__all__`` or lists the name."""
    tree = _parse(text)
    if tree is None:
        return None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                     for t in node.targets)
                and isinstance(node.value, ast.List | ast.Tuple) and node.value.elts
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)):
            continue
        entries = [e for e in node.value.elts if isinstance(e, ast.Constant)]
        values = [str(e.value) for e in entries]
        if name in values:
            return None
        lines = text.split("\n")
        first = lines[entries[0].lineno - 1]
        quote = first[entries[0].col_offset] if first[entries[0].col_offset] in "\"'" else '"'
        quoted = f"{quote}{name}{quote}"
        ordered = values == sorted(values)
        before = next((i for i, v in enumerate(values) if v > name), None) if ordered else None
        one_a_line = len({e.lineno for e in entries}) == len(entries) and entries[0].lineno > node.lineno
        if one_a_line:
            indent = " " * entries[0].col_offset
            if before is not None:
                return _lines_insert(text, entries[before].lineno - 1, [f"{indent}{quoted},"])
            last = entries[-1]
            line = lines[(last.end_lineno or last.lineno) - 1]
            end = last.end_col_offset or len(line)
            if not line[end:].lstrip().startswith(","):
                lines[(last.end_lineno or last.lineno) - 1] = line[:end] + "," + line[end:]
            return _lines_insert("\n".join(lines), last.end_lineno or last.lineno, [f"{indent}{quoted},"])
        anchor = entries[before] if before is not None else entries[-1]
        row = anchor.lineno - 1
        line = lines[row]
        if before is not None:
            lines[row] = line[:anchor.col_offset] + f"{quoted}, " + line[anchor.col_offset:]
        else:
            end = anchor.end_col_offset or len(line)
            lines[row] = line[:end] + f", {quoted}" + line[end:]
        return "\n".join(lines)
    return None


def _definer(package: _Package, name: str, root: str, locate: Callable[[str], list[Located]],
             exclude: str) -> str | None:
    """The one module of the package at ``root`` (the change's texts first) that defines ``name`` at its top
    level, ``exclude`` and ``__init__.py`` files aside; None where none or several do."""
    paths = dict.fromkeys([*package.texts, *(found[0] for found in locate(name))])
    definers = [p for p in paths if p != exclude and p.endswith(".py") and not p.endswith("/__init__.py")
                and p.startswith(root + "/") and (text := package.text(p)) is not None and _defines(text, name)]
    return definers[0] if len(definers) == 1 else None


def complete_imports(proposed: ProposedEdits, read: Callable[[str], str | None],
                     locate: Callable[[str], list[Located]], question: str = "") -> ProposedEdits:
    """The change with the imports it leaves undone added (see the module's doc), each named in a note; as it was
    where nothing is missing. ``read(path)``: a file's current text (None: none); ``locate(name)``: where the
    workspace defines the name."""
    package = _Package(proposed, read)
    notes = list(proposed.notes)
    roots: dict[str, str] = {}  # each edited Python file's package root, once
    for edit in proposed.edits:
        root = package.root(edit.path) if edit.path.endswith(".py") else None
        if root is None or edit.new_text is None:  # not a package's module, or deleted (a moved file's old path)
            continue
        roots[edit.path] = root
        new = unbound_names(edit.new_text) - unbound_names(edit.old_text or "")
        for name in sorted(new):
            target = _definer(package, name, root, locate, edit.path)
            current = package.text(edit.path)
            if target is None or current is None:
                continue
            if (added := _add_import(current, edit.path, target, root, name)) is not None:
                package.set(edit.path, added)
                notes.append(f"import of `{name}` added to {edit.path}: the change uses it, {target} defines it")
    for name in export_asked(question):
        for root in dict.fromkeys(roots.values()):
            target = _definer(package, name, root, locate, "")
            if target is None:
                continue
            done = []
            for path in (f"{root}/__init__.py", f"{root}/__init__.pyi"):
                text = package.text(path)
                tree = _parse(text) if text is not None else None
                if text is None or tree is None:
                    continue
                if not _binds(tree, name) and (added := _add_import(text, path, target, root, name)) is not None:
                    text = added
                    done.append(f"imported in {path}")
                if (listed := _listed(text, name)) is not None:
                    text = listed
                    done.append(f"listed in {path}'s __all__")
                if text != package.text(path):
                    package.set(path, text)
            own = package.text(target)
            if own is not None and (listed := _listed(own, name)) is not None:
                package.set(target, listed)
                done.append(f"listed in {target}'s __all__")
            if done:
                notes.append(f"`{name}` ({target}) exported from its package as the question asks: "
                             + ", ".join(done))
    if len(notes) == len(proposed.notes):
        return proposed
    return remade(proposed, package.texts, package.originals, notes)
