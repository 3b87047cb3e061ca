"""Languages the index understands: file suffixes, tree-sitter grammars and tags queries (package data)."""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
from collections.abc import Callable
from typing import Any

import tree_sitter
import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

__all__ = ["LANGUAGES", "Grammar", "grammar", "language_for", "queries_digest"]

_GRAMMARS: dict[str, tuple[Callable[[], Any], str]] = {
    "python": (tree_sitter_python.language, "python"),
    "javascript": (tree_sitter_javascript.language, "javascript"),
    "typescript": (tree_sitter_typescript.language_typescript, "typescript"),
    "tsx": (tree_sitter_typescript.language_tsx, "typescript"),
    "go": (tree_sitter_go.language, "go"),
    "rust": (tree_sitter_rust.language, "rust"),
    "java": (tree_sitter_java.language, "java"),
    "c": (tree_sitter_c.language, "c"),
    "cpp": (tree_sitter_cpp.language, "cpp"),
}

_SUFFIXES = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
}

LANGUAGES: tuple[str, ...] = tuple(sorted(_GRAMMARS))


def language_for(path: str) -> str | None:
    """The language of a relative path by its suffix, or None."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _SUFFIXES.get(path[dot:].lower())


def _query_text(query_name: str) -> str:
    resource = importlib.resources.files("contenox.workspace") / "queries" / f"{query_name}-tags.scm"
    return resource.read_text(encoding="utf-8")


def _split_patterns(text: str) -> tuple[str, str]:
    """The definition patterns and the reference patterns of a tags query (patterns are separated by
    blank lines in our ``queries/*.scm``)."""
    defs: list[str] = []
    refs: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        body = "\n".join(line for line in block.splitlines() if not line.lstrip().startswith(";"))
        if "@definition." in body:
            defs.append(body)
        elif "@reference." in body:
            refs.append(body)
    return "\n\n".join(defs), "\n\n".join(refs)


class Grammar:
    """A language's parser and its two compiled queries (definitions, references)."""

    def __init__(self, language: str) -> None:
        factory, query_name = _GRAMMARS[language]
        lang = tree_sitter.Language(factory())
        defs_text, refs_text = _split_patterns(_query_text(query_name))
        self.parser = tree_sitter.Parser(lang)
        self.defs = tree_sitter.Query(lang, defs_text)
        self.refs = tree_sitter.Query(lang, refs_text)


@functools.cache
def grammar(language: str) -> Grammar:
    """The parser and tags queries for ``language`` (one per process)."""
    return Grammar(language)


@functools.cache
def queries_digest() -> str:
    """Digest of every tags query: part of the tags cache version."""
    digest = hashlib.sha256(tree_sitter.__version__.encode() if hasattr(tree_sitter, "__version__") else b"")
    for name in sorted({query for _, query in _GRAMMARS.values()}):
        digest.update(name.encode())
        digest.update(_query_text(name).encode())
    return digest.hexdigest()[:16]
