"""Chunking at definition boundaries: real tree-sitter tags of small real snippets in each language."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.workspace import Workspace
from contenox.workspace._chunks import MAX_LINES, MODULE, chunk_file
from contenox.workspace._tags import extract_tags

# language -> (file name, source, expected (name, kind, first line text) of the chunks holding code)
SNIPPETS: dict[str, tuple[str, str, list[tuple[str, str, str]]]] = {
    "python": ("m.py", (
        "import os\n\n\n@dataclass\nclass Signer:\n    \"\"\"Signs.\"\"\"\n    sep = '.'\n\n"
        "    def sign(self, value):\n        return value + self.sep\n\n"
        "    @staticmethod\n    def unsign(value):\n        return value\n\n\n"
        "def derive_key(secret):\n    return os.urandom(4)\n"),
        [(MODULE, "module", "import os"), ("Signer", "class", "@dataclass"),
         ("Signer.sign", "method", "    def sign(self, value):"),
         ("Signer.unsign", "method", "    @staticmethod"), ("derive_key", "function", "def derive_key(secret):")]),
    "javascript": ("m.js", (
        "import { x } from './x';\n\nclass Store {\n  put(key) {\n    return x(key);\n  }\n}\n\n"
        "function render(user) {\n  return user;\n}\n"),
        [(MODULE, "module", "import { x } from './x';"), ("Store", "class", "class Store {"),
         ("Store.put", "method", "  put(key) {"), ("render", "function", "function render(user) {")]),
    "typescript": ("m.ts", (
        "export class HttpClient {\n  async fetchUser(id: number): Promise<string> {\n    return request(id);\n"
        "  }\n}\n\nexport function request(id: number): Promise<string> {\n  return fetch(String(id));\n}\n"),
        [("HttpClient", "class", "export class HttpClient {"),
         ("HttpClient.fetchUser", "method", "  async fetchUser(id: number): Promise<string> {"),
         ("request", "function", "export function request(id: number): Promise<string> {")]),
    "go": ("m.go", (
        "package store\n\ntype Store struct {\n\titems map[string]string\n}\n\n"
        "func (s *Store) Put(key, value string) {\n\ts.items[key] = value\n}\n"),
        [(MODULE, "module", "package store"), ("Store", "type", "type Store struct {"),
         ("Store.Put", "method", "func (s *Store) Put(key, value string) {")]),
    "rust": ("m.rs", (
        "#[derive(Debug)]\npub struct Store {\n    items: Vec<i32>,\n}\n\nimpl Store {\n"
        "    pub fn new() -> Self {\n        Store { items: Vec::new() }\n    }\n}\n"),
        [("Store", "class", "#[derive(Debug)]"), (MODULE, "module", "impl Store {"),
         ("Store.new", "method", "    pub fn new() -> Self {")]),
    "java": ("Store.java", (
        "package app;\n\npublic class Store {\n    private int size;\n\n    @Override\n"
        "    public String toString() {\n        return \"store\";\n    }\n}\n"),
        [(MODULE, "module", "package app;"), ("Store", "class", "public class Store {"),
         ("Store.toString", "method", "    @Override")]),
    "c": ("m.c", (
        "#include <stdio.h>\n\nstruct list {\n    int v;\n};\n\n/* counts */\nstatic int\n"
        "count(struct list *l)\n{\n    return l->v;\n}\n"),
        [(MODULE, "module", "#include <stdio.h>"), ("list", "class", "struct list {"),
         ("count", "function", "/* counts */")]),
    "cpp": ("m.cpp", (
        "namespace app {\nclass Store {\npublic:\n  void put(int it);\n  int get() {\n    return 1;\n  }\n};\n"
        "void Store::put(int it) {\n  it++;\n}\n}\n"),
        [("app", "module", "namespace app {"), ("app.Store", "class", "class Store {"),
         ("app.Store.get", "function", "  int get() {"), ("app.Store.put", "method", "void Store::put(int it) {")]),
}


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_each_language_chunks_at_definitions(language: str) -> None:
    _, source, expected = SNIPPETS[language]
    tags = extract_tags(language, source.encode())
    assert all(d.end_line >= d.line for d in tags.defs)
    lines = source.split("\n")
    chunks = chunk_file(language, tags.defs, source)
    assert [(c.name, c.kind, lines[c.start - 1]) for c in chunks] == expected
    for before, after in itertools.pairwise(chunks):
        assert before.end < after.start, "chunks partition the file"


def test_methods_carry_their_class_line_and_classes_stop_at_their_first_method() -> None:
    _, source, _ = SNIPPETS["python"]
    chunks = chunk_file("python", extract_tags("python", source.encode()).defs, source)
    by_name = {c.name: c for c in chunks}
    assert (by_name["Signer"].start, by_name["Signer"].end) == (4, 7)
    assert by_name["Signer.unsign"].header == "class Signer:"
    assert (by_name["Signer.unsign"].start, by_name["Signer.unsign"].end) == (12, 14)
    assert by_name["derive_key"].header == ""


def test_an_oversized_function_is_cut_at_blank_lines() -> None:
    body = "".join(f"    x{i} = {i}\n" + ("\n" if i % 10 == 9 else "") for i in range(300))
    source = f"def big():\n{body}    return x0\n"
    chunks = chunk_file("python", extract_tags("python", source.encode()).defs, source)
    assert len(chunks) >= 3
    assert all(c.name == "big" and c.end - c.start < MAX_LINES for c in chunks)
    assert chunks[0].start == 1 and chunks[-1].end == len(source.splitlines())


def test_an_oversized_class_is_cut_at_its_methods() -> None:
    methods = "".join(f"    def m{i}(self):\n" + "        pass\n" * 20 + "\n" for i in range(10))
    source = f"class Big:\n    size = 1\n\n{methods}"
    chunks = chunk_file("python", extract_tags("python", source.encode()).defs, source)
    assert [c.name for c in chunks] == ["Big"] + [f"Big.m{i}" for i in range(10)]
    assert chunks[0].end == 2


def test_chunk_at_reads_the_editor_overlay(make_repo: Callable[..., Path],
                                           open_ws: Callable[..., Workspace]) -> None:
    ws = open_ws(make_repo())
    chunk = ws.chunk_at("app/models.py", 10)
    assert chunk is not None and (chunk.name, chunk.start_line, chunk.end_line) == ("format_name", 9, 10)
    ws.set_overlay("app/models.py", (Path(ws.root) / "app/models.py").read_text().replace(
        "name.title()", "name.upper()"))
    ws.refresh()
    changed = ws.chunk_at("app/models.py", 10)
    assert changed is not None and "name.upper()" in changed.text
    assert ws.chunk_at("app/models.py", 8) is None  # the blank lines between definitions
    assert ws.chunk_at("README.md", 1) is None
