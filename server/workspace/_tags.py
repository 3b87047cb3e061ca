"""Definitions and references of one file's bytes, from its tree-sitter tags query."""

from __future__ import annotations

from collections import Counter

import tree_sitter

from contenox.workspace._languages import grammar
from contenox.workspace._model import Definition, FileTags

__all__ = ["MAX_LINE_CHARS", "extract_tags", "extract_tags_job"]

MAX_LINE_CHARS = 160


def _line_text(lines: list[bytes], row: int) -> str:
    if row >= len(lines):
        return ""
    text = lines[row].decode("utf-8", errors="replace").rstrip().replace("\t", "    ")
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def _python_kind(node: tree_sitter.Node, kind: str) -> str:
    if kind != "function":
        return kind
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is not None and parent.type == "block":
        owner = parent.parent
        if owner is not None and owner.type == "class_definition":
            return "method"
    return kind


def _definitions(language: str, query: tree_sitter.Query, root: tree_sitter.Node,
                 data: bytes) -> tuple[Definition, ...]:
    defs: dict[tuple[str, int, str], Definition] = {}
    lines: list[bytes] | None = None
    for _, captures in tree_sitter.QueryCursor(query).matches(root):
        names = captures.get("name")
        if not names:
            continue
        for capture, nodes in captures.items():
            if not capture.startswith("definition."):
                continue
            node = nodes[0]
            base_kind = capture[len("definition."):]
            kind = _python_kind(node, base_kind) if language == "python" else base_kind
            if lines is None:
                lines = data.split(b"\n")
            for name_node in names:
                raw = name_node.text
                if not raw:
                    continue
                name = raw.decode("utf-8", errors="replace")
                row = name_node.start_point.row
                key = (name, row, kind)
                end_line = node.end_point.row + 1
                found = defs.get(key)
                if found is None or found.end_line < end_line:  # C++: the definition spans its body
                    defs[key] = Definition(name=name, kind=kind, line=row + 1, end_line=end_line,
                                           text=_line_text(lines, row))
            break
    return tuple(sorted(defs.values(), key=lambda d: (d.line, d.name, d.kind)))


def extract_tags(language: str, data: bytes) -> FileTags:
    """Tags of ``data`` parsed as ``language``; a tree with syntax errors still gives its tags."""
    g = grammar(language)
    tree = g.parser.parse(data)
    root = tree.root_node
    defs = _definitions(language, g.defs, root, data)
    names = tree_sitter.QueryCursor(g.refs).captures(root).get("name", [])
    counts = Counter(node.text for node in names)
    refs = sorted((raw.decode("utf-8", errors="replace"), n) for raw, n in counts.items() if raw)
    return FileTags(defs=defs, refs=tuple(refs), partial=root.has_error)


def extract_tags_job(job: tuple[str, bytes]) -> FileTags | str:
    """Process-pool entry point: the tags of ``(language, data)``, or the error as text."""
    try:
        return extract_tags(*job)
    except Exception as exc:  # reported by the caller for the file
        return f"{type(exc).__name__}: {exc}"
