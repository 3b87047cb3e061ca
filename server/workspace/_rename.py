"""Renaming one identifier in one file's text, by its syntax tree: what a rename refactoring does per file.

Only identifier tokens change: never text in strings or comments, never a longer name that contains the
old one. Two kinds of string are references, in Python: a module's export list (an ``__all__ = [...]`` or
``+=`` entry that is exactly the old name, renamed as rope and PyCharm rename it; left, ``from m import *`` and
the package's ``__all__`` would name a definition that no longer exists), and, in the defining file, the doctest
lines of its strings (``>>> old(1)``), which ``--doctest-modules`` runs as code. In JavaScript and TypeScript a
property name (``obj.name``, ``{name: 1}``) is left as it is, since it is part of an object's shape rather than a
reference to the definition, and a shorthand property (``{ name }``) becomes ``name: new_name`` so the object keeps
its key, with one exception: the defining module's own exports. A CommonJS module exports under the new name as an
ES module's ``export`` does (``module.exports = { new_name }``, ``exports.new_name``), and the files that require or
import that module (``definition``, resolved from their relative specifiers) read it under the new name:
``const { new_name } = require('./m')``, ``m.new_name`` through ``const m = require('./m')`` or ``import * as m``.
Another object that re-exports it under a key of its own (a package's index: ``{ name: m.new_name }``) keeps its key,
so a public API built that way does not change.

A file that is not the definition's own takes the rename only where it *imports* the name, or already the
new name (Python ``from m import name``, JavaScript ``require`` / ``import``): a file that merely holds a local of
the same name is not a user of the definition. A Python file that imports a module instead (``import pkg``) takes
it only in its ``pkg.name`` uses (a package's tests call ``humanize.natural_list``). A method is called on an
instance (``dur.totimedelta()``), whose type a syntax tree does not know: given the method's ``package``, a Python
file that imports from that package (``from isodate import Duration``, a relative import inside it) takes the
rename in its ``obj.name`` uses, and only there (the caller checks that the name is defined once in the workspace
and is no builtin type's method). Go, Rust, Java and C have no per-name imports to check; there, every file of
the same language that holds the identifier takes it.
"""

from __future__ import annotations

import posixpath
import re

import tree_sitter

from contenox.workspace._languages import grammar, language_for

__all__ = ["rename_identifier", "retarget_imports"]

_SCRIPT = frozenset({"javascript", "typescript", "tsx"})
_IMPORTING = frozenset({"python", "javascript", "typescript", "tsx"})
_SHORTHAND = frozenset({"shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_PROPERTY = frozenset({"property_identifier", "private_property_identifier"})
_IMPORT_NODES = frozenset({"import_from_statement", "import_statement", "import_clause", "import_specifier"})


def _leaves(root: tree_sitter.Node, name: bytes) -> list[tree_sitter.Node]:
    found: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            if node.text == name and "identifier" in node.type:
                found.append(node)
            continue
        stack.extend(node.children)
    return found


def _is_require(node: tree_sitter.Node) -> bool:
    """``const name = require(...)`` / ``const { name } = require(...)``: the declarator's value is a require."""
    while node.parent is not None and node.type != "variable_declarator":
        node = node.parent
    if node.type != "variable_declarator":
        return False
    value = node.child_by_field_name("value")
    callee = value.child_by_field_name("function") if value is not None and value.type == "call_expression" else None
    return callee is not None and callee.text == b"require"


def _in_import(node: tree_sitter.Node, language: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _IMPORT_NODES:
            return True
        if parent.type in ("module", "program", "source_file"):
            break
        parent = parent.parent
    return language in _SCRIPT and _is_require(node)


def rename_identifier(path: str, text: str, old: str, new: str, defining: bool, package: str = "",
                      definition: str = "") -> tuple[str, int]:
    """``text`` (the file at ``path``) with the identifier ``old`` renamed to ``new`` wherever it is one, and how
    many places changed (0: the text is unchanged). A file that does not define it (``defining`` False) is
    renamed only if it imports the name, or, for a method of a class in the Python ``package``, in its attribute
    uses if it imports from that package, or, in JavaScript and TypeScript, where it reads the name from the
    module at ``definition`` (the defining file's path; see the module docstring); an unknown language is left as
    it is."""
    language = language_for(path)
    if language is None or old == new:
        return text, 0
    data = text.encode("utf-8")
    tree = grammar(language).parser.parse(data)
    name = old.encode("utf-8")
    nodes = [n for n in _leaves(tree.root_node, name) if not (language in _SCRIPT and n.type in _PROPERTY)]
    exported = _exported(tree.root_node, name) if language == "python" else []
    examples = _doctest_uses(tree.root_node, old) if language == "python" and defining else []
    keys: list[tree_sitter.Node] = []  # the module's export keys and its readers' (JavaScript): renamed plainly
    if language in _SCRIPT:
        keys = (_own_exports(tree.root_node, name) if defining
                else _module_reads(tree.root_node, name, path, definition) if definition else [])
    if not nodes and not keys and not (defining and (exported or examples)):  # the def may be renamed already
        return text, 0
    if not (defining or language not in _IMPORTING or any(
            _in_import(n, language) for n in [*nodes, *_leaves(tree.root_node, new.encode("utf-8"))])):
        if language != "python" and not keys:
            return text, 0
        # ``import pkg`` then ``pkg.name(...)``: the uses through a module the file imports (a package's tests
        # call ``humanize.natural_list``), and nothing else of the file; in JavaScript the module's reads
        # (``m.name``), and no local of that name
        modules = _imported_modules(tree.root_node) if language == "python" else set()
        method = language == "python" and bool(package) and _imports_from(tree.root_node, package.encode("utf-8"))
        nodes = [n for n in nodes if language == "python" and n.parent is not None and n.parent.type == "attribute"
                 and _same(n.parent.child_by_field_name("attribute"), n)
                 and (found := n.parent.child_by_field_name("object")) is not None
                 and (method or found.text in modules)]
        exported = []
        if not nodes and not keys:
            return text, 0
    plain = {n.start_byte for n in keys}
    shorthand = {n.start_byte for n in nodes if language in _SCRIPT and n.type in _SHORTHAND} - plain
    spans = {(n.start_byte, n.end_byte) for n in [*nodes, *exported, *keys]} | set(examples)
    out = bytearray(data)
    for start, end in sorted(spans, reverse=True):
        out[start:end] = (f"{old}: {new}" if start in shorthand else new).encode("utf-8")
    return out.decode("utf-8"), len(spans)


_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".d.ts")


def _resolves_to(path: str, specifier: str, definition: str) -> bool:
    """Whether the relative ``specifier`` (``'../internal/ids'``, ``'./'``) that the file at ``path`` requires or
    imports is the module at ``definition``, as Node resolves it (the path itself, with an extension, or a
    folder's index); a package name is not followed."""
    if not specifier.startswith("."):
        return False
    base = posixpath.join(posixpath.dirname(path), specifier)
    candidates = [base, *(base + suffix for suffix in _SCRIPT_SUFFIXES),
                  *(posixpath.join(base, "index" + suffix) for suffix in _SCRIPT_SUFFIXES)]
    return posixpath.normpath(definition) in {posixpath.normpath(c) for c in candidates}


def _required(node: tree_sitter.Node | None) -> str | None:
    """The specifier of ``require('spec')`` when ``node`` is that call, else None."""
    if node is None or node.type != "call_expression":
        return None
    callee, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if callee is None or callee.text != b"require" or arguments is None:
        return None
    strings = arguments.named_children
    if len(strings) != 1 or strings[0].type != "string":
        return None
    return b"".join(c.text or b"" for c in strings[0].named_children if c.type == "string_fragment").decode()


def _key_nodes(pattern: tree_sitter.Node, name: bytes) -> list[tree_sitter.Node]:
    """In an object or object pattern, the keys ``name`` of its own entries: ``{ name }``, ``{ name: x }``."""
    found = []
    for entry in pattern.named_children:
        if entry.type in _SHORTHAND and entry.text == name:
            found.append(entry)
        elif entry.type in ("pair", "pair_pattern"):
            key = entry.child_by_field_name("key")
            if key is not None and key.type in _PROPERTY and key.text == name:
                found.append(key)
    return found


def _member_property(node: tree_sitter.Node, name: bytes) -> tree_sitter.Node | None:
    prop = node.child_by_field_name("property")
    return prop if prop is not None and prop.text == name else None


def _own_exports(root: tree_sitter.Node, name: bytes) -> list[tree_sitter.Node]:
    """The defining module's CommonJS export keys named ``name``: ``module.exports = { name }`` (or
    ``{ name: name }``) and ``module.exports.name`` / ``exports.name``."""
    found: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.text in (b"module.exports", b"exports") and right is not None \
                    and right.type == "object":
                found += _key_nodes(right, name)
        elif node.type == "member_expression":
            target = node.child_by_field_name("object")
            if target is not None and target.text in (b"module.exports", b"exports") \
                    and (prop := _member_property(node, name)) is not None:
                found.append(prop)
        stack.extend(node.children)
    return found


def _module_reads(root: tree_sitter.Node, name: bytes, path: str, definition: str) -> list[tree_sitter.Node]:
    """Where the file at ``path`` reads ``name`` from the module at ``definition``: the keys of a destructuring
    ``require`` of it, ``m.name`` where ``m`` is bound to it (``const m = require(...)``, ``import * as m``,
    ``import m from``), and ``require(...).name``."""
    bound: set[bytes] = set()
    found: list[tree_sitter.Node] = []
    members: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_declarator":
            spec = _required(node.child_by_field_name("value"))
            target = node.child_by_field_name("name")
            if spec is not None and target is not None and _resolves_to(path, spec, definition):
                if target.type == "identifier" and target.text is not None:
                    bound.add(target.text)
                elif target.type == "object_pattern":
                    found += _key_nodes(target, name)
        elif node.type == "import_statement":
            source = node.child_by_field_name("source")
            spec = b"".join(c.text or b"" for c in source.named_children).decode() if source is not None else ""
            if _resolves_to(path, spec, definition):
                for clause in (c for c in node.named_children if c.type == "import_clause"):
                    for part in clause.named_children:
                        local = (part.named_children[-1] if part.type == "namespace_import" and part.named_children
                                 else part if part.type == "identifier" else None)
                        if local is not None and local.text is not None:
                            bound.add(local.text)
        elif node.type == "member_expression":
            members.append(node)
        stack.extend(node.children)
    for member in members:
        target = member.child_by_field_name("object")
        prop = _member_property(member, name)
        if prop is None or target is None:
            continue
        spec = _required(target)
        if (target.type == "identifier" and target.text in bound) or (
                spec is not None and _resolves_to(path, spec, definition)):
            found.append(prop)
    return found


_DOCTEST_LINE = re.compile(r"^[ \t]*(?:>>>|\.\.\.) .*$", re.MULTILINE)


def _doctest_uses(root: tree_sitter.Node, name: str) -> list[tuple[int, int]]:
    """Byte ranges of ``name`` as a word in the doctest lines (``>>> name(1)``, ``... name``) of the defining
    file's strings: a docstring's examples are code, run by ``--doctest-modules``."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])".encode())
    lines = re.compile(_DOCTEST_LINE.pattern.encode(), re.MULTILINE)
    found: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "string_content" and node.text is not None:
            for line in lines.finditer(node.text):
                found += [(node.start_byte + line.start() + m.start(), node.start_byte + line.start() + m.end())
                          for m in word.finditer(line.group(0))]
            continue
        stack.extend(node.children)
    return found


def _same(a: tree_sitter.Node | None, b: tree_sitter.Node) -> bool:
    return a is not None and (a.start_byte, a.end_byte) == (b.start_byte, b.end_byte)


def _imported_modules(root: tree_sitter.Node) -> set[bytes]:
    """The names a Python file's top-level ``import`` statements bind to modules (``import pkg``, ``import a.b``
    -> ``a.b``, ``import a.b as c`` -> ``c``)."""
    bound: set[bytes] = set()
    for statement in root.children:
        if statement.type != "import_statement":
            continue
        for name in statement.children:
            if name.type == "dotted_name" and name.text is not None:
                bound.add(name.text)
            elif name.type == "aliased_import" and (alias := name.child_by_field_name("alias")) is not None:
                bound.add(alias.text or b"")
    return bound


def _imports_from(root: tree_sitter.Node, package: bytes) -> bool:
    """Whether a Python file imports from ``package`` anywhere (``import pkg``, ``import pkg.sub``, ``from pkg.sub
    import x``, or a relative import, which only a module inside a package can make)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            if module is not None and (module.type == "relative_import"
                                       or (module.text or b"").split(b".")[0] == package):
                return True
        elif node.type == "import_statement":
            for name in node.children:
                dotted = name.child_by_field_name("name") if name.type == "aliased_import" else name
                if dotted is not None and dotted.type == "dotted_name" and (dotted.text or b"").split(b".")[0] == package:
                    return True
        else:
            stack.extend(node.children)
    return False


def _exported(root: tree_sitter.Node, name: bytes) -> list[tree_sitter.Node]:
    """The text of each string that is ``name`` in the module's top-level ``__all__`` lists (``__all__ = [...]``,
    ``(...)``, ``+=``)."""
    found: list[tree_sitter.Node] = []
    for statement in root.children:
        for assignment in statement.children if statement.type == "expression_statement" else ():
            if assignment.type not in ("assignment", "augmented_assignment"):
                continue
            left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
            if left is None or right is None or left.text != b"__all__" or right.type not in ("list", "tuple"):
                continue
            for item in right.children:
                content = [c for c in item.children if c.type == "string_content"] if item.type == "string" else []
                if len(content) == 1 and content[0].text == name and len(item.children) == 3:
                    found.append(content[0])
    return found


def _specifier_strings(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The string fragments a JavaScript / TypeScript file names a module by: ``require('...')``, dynamic
    ``import('...')``, and the source of ``import ... from`` / ``export ... from``."""
    found: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        source: tree_sitter.Node | None = None
        if node.type in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
        elif node.type == "call_expression":
            callee, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if callee is not None and callee.text in (b"require", b"import") and arguments is not None \
                    and len(arguments.named_children) == 1:
                source = arguments.named_children[0]
        if source is not None and source.type == "string":
            found += [c for c in source.named_children if c.type == "string_fragment"][:1]
        stack.extend(node.children)
    return found


def _relative(from_path: str, to_path: str) -> str:
    """The specifier a file at ``from_path`` requires ``to_path`` by: relative, ``./`` first when it does not
    climb."""
    rel = posixpath.relpath(to_path, posixpath.dirname(from_path) or ".")
    return rel if rel.startswith("../") else "./" + rel


def _top_depth(path: str) -> int:
    """How many folders of ``path`` stand above its top-level package (``src/pkg/m.py``: 1, ``pkg/m.py``: 0)."""
    parts = path.split("/")
    return 1 if parts[0] in ("src", "lib") and len(parts) > 1 else 0


def _module_of(path: str) -> list[str]:
    """A Python file's module path as its parts (``src/pkg/mod.py`` -> pkg, mod; a package's ``__init__``: the
    package)."""
    parts = path.removesuffix(".py").split("/")[_top_depth(path):]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _relative_target(path: str, module: tree_sitter.Node) -> str | None:
    """Where a relative import's module is, seen from the file at ``path``, as a path without suffix (``from
    ..util import f`` in ``src/pkg/sub/m.py`` -> ``src/pkg/util``; ``from . import x`` -> ``src/pkg/sub``); None
    when it climbs out of the tree."""
    dots = next((c for c in module.children if c.type == "import_prefix"), None)
    name = next((c for c in module.children if c.type == "dotted_name"), None)
    base = posixpath.dirname(path)
    for _ in range(len(dots.text or b"") - 1 if dots is not None else 0):
        if not base:
            return None
        base = posixpath.dirname(base)
    return posixpath.join(base, *name.text.decode("utf-8").split(".")) if name is not None and name.text else base


def _module_spelling(path: str, target: str, relative: bool) -> str | None:
    """How the file at ``path`` names the module (or package) at ``target`` (a path without suffix) in a ``from``
    import: relative when it was (``..util``) and both are in the same top-level package, else absolute
    (``pkg.util``); None when there is no name for it (a top-level folder)."""
    here = [p for p in posixpath.dirname(path).split("/") if p]
    there = [p for p in target.split("/") if p]
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    if relative and common > _top_depth(path):
        return "." * (len(here) - common + 1) + ".".join(there[common:])
    absolute = there[_top_depth(target + ".py"):]
    return ".".join(absolute) or None


def _bare_uses(root: tree_sitter.Node, name: bytes) -> tuple[list[tree_sitter.Node], bool]:
    """The identifiers ``name`` that a file uses as a module (``name.f()``, outside its imports), and whether it
    uses the name any other way too (passed on, assigned, shadowed: then only an alias keeps every use right)."""
    uses: list[tree_sitter.Node] = []
    other = False
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("import_statement", "import_from_statement"):
            continue
        if node.type == "identifier" and node.text == name:
            parent = node.parent
            if parent is not None and parent.type == "attribute" and _same(parent.child_by_field_name("object"), node):
                uses.append(node)
            elif not (parent is not None and parent.type == "attribute"):  # (``x.name`` is another thing's member)
                other = True
            continue
        stack.extend(node.children)
    return uses, other


def _retarget_python(path: str, root: tree_sitter.Node, old_file: str, new_file: str) -> list[tuple[int, int, str]]:
    """The changes that point a Python file's imports of the module at ``old_file`` to ``new_file`` (see
    :func:`retarget_imports`)."""
    old_module, new_module = _module_of(old_file), _module_of(new_file)
    old_path, new_path = old_file.removesuffix(".py"), new_file.removesuffix(".py")
    dotted_old = ".".join(old_module).encode("utf-8")
    changes: list[tuple[int, int, str]] = []
    spelled = False  # ``import a.b.old`` without ``as``: its uses spell the module (``a.b.old.f()``)
    uses: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            for item in node.named_children:
                dotted = item.child_by_field_name("name") if item.type == "aliased_import" else item
                if dotted is not None and dotted.type == "dotted_name" and dotted.text == dotted_old:
                    changes.append((dotted.start_byte, dotted.end_byte, ".".join(new_module)))
                    spelled = spelled or item.type != "aliased_import"
            continue
        if node.type in ("attribute", "identifier") and node.text == dotted_old and node.parent is not None \
                and node.parent.type == "attribute" and _same(node.parent.child_by_field_name("object"), node):
            uses.append(node)
            continue
        if node.type != "import_from_statement":
            stack.extend(node.children)
            continue
        module = node.child_by_field_name("module_name")
        if module is None:
            continue
        relative = module.type == "relative_import"
        if path == new_file and relative:  # the moved file's own relative imports: from where it was
            if posixpath.dirname(old_file) != posixpath.dirname(new_file):
                target = _relative_target(old_file, module)
                spelling = _module_spelling(new_file, target, True) if target is not None else None
                if spelling is not None and spelling != (module.text or b"").decode("utf-8"):
                    changes.append((module.start_byte, module.end_byte, spelling))
            continue
        target = _relative_target(path, module) if relative else None
        names = (module.text or b"").decode("utf-8").split(".") if not relative else None
        if names == old_module or (target is not None and target == old_path):  # ``from pkg.old import f``
            spelling = _module_spelling(path, new_path, relative)
            if spelling is not None:
                changes.append((module.start_byte, module.end_byte, spelling))
            continue
        if names != old_module[:-1] and (target is None or target != posixpath.dirname(old_path)):
            continue
        items = node.children_by_field_name("name")  # ``from pkg import old``: the module imported as a name
        for item in items:
            name = item.child_by_field_name("name") if item.type == "aliased_import" else item
            if name is None or name.text != old_module[-1].encode("utf-8"):
                continue
            if new_module[:-1] != old_module[:-1]:  # another package: only a statement importing it alone moves
                package = _module_spelling(path, posixpath.dirname(new_path), relative)
                if len(items) != 1 or package is None:
                    continue
                changes.append((module.start_byte, module.end_byte, package))
            renamed = new_module[-1]
            if item.type != "aliased_import" and renamed != old_module[-1]:
                bound, other = _bare_uses(root, name.text)
                if other:  # used other ways than ``old.f()``: the old name stays bound to the moved module
                    renamed = f"{renamed} as {old_module[-1]}"
                else:
                    changes += [(use.start_byte, use.end_byte, new_module[-1]) for use in bound]
            if renamed != old_module[-1]:
                changes.append((name.start_byte, name.end_byte, renamed))
    if spelled:
        changes += [(use.start_byte, use.end_byte, ".".join(new_module)) for use in uses]
    return changes


def retarget_imports(path: str, text: str, old_file: str, new_file: str) -> tuple[str, int]:
    """``text`` (the file at ``path``) with each import of the module at ``old_file`` pointed at ``new_file``
    instead (a rename that moves its file), and how many changed. JavaScript / TypeScript: each relative
    specifier that resolves to it, rewritten relative to ``path`` (without an extension where it had none); in
    the moved file itself (``path`` == ``new_file``), its own relative specifiers, kept pointing where they did.
    Python: ``from`` imports that name the module (absolute, or relative from any folder), ``import a.b`` (with its
    uses ``a.b.f()`` where it has no ``as``), ``from pkg import old`` of the module itself (its ``old.f()`` uses
    renamed with it, or ``new as old`` where the file uses the name another way; from another package only when the
    statement imports it alone), and in the moved file, its own relative imports, which the move would break (made
    absolute where they would climb out of the top-level package). Any other language is left."""
    language = language_for(path)
    if language is None:
        return text, 0
    data = text.encode("utf-8")
    root = grammar(language).parser.parse(data).root_node
    changes: list[tuple[int, int, str]] = []
    if language in _SCRIPT:
        for fragment in _specifier_strings(root):
            spec = (fragment.text or b"").decode("utf-8")
            if not spec.startswith("."):
                continue
            if path == new_file:  # the moved file: its own specifiers, from where it was to where it is
                target = posixpath.normpath(posixpath.join(posixpath.dirname(old_file), spec))
                if posixpath.dirname(old_file) == posixpath.dirname(new_file):
                    continue
                moved = _relative(new_file, target)
            elif _resolves_to(path, spec, old_file):
                keeps_suffix = any(spec.endswith(s) for s in _SCRIPT_SUFFIXES)
                moved = _relative(path, new_file if keeps_suffix else posixpath.splitext(new_file)[0])
            else:
                continue
            if moved != spec:
                changes.append((fragment.start_byte, fragment.end_byte, moved))
    elif language == "python" and old_file.endswith(".py") and new_file.endswith(".py"):
        changes = _retarget_python(path, root, old_file, new_file)
    out = bytearray(data)
    for start, end, value in sorted(changes, reverse=True):
        out[start:end] = value.encode("utf-8")
    return out.decode("utf-8"), len(changes)
