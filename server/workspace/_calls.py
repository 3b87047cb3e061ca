"""The calls the code a question names makes, read from the source (not run): a small tree.

A question about how something works ("How does ``loads(token, max_age=60)`` get to the expiry check?", "Walk me
through what happens between load_dotenv() and os.environ") is answered by following calls; the small models read
the retrieved code one chunk at a time and name the first function or two. :func:`call_tree` follows them instead,
from the definitions the question names: each call in a definition's body, in source order, resolved to the one
definition it reaches where the source says which (a plain name with one definer, ``self.x()`` / ``this.x()`` on
the class and its bases, ``Class.x()`` / ``new Class()``, ``x()`` on an object just built or on a name the body
gives one); a call that could reach several definitions and says nothing to pick one is left out rather than
guessed, and a regular expression's own ``test()`` reaches none. The tree is what the prompt shows; nothing here
runs code.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Sequence

from contenox.answer.questions import asks_how_it_works
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._model import Definition
from contenox.workspace._scorers import is_test

__all__ = ["CallNode", "asks_how_it_works", "call_tree", "render_tree"]  # (asks_how_it_works: contenox.answer.questions)

_CALL = re.compile(r"(?:\b(?P<new>new)\s+)?(?:(?P<recv>[A-Za-z_$][\w$]*|super\(\))\s*\.\s*)?"
                   r"(?P<name>[A-Za-z_$][\w$]*)\s*\(")
_DEFINING = re.compile(r"\b(?:def|function|class|async\s+def|async\s+function|fn|func)\s+$")
_BASES = re.compile(r"^\s*class\s+\w+\s*(?:\((?P<py>[^)]*)\)|extends\s+(?P<js>[\w$.]+))")
_ASSIGNED = re.compile(r"(?:^|[\s;,(])(?:(?:const|let|var)\s+)?(?P<var>[A-Za-z_$][\w$]*)\s*=(?!=)\s*"
                       r"(?:new\s+)?(?P<cls>[A-Z][\w$]*)\s*\(")
"""An assignment of a built object to a plain name: ``range = new Range(range, options)``, ``s = Serializer(k)``."""
_REGEX_END = re.compile(r"/[dgimsuyv]*$")
"""JavaScript code ending with a regular expression literal (a ``.test()`` after it is the RegExp's)."""
_REGEX_NAME = re.compile(r"^\s*(?:(?:const|let|var)\s+)?(?P<var>[A-Za-z_$][\w$]*)\s*=\s*/[^/\n]+/[dgimsuyv]*\s*;?\s*$")
"""A JavaScript name given a regular expression literal (``const numeric = /^[0-9]+$/``)."""
_CONSTRUCTORS = ("__init__", "constructor", "__new__")
_SELF = {"self", "cls", "this"}
_SKIP = {*dir(builtins), "if", "for", "while", "return", "elif", "switch", "catch", "with", "not", "and", "or", "in",
         "require", "Number", "String", "Array", "Object", "Math", "JSON", "Error", "TypeError", "Promise", "Date",
         "Symbol", "Map", "Set", "RegExp", "parseInt", "parseFloat", "typeof", "super"}
_CALLABLE = ("function", "method", "class", "constructor", "classmethod", "staticmethod", "property")

DEPTH = 5
"""Levels of calls below each root."""
ALTERNATIVES = 3
"""Definitions an ``obj.x()`` call is shown reaching when several classes define ``x``: all, up to this many."""
CHILDREN = 6
"""Calls shown under one definition (the first in source order)."""
LINES = 30
"""Lines in the whole tree."""
ROOTS = 3


class CallNode:
    """A definition in the tree: its qualified name, where it is, and the calls it makes that resolved."""

    __slots__ = ("again", "among", "children", "line", "name", "path")

    def __init__(self, name: str, path: str, line: int, *, among: int = 1) -> None:
        self.name, self.path, self.line = name, path, line
        self.again: list[str] = []
        """Calls to definitions the tree already shows (named on this definition's line, not repeated)."""
        self.among = among
        """How many definitions the call could reach (more than one: ``obj.x()`` whose object decides)."""
        self.children: list[CallNode] = []


class _Resolver:
    def __init__(self, index: SymbolIndex, read_lines: Callable[[str], list[str]]) -> None:
        self.index, self.read_lines = index, read_lines

    def owner(self, path: str, d: Definition) -> Definition | None:
        """The innermost class whose lines hold ``d`` (its container), or None."""
        tags = self.index.tags.get(path)
        holders = [c for c in (tags.defs if tags else ()) if c.kind == "class" and c is not d
                   and c.line < d.line <= c.end_line]
        return max(holders, key=lambda c: c.line, default=None)

    def qualified(self, path: str, d: Definition) -> str:
        owner = self.owner(path, d)
        return f"{owner.name}.{d.name}" if owner is not None and d.kind != "class" else d.name

    def defs(self, name: str, *, tests: bool = False) -> list[tuple[str, Definition]]:
        """The callable definitions of ``name`` outside tests (with ``tests``: in tests alone); of a class's
        overloads (``@typing.overload`` stubs before the implementation) the last."""
        found: dict[tuple[str, int | None], tuple[str, Definition]] = {}
        for p, d in self.index.definitions(name):
            if is_test(p) == tests and d.kind in _CALLABLE:
                owner = self.owner(p, d)
                found[(p, owner.line if owner is not None else -d.line)] = (p, d)
        return list(found.values())

    def classes(self, name: str) -> list[tuple[str, Definition]]:
        return [(p, d) for p, d in self.index.definitions(name) if not is_test(p) and d.kind == "class"]

    def mro(self, cls: str, depth: int = 0) -> list[tuple[str, Definition]]:
        """``cls`` and its bases that the workspace defines, in Python's method resolution order (C3; JavaScript's
        single ``extends`` chain is the same list)."""
        found = self.classes(cls)
        if len(found) != 1 or depth > 8:
            return []
        path, klass = found[0]
        tails = [t for t in (self.mro(b, depth + 1) for b in self.bases(path, klass)) if t]
        out = [(path, klass)]
        while tails:
            heads = [t[0] for t in tails]
            pick = next((h for h in heads if not any(h in t[1:] for t in tails)), heads[0])
            out.append(pick)
            tails = [rest for t in tails if (rest := [c for c in t if c != pick])]
        return out

    def method(self, cls: str, name: str) -> tuple[str, Definition] | None:
        """``cls.name``: defined by the class or the first of its bases in resolution order."""
        for path, klass in self.mro(cls):
            own = [(p, d) for p, d in self.defs(name) if p == path and d.kind != "class"
                   and (o := self.owner(p, d)) is not None and o.line == klass.line]
            if own:
                return own[0]
        return None

    def bases(self, path: str, klass: Definition) -> list[str]:
        lines = self.read_lines(path)
        head = " ".join(lines[klass.line - 1:klass.line + 2]) if klass.line - 1 < len(lines) else klass.text
        m = _BASES.match(head)
        if m is None:
            return []
        raw = m.group("py") if m.group("py") is not None else (m.group("js") or "")
        names = [b.split("[", 1)[0].strip().rsplit(".", 1)[-1] for b in raw.split(",") if "=" not in b]
        return [n for n in names if n.isidentifier()]  # ``abc.Base`` -> Base, ``Generic[T]`` -> Generic

    def construct(self, path: str, klass: Definition) -> tuple[str, Definition]:
        """What ``Class(...)`` runs: its constructor where the class (or a base) defines one, else the class."""
        for name in _CONSTRUCTORS:
            hit = self.method(klass.name, name)
            if hit is not None:
                return hit
        return path, klass

    def resolve(self, recv: str | None, name: str, new: bool, at: tuple[str, Definition],
                ctx: str | None) -> list[tuple[str, Definition, str | None]]:
        """The definitions a call reaches, each with the class its own ``self`` calls resolve on: one where the
        source says which, up to :data:`ALTERNATIVES` for ``obj.x()`` that several classes define (the object
        decides), none when it says nothing to pick one."""
        if recv is None and (name in _SKIP or name in _CONSTRUCTORS):
            return []
        if recv == "super()":
            chain = self.mro(ctx or "") or self.mro(self._owner_name(*at) or "")
            owner = self._owner_name(*at)
            after = [c for i, c in enumerate(chain) if any(k[1].name == owner for k in chain[:i])]
            for _, klass in after:
                hit = self.method(klass.name, name)
                if hit is not None:
                    return [(*hit, ctx)]
            return []
        if recv in _SELF:
            for cls in dict.fromkeys(c for c in (ctx, self._owner_name(*at)) if c):
                hit = self.method(cls, name)
                if hit is not None:
                    return [(*hit, cls)]
            return []
        if recv is not None and recv[:1].isupper() and len(self.classes(recv)) == 1:
            hit = self.method(recv, name)
            return [(*hit, recv)] if hit is not None else []
        found = self.defs(name)
        if recv is None or new:
            plain = [(p, d) for p, d in found if d.kind == "class" or self.owner(p, d) is None]
            if len(plain) != 1:
                return []
            path, d = plain[0]
            return [(path, d, d.name)] if d.kind == "class" else [(path, d, None)]
        methods = [(p, d) for p, d in found if d.kind != "class" and self.owner(p, d) is not None]
        if len(methods) != len(found) or not 0 < len(methods) <= ALTERNATIVES:
            return []
        return [(p, d, self._owner_name(p, d)) for p, d in methods]

    def _owner_name(self, path: str, d: Definition) -> str | None:
        owner = self.owner(path, d)
        return owner.name if owner is not None else None

    def _built(self, codes: Sequence[str]) -> dict[str, str]:
        """The local names a body assigns an object it builds to, each with the class (only where every assignment
        to the name builds the same class, one the workspace defines once)."""
        return {var: next(iter(made)) for var, made in _assigned_classes(codes).items()
                if var not in _SELF and len(made) == 1 and len(self.classes(next(iter(made)))) == 1}

    def calls(self, path: str, d: Definition, ctx: str | None) -> list[tuple[str, Definition, str | None, int]]:
        """What ``d``'s body calls, in source order, each once (not ``d`` itself): (path, definition, its class
        context, how many definitions the call could reach)."""
        # the body: the definition line itself calls nothing, but a definition on one line is its own body
        # (``const lt = (a, b, loose) => compare(a, b, loose) < 0``; its own name is skipped as defined below)
        source = self.read_lines(path)
        lines = source[d.line - 1 if d.end_line <= d.line else d.line:d.end_line]
        out: dict[tuple[str, int], tuple[str, Definition, str | None, int]] = {}
        codes = [line.split("#", 1)[0] if path.endswith(".py") else line.split("//", 1)[0] for line in lines]
        built = self._built(codes)
        regexes = {m.group("var") for code in source if (m := _REGEX_NAME.match(code))}  # (module constants too)
        for code in codes:
            for m in _CALL.finditer(code):
                if _DEFINING.search(code[:m.start()]):
                    continue
                recv = m.group("recv")
                before = code[:m.start()].rstrip()
                if recv is None and before.endswith("."):  # ``make().x()``: some object's x,
                    if _REGEX_END.search(before[:-1]):  # (``/^[0-9]+$/.test(a)``: a regular expression's own)
                        continue
                    made = _constructed(before[:-1])  # ``new SemVer(a).compare()``: SemVer's
                    recv = made if made is not None and len(self.classes(made)) == 1 else ""
                elif recv is not None and recv in built:  # ``range = new Range(range)``, then ``range.test()``
                    recv = built[recv]
                elif recv is not None and recv in regexes:  # ``numeric.test(a)``: the RegExp's own
                    continue
                hits = self.resolve(recv, m.group("name"), bool(m.group("new")), (path, d), ctx)
                for hpath, hd, hctx in hits:
                    if (hpath, hd.line) != (path, d.line):
                        out.setdefault((hpath, hd.line), (hpath, hd, hctx, len(hits)))
        return list(out.values())


def _assigned_classes(codes: Sequence[str]) -> dict[str, set[str]]:
    """name -> the capitalised names called in assignments to it in ``codes`` (``range = new Range(range)``,
    ``s = Serializer(key)``)."""
    out: dict[str, set[str]] = {}
    for code in codes:
        for m in _ASSIGNED.finditer(code):
            out.setdefault(m.group("var"), set()).add(m.group("cls"))
    return out


def _constructed(before: str) -> str | None:
    """The class whose construction ``before`` (code up to a call's ``.``) ends with: ``new SemVer(a, loose)``,
    ``Serializer(key)`` (a capitalised name called); None for any other object (``make(x)``, ``(a || b)``)."""
    text = before.rstrip()
    if not text.endswith(")"):
        return None
    depth = 0
    for at in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[at], 0)
        if depth == 0:
            name = re.search(r"([A-Za-z_$][\w$]*)\s*$", text[:at])
            return name.group(1) if name is not None and name.group(1)[:1].isupper() else None
    return None


def call_tree(index: SymbolIndex, read_lines: Callable[[str], list[str]],
              roots: Sequence[tuple[str, str]], *, max_lines: int = LINES) -> list[CallNode]:
    """The call trees from ``roots`` ((name, dotted form) the question names: ``loads`` /
    ``URLSafeTimedSerializer.loads``), grown level by level (so the budget goes to every branch's first calls
    before any branch's deep ones), at most :data:`DEPTH` calls deep and ``max_lines`` lines in all. A named
    definition that another named one calls is no root of its own: it is shown where it is called ("test_helper
    fails: helper(1) should be 2. Trace the test down": the tree of ``test_helper``, ``helper`` under it)."""
    r = _Resolver(index, read_lines)
    starts: list[tuple[str, Definition, str | None]] = []
    classes = {dotted.split(".")[-2] for _, dotted in roots if "." in dotted}
    for name, dotted in roots:
        if len(starts) >= ROOTS:
            break
        if name in classes:  # ``Serializer.loads`` named: the tree starts at the method, not the class
            continue
        start = _root(r, name, dotted)
        if start is not None and all((p, d.line) != (start[0], start[1].line) for p, d, _ in starts):
            starts.append(start)
    trees, reach = _grow(r, starts, max_lines)
    dropped: set[tuple[str, int]] = set()
    for path, d, _ in starts:  # (in order: of two that call each other, the later one stays the root)
        key = (path, d.line)
        if any(key in reached for other, reached in reach.items() if other != key and other not in dropped):
            dropped.add(key)
    if dropped:
        trees, _ = _grow(r, [s for s in starts if (s[0], s[1].line) not in dropped], max_lines)
    return [t for t in trees if t.children]


def _grow(r: _Resolver, starts: Sequence[tuple[str, Definition, str | None]],
          max_lines: int) -> tuple[list[CallNode], dict[tuple[str, int], set[tuple[str, int]]]]:
    """The trees from ``starts`` (:func:`call_tree`), and for each root (path, line) the other roots its calls
    reach (shown below it, or named as already shown)."""
    trees: list[CallNode] = []
    seen: set[tuple[str, int]] = set()
    level: list[tuple[CallNode, str, Definition, str | None, tuple[str, int]]] = []
    reach: dict[tuple[str, int], set[tuple[str, int]]] = {}
    lines = 0
    for path, d, ctx in starts:
        node = CallNode(r.qualified(path, d), path, d.line)
        seen.add((path, d.line))
        reach[(path, d.line)] = set()
        trees.append(node)
        level.append((node, path, d, ctx, (path, d.line)))
        lines += 1
    for _ in range(DEPTH):
        below: list[tuple[CallNode, str, Definition, str | None, tuple[str, int]]] = []
        for node, path, d, ctx, top in level:
            body = r.construct(path, d) if d.kind == "class" else (path, d)  # a construction runs its constructor
            calls = r.calls(*body, ctx)
            reach[top].update(key for cpath, cd, _, _ in calls if (key := (cpath, cd.line)) in reach)
            again = [r.qualified(cpath, cd) for cpath, cd, _, _ in calls if (cpath, cd.line) in seen]
            for cpath, cd, cctx, among in [c for c in calls if (c[0], c[1].line) not in seen][:CHILDREN]:
                if lines >= max_lines:
                    break
                child = CallNode(r.qualified(cpath, cd), cpath, cd.line, among=among)
                node.children.append(child)
                lines += 1
                seen.add((cpath, cd.line))
                below.append((child, cpath, cd, cctx, top))
            if again:  # (on the caller's own line: a call to what is shown already costs no line of the budget)
                node.again = list(dict.fromkeys(again))
        level = below
    return trees, reach


def _root(r: _Resolver, name: str, dotted: str) -> tuple[str, Definition, str | None] | None:
    parts = dotted.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        hit = r.method(parts[-2], name)
        if hit is not None:
            return (*hit, parts[-2])
    found = r.defs(name) or r.defs(name, tests=True)  # "Trace test_digests down...": a test the question names
    owned = [(p, d) for p, d in found if len(parts) >= 2 and r._owner_name(p, d) == parts[-2]]
    if len(owned) == 1:  # ``TTLCacheTest::test_ttl_expire``, where other test classes have one too
        return (*owned[0], parts[-2])
    plain = [(p, d) for p, d in found if r.owner(p, d) is None]
    if len(found) == 1 or len(plain) == 1:
        path, d = found[0] if len(found) == 1 else plain[0]
        return path, d, d.name if d.kind == "class" else r._owner_name(path, d)
    return None


def render_tree(trees: Sequence[CallNode]) -> str:
    """The trees as indented lines: ``name (path:line)``; calls to what is already shown named on the caller's line."""
    out: list[str] = []

    def walk(node: CallNode, depth: int) -> None:
        mark = f" (one of {node.among} methods of that name: the object decides)" if node.among > 1 else ""
        again = f"; also calls {', '.join(node.again)} (shown in the tree)" if node.again else ""
        out.append(f"{'  ' * depth}{'-> ' if depth else ''}{node.name} ({node.path}:{node.line}){mark}{again}")
        for child in node.children:
            walk(child, depth + 1)

    for tree in trees:
        walk(tree, 0)
    return "\n".join(out)
