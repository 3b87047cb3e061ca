"""The planner's two-call turn (``planner.turn``): ``prepare`` plans from a question and a real workspace (the
mentions checked, the anticipated code laid first), ``finish`` records the answer with
its citations and notes and names the prefixes to persist and warm. Real tokenizer, real git repo."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.config import WorkspaceConfig
from contenox.planner import Journal
from contenox.planner.turn import Anticipated, Question, finish, prepare, unpinnable
from contenox.workspace import Workspace
from support.cache_mirror import MirroredPlanner
from support.gitrepo import make_repo

CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
REPORT = "from calc import add\n\n\ndef total(values):\n    out = 0\n    for v in values:\n        out = add(out, v)\n" \
         "    return out\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = make_repo(tmp_path / "repo", {"calc.py": CALC, "report.py": REPORT, "notes/a.txt": "notes\n",
                                         "blob.bin": b"\x00\x01binary"})
    return Workspace.open(root, WorkspaceConfig(), tmp_path / "index")


def test_prepare_checks_the_mentions_and_plans_the_question(ws: Workspace,
                                                            make_planner: Callable[..., MirroredPlanner]) -> None:
    planner = make_planner()
    question = Question(prompt="What does total do with add?", mentions=("calc.py", "notes", "blob.bin", "gone.py"),
                        notes=("a note from the caller",))
    plan = prepare(planner, ws, question, root=ws.root, predict_cached=planner.predict)
    notes = list(plan.manifest.notes)
    assert notes[0] == "a note from the caller"
    assert "mentioned blob.bin: a binary file, left out" in notes and "mentioned gone.py: no such file, left out" in notes
    text = "".join(m["content"] for m in plan.messages)
    assert "# Files mentioned with the question" in text and "def sub(a, b)" in text  # calc.py went in whole
    assert "What does total do with add?" in plan.messages[-1]["content"]
    assert plan.retrieved and {c.path for c in plan.retrieved} <= {"calc.py", "report.py"}
    assert plan.manifest.anticipation is None


def test_prepare_lays_the_anticipated_chunks_first(
        ws: Workspace, make_planner: Callable[..., MirroredPlanner]) -> None:
    planner = make_planner()
    asked = Question(prompt="Explain total in report.py", open_file="report.py", selection_lines=(4, 4))
    plain = prepare(planner, ws, asked, root=ws.root, predict_cached=planner.predict)
    anticipated = Anticipated(chunks=tuple(reversed(plain.retrieved)), place="report.py:4", state="warm", age_s=3.0)
    laid = prepare(planner, ws, asked, root=ws.root, predict_cached=planner.predict, anticipated=anticipated)
    record = laid.manifest.anticipation
    assert record is not None and record.place == "report.py:4" and record.state == "warm"
    assert [c.id for c in laid.manifest.chunks][: len(record.chunks)] == list(record.chunks)
    assert list(record.chunks) == [c.id for c in anticipated.chunks][: len(record.chunks)]


def test_finish_records_the_turn_with_its_citations_and_notes(ws: Workspace,
                                                              make_planner: Callable[..., MirroredPlanner]) -> None:
    planner = make_planner()
    plan = prepare(planner, ws, Question(prompt="Where is add?"), root=ws.root, predict_cached=planner.predict)
    end = finish(planner, plan, "`add` is in calc.py and nowhere.py.", None, ws, notes=("verified: no",),
                 finish_reason="repetition")
    assert end.explain.turn == 1 and planner.turns == 1
    assert end.explain.citations is not None
    assert "calc.py" in end.explain.citations.files_real and "nowhere.py" in end.explain.citations.files_unknown
    assert end.explain.notes[-2:] == ("verified: no", "answer stopped: it began repeating itself; the repeats were "
                                                      "dropped")
    assert planner.last_explain() == end.explain  # journaled with its notes: the one home of the last explain
    journal = Journal(planner.state_dir)
    assert journal.count() == 1 and journal.last() is not None and journal.last().explain == end.explain
    assert end.resume_prefix == plan.token_ids[: plan.manifest.segment("history").token_end]
    assert end.rebased is None  # one short turn: the next one does not rebase the thread
    again = finish(planner, prepare(planner, ws, Question(prompt="And sub?"), root=ws.root, predict_cached=planner.predict), "sub.", None)
    assert again.explain.turn == 2 and again.explain.citations is None  # no workspace: no citations checked
    with journal.path.open("ab") as fh:  # a node killed mid-append leaves a torn line: passed over
        fh.write(b'{"v": 1, "tur')
    assert journal.count() == 2 and journal.last() is not None and journal.last().turn == 2


def test_unpinnable_names_why_a_file_cannot_go_in(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "big.py").write_text("x" * 100)
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9")
    os.mkfifo(tmp_path / "pipe")
    assert unpinnable(tmp_path / "ok.py", 1000) == ""
    assert unpinnable(tmp_path / "big.py", 10) == "100 bytes, over the workspace.max_file_bytes cap of 10"
    assert unpinnable(tmp_path / "latin.txt", 1000) == "not UTF-8 text (invalid byte at offset 3)"
    assert unpinnable(tmp_path / "pipe", 1000) == "not a regular file (a FIFO, socket or device)"
    assert unpinnable(tmp_path, 1000) == "a directory, not a file"
