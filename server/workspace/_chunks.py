"""A file cut into retrieval chunks at its tree-sitter definition boundaries.

Chunks come from the definitions the tags already hold (name line, end line) plus the file's lines, so they
are as cheap as a line scan and follow the tags cache. A file is partitioned: each function or method is a
chunk; a class (interface, namespace) chunk covers its first line through the line before its first member;
code between definitions (imports, constants, top-level statements) forms ``<module>`` chunks; a definition
over :data:`MAX_LINES` lines is cut at its inner definitions, else at blank lines. Lines holding only
brackets or blanks between chunks belong to none.
"""

from __future__ import annotations

import re

import msgspec

from contenox.workspace._model import Definition

__all__ = ["MAX_LINES", "MODULE", "Chunk", "chunk_file"]

MAX_LINES = 120
"""A definition longer than this is cut into pieces."""
MODULE = "<module>"
"""Name of the chunks holding code between definitions."""

_CONTAINERS = frozenset({"class", "interface", "module"})
_BLOCKS = frozenset({"class", "interface", "module", "function", "method", "type", "macro"})
_CONTENT = re.compile(r"[A-Za-z0-9_]")
_GO_RECEIVER = re.compile(r"^func\s*\(\s*\w*\s*\*?\s*(\w+)")
_RUST_IMPL = re.compile(r"^\s*impl\b(?:\s*<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?(?:\w+::)*(\w+)")


class Chunk(msgspec.Struct, frozen=True, array_like=True):
    """A range of a file's lines (1-based, inclusive) and what it defines."""

    start: int
    end: int
    name: str
    """Qualified by its containers (``Signer.unsign``); :data:`MODULE` for code between definitions."""
    kind: str
    header: str
    """The enclosing container's first line (``class Signer:``, ``impl Store {``) or ''."""


class _Node:
    __slots__ = ("children", "d", "end", "start")

    def __init__(self, d: Definition) -> None:
        self.d = d
        self.start = d.line
        self.end = max(d.line, d.end_line)
        self.children: list[_Node] = []


def _is_block(d: Definition) -> bool:
    if d.kind not in _BLOCKS:
        return False
    if d.end_line <= d.line:  # one line: a declaration (``void put(int);``) or a one-line alias
        return d.kind in ("function", "method") and not d.text.rstrip().endswith(";")
    return True


def _leads_in(line: str, language: str) -> bool:
    """Whether ``line`` (stripped) belongs to the definition below it: decorators, attributes, comments."""
    if not line:
        return False
    if line.startswith(("@", "#[", "//", "/*", "*", "template")):
        return True
    if language == "python":
        return line.startswith("#")
    if language in ("c", "cpp"):  # ``static int`` above ``count(struct list *l)``
        return not line.startswith("#") and not line.endswith((";", "}", "{", ")", ",", ":", "\\"))
    return False


def _tree(defs: tuple[Definition, ...]) -> list[_Node]:
    roots: list[_Node] = []
    stack: list[_Node] = []
    for node in sorted((_Node(d) for d in defs if _is_block(d)), key=lambda n: (n.start, -n.end, n.d.name)):
        while stack and node.start > stack[-1].end:
            stack.pop()
        if stack:
            parent = stack[-1]
            node.end = min(node.end, parent.end)
            if node.start == parent.start:
                continue  # the same span tagged twice (``const f = function f() {}``)
            parent.children.append(node)
        else:
            roots.append(node)
        stack.append(node)
    return roots


class _Cutter:
    def __init__(self, lines: list[str], language: str) -> None:
        self.lines = lines
        self.language = language
        self.out: list[Chunk] = []

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def has_content(self, start: int, end: int) -> bool:
        return any(_CONTENT.search(self.line(i)) for i in range(start, end + 1))

    def pieces(self, start: int, end: int, name: str, kind: str, header: str) -> None:
        """Lines start..end (blank edges trimmed) as chunks of at most MAX_LINES, cut at blank lines."""
        while start <= end and not self.line(start).strip():
            start += 1
        while end >= start and not self.line(end).strip():
            end -= 1
        while start <= end:
            stop = end
            if end - start + 1 > MAX_LINES:
                stop = start + MAX_LINES - 1
                blank = next((i for i in range(stop, start + MAX_LINES // 3, -1) if not self.line(i).strip()), 0)
                stop = blank - 1 if blank else stop
            if self.has_content(start, stop):
                self.out.append(Chunk(start=start, end=stop, name=name, kind=kind, header=header))
            start = stop + 1
            while start <= end and not self.line(start).strip():
                start += 1

    def lead_in(self, nodes: list[_Node], floor: int) -> None:
        """Start each node at its decorators / comments, never before ``floor`` or its previous sibling."""
        for node in nodes:
            start = max(node.start, floor)
            while start > floor and _leads_in(self.line(start - 1).strip(), self.language):
                start -= 1
            node.start = start
            floor = node.end + 1

    def level(self, nodes: list[_Node], lo: int, hi: int, prefix: str, header: str, kind: str,
              owner: str) -> None:
        """Chunks of lines lo..hi holding ``nodes``; gaps between them are ``owner`` pieces."""
        self.lead_in(nodes, lo)
        position = lo
        for node in nodes:
            if node.start > node.end:
                continue
            self.pieces(position, node.start - 1, owner, kind, header)
            self.node(node, prefix, header)
            position = node.end + 1
        self.pieces(position, hi, owner, kind, header)

    def node(self, node: _Node, prefix: str, header: str) -> None:
        d = node.d
        name, header = self.qualify(d, prefix, header)
        size = node.end - node.start + 1
        if node.children and (d.kind in _CONTAINERS or size > MAX_LINES):
            self.lead_in(node.children, d.line + 1)
            first = node.children[0].start
            self.pieces(node.start, first - 1, name, d.kind, header)
            self.level(node.children, first, node.end, name + ".", self.line(d.line).rstrip(), d.kind, name)
        else:
            self.pieces(node.start, node.end, name, d.kind, header)

    def qualify(self, d: Definition, prefix: str, header: str) -> tuple[str, str]:
        """The qualified name and header of a definition; methods outside a class body find their owner in
        the text (Go receivers, ``Store::put``, Rust ``impl`` blocks)."""
        if d.kind != "method":
            return prefix + d.name, header
        text = self.line(d.line)
        owner = ""
        if self.language == "go":
            found = _GO_RECEIVER.match(text.strip())
            owner = found.group(1) if found else ""
        elif (found := re.search(rf"(\w+)::{re.escape(d.name)}\b", text)) is not None:
            owner = found.group(1)
        indent = len(text) - len(text.lstrip())
        if indent and not prefix:
            for number in range(d.line - 1, 0, -1):
                above = self.line(number)
                if above.strip() and len(above) - len(above.lstrip()) < indent:
                    header = above.rstrip()
                    impl = _RUST_IMPL.match(above)
                    owner = owner or (impl.group(1) if impl else "")
                    break
        return prefix + (f"{owner}.{d.name}" if owner else d.name), header


def chunk_file(language: str, defs: tuple[Definition, ...], text: str) -> tuple[Chunk, ...]:
    """The chunks of one file's ``text`` given its definitions, in line order."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cutter = _Cutter(lines, language)
    cutter.level(_tree(defs), 1, len(lines), "", "", "module", MODULE)
    return tuple(sorted(cutter.out, key=lambda c: c.start))
