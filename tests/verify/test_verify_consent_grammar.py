"""Consent remembered per workspace and command, revocable; the edit-block grammar holds the file's lines."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from contenox.planner.edits import parse_edit_blocks
from contenox.verify import ConsentStore, edit_block_grammar


def test_consent_per_workspace_and_command(tmp_path: Path) -> None:
    store = ConsentStore(tmp_path / "state" / "verify-consent.json")
    assert store.get("/w", "pytest") is None
    store.set("/w", "pytest", True)
    store.set("/w", "make", False)
    store.set("/other", "pytest", False)
    again = ConsentStore(store.path)  # another client of the node reads the same answers
    assert (again.get("/w", "pytest"), again.get("/w", "make"), again.get("/other", "pytest")) == (True, False, False)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert sorted(again.revoke("/w")) == ["make", "pytest"]
    assert again.get("/w", "pytest") is None
    assert again.get("/other", "pytest") is False
    store.path.write_text("{not json")
    assert store.get("/other", "pytest") is None  # unreadable: asked again, never allowed


def test_grammar_lists_real_lines_and_matches_the_block_format() -> None:
    text = 'def add(a, b):\n    return a - b\n\n\nNAME = "x\\"y"\n'
    grammar = edit_block_grammar("src/ops.py", text)
    assert grammar.startswith('root ::= "src/ops.py\\n" "<<<<<<< SEARCH\\n"')
    search = next(line for line in grammar.splitlines() if line.startswith("search ::="))
    assert json.dumps("    return a - b\n") in search
    assert json.dumps('NAME = "x\\"y"\n') in search
    assert search.split(" | ").count('"\\n"') == 1  # the file's blank lines, once
    # an answer the grammar admits is an edit block the node reads
    answer = "src/ops.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    blocks = parse_edit_blocks(answer)
    assert [(b.path, b.search, b.replace) for b in blocks] == [("src/ops.py", "    return a - b",
                                                                 "    return a + b")]
