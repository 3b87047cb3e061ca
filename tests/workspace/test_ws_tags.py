"""Definitions and references per language, from the package's tags queries."""

from __future__ import annotations

import pytest

from contenox.workspace._languages import LANGUAGES, language_for
from contenox.workspace._tags import extract_tags

SOURCES: dict[str, tuple[str, str, set[tuple[str, str]], set[str]]] = {
    "python": ("m.py", (
        "import os\nfrom pkg.base import Base\n\nLIMIT = 3\n\n"
        "@register\nclass Store(Base):\n    def put(self, key: Item) -> None:\n        save(key)\n\n"
        "def save(item):\n    return os.path.join(item.name)\n"),
        {("LIMIT", "constant"), ("Store", "class"), ("put", "method"), ("save", "function")},
        {"Base", "register", "Item", "save", "join"}),
    "javascript": ("m.js", (
        "import { helper } from './h';\nclass Widget extends Base {\n  render() { return helper(this); }\n}\n"
        "function mount(el) { return new Widget(el); }\nconst unmount = (el) => el.remove();\n"),
        {("Widget", "class"), ("render", "method"), ("mount", "function"), ("unmount", "function")},
        {"helper", "Widget", "Base", "remove"}),
    "typescript": ("m.ts", (
        "export interface Shape { area(): number; }\nexport type Id = string;\nenum Color { Red }\n"
        "export class Circle implements Shape {\n  area(): number { return compute(this.r); }\n}\n"
        "export function compute(r: number): number { return Math.PI * r * r; }\n"
        "abstract class Base { abstract size(): number; }\nconst make = (): Circle => new Circle();\n"),
        {("Shape", "interface"), ("Id", "type"), ("Color", "type"), ("Circle", "class"), ("area", "method"),
         ("compute", "function"), ("Base", "class"), ("size", "method"), ("make", "function")},
        {"compute", "Circle", "Shape"}),
    "tsx": ("m.tsx", (
        "export function Button(props: Props) { return <button onClick={props.onClick}>{label()}</button>; }\n"
        "class Panel extends Component<Props> { render() { return <Button />; } }\n"),
        {("Button", "function"), ("Panel", "class"), ("render", "method")}, {"Props", "label", "Component"}),
    "go": ("m.go", (
        "package store\n\nconst Max = 3\n\ntype Store struct { items []Item }\n\n"
        "func NewStore() *Store { return &Store{} }\n\n"
        "func (s *Store) Put(it Item) { s.items = append(s.items, it); validate(it) }\n"),
        {("Max", "constant"), ("Store", "type"), ("NewStore", "function"), ("Put", "method")},
        {"Item", "append", "validate", "Store"}),
    "rust": ("m.rs", (
        "pub struct Store { items: Vec<Item> }\npub trait Save { fn save(&self); }\n"
        "impl Store {\n    pub fn new() -> Self { Store { items: Vec::new() } }\n"
        "    fn put(&mut self, it: Item) { self.items.push(it); check(&it); }\n}\n"
        "fn check(it: &Item) { println!(\"{:?}\", it); }\nmacro_rules! twice { ($e:expr) => { $e; $e } }\n"),
        {("Store", "class"), ("Save", "interface"), ("save", "method"), ("new", "method"), ("put", "method"),
         ("check", "function"), ("twice", "macro")},
        {"Item", "push", "check", "println", "Store", "new"}),
    "java": ("M.java", (
        "public class Store extends Base implements Saver {\n  public Store() {}\n"
        "  public void put(Item it) { items.add(it); new Audit(it); }\n}\n"
        "interface Saver { void save(); }\nenum Level { LOW }\nrecord Point(int x, int y) {}\n"),
        {("Store", "class"), ("Store", "method"), ("put", "method"), ("Saver", "interface"), ("save", "method"),
         ("Level", "class"), ("Point", "class")},
        {"Base", "Saver", "Item", "add", "Audit"}),
    "c": ("m.c", (
        "#define MAX 3\ntypedef struct node { int v; } node_t;\nstruct list { node_t *head; };\n"
        "static int count(struct list *l);\nint push(struct list *l, int v) { return count(l) + helper(v); }\n"
        "char *name(void) { return 0; }\n"),
        {("MAX", "macro"), ("node", "class"), ("node_t", "type"), ("list", "class"), ("count", "function"),
         ("push", "function"), ("name", "function")},
        {"count", "helper", "node_t"}),
    "cpp": ("m.cpp", (
        "namespace app {\nclass Store : public Base {\npublic:\n  void put(Item it);\n};\n"
        "void Store::put(Item it) { items.push_back(it); validate(it); }\n}\n"),
        {("app", "module"), ("Store", "class"), ("put", "function"), ("put", "method")},
        {"Base", "Item", "push_back", "validate"}),
}


def test_every_language_has_a_source() -> None:
    assert set(SOURCES) == set(LANGUAGES)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_definitions_and_references(language: str) -> None:
    path, source, defs, refs = SOURCES[language]
    assert language_for(path) == language
    tags = extract_tags(language, source.encode())
    found_defs = {(d.name, d.kind) for d in tags.defs}
    assert defs <= found_defs, f"missing {defs - found_defs}; got {sorted(found_defs)}"
    found_refs = {name for name, _ in tags.refs}
    assert refs <= found_refs, f"missing {refs - found_refs}; got {sorted(found_refs)}"
    assert not tags.partial


def test_definition_lines_and_text() -> None:
    tags = extract_tags("python", b"x = 1\n\n\nclass A:\n    def f(self,\n          y):\n        pass\n")
    by_name = {d.name: d for d in tags.defs}
    assert (by_name["A"].line, by_name["A"].end_line, by_name["A"].text) == (4, 7, "class A:")
    assert (by_name["f"].line, by_name["f"].end_line, by_name["f"].text) == (5, 7, "    def f(self,")


def test_reference_counts() -> None:
    tags = extract_tags("python", b"f()\nf()\ng.f()\nh()\n")
    assert dict(tags.refs) == {"f": 3, "h": 1}


def test_syntax_error_gives_partial_tags() -> None:
    tags = extract_tags("python", b"def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass After:\n    pass\n")
    assert tags.partial
    names = {d.name for d in tags.defs}
    assert {"good", "After"} <= names


def test_unknown_suffix_has_no_language() -> None:
    assert language_for("notes.txt") is None
    assert language_for("Makefile") is None
    assert language_for("dir.py/file") is None
    assert language_for("x.H") == "c"
