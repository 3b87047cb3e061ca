"""The locations sentence: the file and line of each name an answer gives as code without its file, where one file
defines it; names defined in several files, or nowhere, left out; the answer itself untouched."""

from __future__ import annotations

from contenox.answer.locations import (
    LOCATIONS_LEAD,
    calls_section,
    locations,
    without_calls,
    without_node_sentences,
)
from contenox.workspace import SymbolLocation

DEFS = {
    "parse_from_object": [("docstring_parser/parser.py", 40)],
    "add_attribute_docstrings": [("docstring_parser/attrdoc.py", 120)],
    "loads": [("src/tok/serializer.py", 30), ("src/tok/timed.py", 50)],
    "TimedSerializer": [("src/tok/timed.py", 45)],
    "Serializer": [("src/tok/serializer.py", 10)],
    "helper": [("src/util.py", 3), ("tests/test_util.py", 8)],
    "test_helper": [("tests/test_util.py", 12)],
}


def find(name: str) -> list[SymbolLocation]:
    return [SymbolLocation(name=name, kind="function", path=p, line=n, end_line=n + 5, text="")
            for p, n in DEFS.get(name, ())]


def is_test(path: str) -> bool:
    return path.startswith("tests/")


def test_names_given_without_their_file_get_it_once() -> None:
    answer = ("`parse_from_object` reads the source; `add_attribute_docstrings` in docstring_parser/attrdoc.py adds "
              "them. Then `parse_from_object()` returns.")
    sentence, entries = locations(answer, find, is_test)
    assert entries == ["`parse_from_object` (docstring_parser/parser.py:40)"]  # attrdoc.py is named already
    assert sentence == LOCATIONS_LEAD + "`parse_from_object` (docstring_parser/parser.py:40)."
    assert without_node_sentences(f"{answer}\n\n{sentence}") == answer


def test_a_method_is_found_by_its_class_and_ambiguous_or_unknown_names_are_left_out() -> None:
    answer = "`TimedSerializer.loads` checks the age; `loads` is also on `Serializer`; `frobnicate` is not here."
    _, entries = locations(answer, find, is_test)
    assert entries == ["`TimedSerializer.loads` (src/tok/timed.py:50)", "`Serializer` (src/tok/serializer.py:10)"]


def test_tests_count_only_for_a_test_s_name() -> None:
    _, entries = locations("`helper()` fails in `test_helper`.", find, is_test)
    assert entries == ["`helper` (src/util.py:3)", "`test_helper` (tests/test_util.py:12)"]


def test_nothing_to_add() -> None:
    assert locations("It reads the file (src/util.py) with `helper`.", find, is_test) == ("", [])
    assert without_node_sentences("no sentence") == "no sentence"


def test_the_call_tree_after_an_answer_is_the_node_s_and_reads_apart() -> None:
    tree = "load (src/m.py:3)\n  -> parse (src/p.py:9)"
    section = calls_section(tree, ["load"])
    assert section == ("The calls `load` makes, read from the source by Contenox (not run):\n\n```text\n"
                       f"{tree}\n```")
    answer = "`load` reads the file with `parse`."
    assert without_node_sentences(f"{answer}\n\n{section}") == answer
    assert without_node_sentences(f"{answer}\n\n{LOCATIONS_LEAD}`x` (a.py:1).\n\n{section}") == answer
    # the model's own words that begin the same way stay; a root that calls nothing adds nothing
    own = "The calls `load` makes are few."
    assert without_node_sentences(own) == own
    assert calls_section("load (src/m.py:3)", ["load"]) == "" and calls_section(tree, []) == ""
    sentence = LOCATIONS_LEAD + "`parse` (src/p.py:9)."
    assert without_calls(f"{answer}\n\n{sentence}\n\n{section}") == f"{answer}\n\n{sentence}"  # the sentence kept
    assert without_calls(answer) == answer
