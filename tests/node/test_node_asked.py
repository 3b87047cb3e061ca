"""Questions without an answer are kept per workspace for every client, where they were asked."""

from __future__ import annotations

from pathlib import Path

from contenox.node.asked import _COMPACT_AT, CUT_OFF, AskedLog


def test_a_question_is_open_until_answered_and_keeps_why_it_was_not(tmp_path: Path) -> None:
    log = AskedLog(tmp_path)
    first = log.ask("panel", "Fix add")
    assert [(u.prompt, u.why) for u in log.open("panel")] == [("Fix add", "")]  # running: no why yet
    log.end(first)  # answered: the journal holds it
    assert log.open() == []
    second = log.ask("panel", "And sub?")
    other = log.ask("acp:1", "Explain it")
    log.end(second, "stopped before the answer was finished")
    log.end(other, "engine_crashed: the engine process was killed")
    assert [(u.prompt, u.why) for u in log.open("panel")] == [("And sub?", "stopped before the answer was finished")]
    assert [u.thread for u in log.open()] == ["panel", "acp:1"]


def test_a_question_under_way_when_the_node_went_away_is_cut_off(tmp_path: Path) -> None:
    AskedLog(tmp_path).ask("panel", "Slow one")  # the node is killed before it ends
    with (tmp_path / "asked.jsonl").open("ab") as fh:
        fh.write(b'{"op": "ask", "id": "torn')  # and its last line was torn
    later = AskedLog(tmp_path)  # the next node
    assert [(u.prompt, u.why) for u in later.open()] == [("Slow one", CUT_OFF)]
    mine = later.ask("panel", "Next")  # a torn line does not swallow the next one
    assert [(u.prompt, u.why) for u in later.open()] == [("Slow one", CUT_OFF), ("Next", "")]
    later.end(mine)
    assert [u.prompt for u in later.open()] == ["Slow one"]


def test_answered_lines_are_dropped_once_they_are_most_of_the_file(tmp_path: Path) -> None:
    log = AskedLog(tmp_path)
    kept = log.end(log.ask("panel", "kept")) or log.ask("panel", "stopped")
    log.end(kept, "stopped before the answer was finished")
    running = log.ask("panel", "running")
    for n in range(_COMPACT_AT):
        log.end(log.ask("panel", f"answered {n}"))
    before = (tmp_path / "asked.jsonl").stat().st_size
    assert [(u.prompt, u.why) for u in log.open()] == [("stopped", "stopped before the answer was finished"),
                                                       ("running", "")]
    assert (tmp_path / "asked.jsonl").stat().st_size < before / 10
    assert [(u.prompt, u.why) for u in AskedLog(tmp_path).open()] == [
        ("stopped", "stopped before the answer was finished"), ("running", CUT_OFF)]  # as a later node reads it
    log.end(running)
    assert [u.prompt for u in log.open()] == ["stopped"]
