"""The anticipator's parts that need no model: the place rule and the battery check."""

from __future__ import annotations

from pathlib import Path

from contenox.config import AnticipateConfig, PlannerConfig
from contenox.node.anticipating import Focus, anticipated_tokens, on_battery, pieces, reported_run


def test_a_place_is_the_same_within_a_few_lines_of_the_same_file_thread_and_draft() -> None:
    here = Focus(path="a.py", line=40, thread="t")
    assert Focus(path="a.py", line=44, thread="t").same_place(here)
    assert not Focus(path="a.py", line=46, thread="t").same_place(here)
    assert not Focus(path="b.py", line=40, thread="t").same_place(here)
    assert not Focus(path="a.py", line=40, thread="u").same_place(here)
    assert not Focus(path="a.py", line=40, thread="t", draft="why does").same_place(here)
    assert not Focus(path="a.py", line=40, thread="t", saved=True).same_place(here)  # the diff changed
    assert not Focus(path="a.py", line=40).same_place(None)
    assert Focus(path="a.py", line=40, draft="why").place() == "a.py:40, draft"
    run = "$ pytest -q\nFAILED test_a.py::test_x"
    assert not Focus(path="a.py", line=40, thread="t", terminal=run).same_place(here)  # a failing run came
    assert Focus(path="a.py", line=40, terminal=run).place() == "a.py:40, failing run"


def test_a_reported_failing_run_goes_with_a_question_of_its_thread_while_it_is_fresh() -> None:
    run = "$ pytest -q\nFAILED test_a.py::test_x"
    focus = Focus(path="a.py", line=40, thread="t", terminal=run, terminal_at=100.0)
    assert focus.failing_run("t", now=150.0, ttl_s=600.0) == run
    assert focus.failing_run("other", now=150.0, ttl_s=600.0) == ""  # another thread's place
    assert focus.failing_run("t", now=800.0, ttl_s=600.0) == ""  # too old
    assert Focus(path="a.py", line=40, thread="t").failing_run("t", now=1.0, ttl_s=600.0) == ""  # none reported
    assert Focus(path="a.py", line=40, terminal=run).failing_run("any", now=1.0, ttl_s=600.0) == run  # no thread


def test_a_long_failing_run_keeps_its_command_line_and_the_end_of_its_output() -> None:
    output = "\n".join(f"line {n}" for n in range(5000))
    kept = reported_run(f"$ pytest -q\n{output}\n", limit=2000)
    assert len(kept) <= 2100 and kept.startswith("$ pytest -q\n[... ")
    assert "characters of output cut ...]" in kept and kept.endswith("line 4999")
    assert kept.splitlines()[2].startswith("line ")  # the cut falls between lines
    assert reported_run("$ make\nboom\n") == "$ make\nboom"  # short: as it came
    one_line = reported_run("x" * 5000, limit=1000)
    assert len(one_line) <= 1100 and one_line.startswith("$ (command line cut)\n[... ")
    assert one_line.endswith("x" * 900)


def _supply(root: Path, name: str, kind: str, online: str | None = None) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "type").write_text(kind + "\n")
    if online is not None:
        (root / name / "online").write_text(online + "\n")


def test_on_battery_reads_the_power_supplies(tmp_path: Path) -> None:
    assert not on_battery(tmp_path / "absent")  # no sysfs: unknown, so not on battery
    laptop = tmp_path / "laptop"
    _supply(laptop, "BAT0", "Battery")
    _supply(laptop, "AC", "Mains", "0")
    assert on_battery(laptop)
    (laptop / "AC" / "online").write_text("1\n")
    assert not on_battery(laptop)
    desktop = tmp_path / "desktop"
    _supply(desktop, "AC", "Mains", "0")
    assert not on_battery(desktop)  # no battery at all


def test_a_background_prefill_is_cut_into_block_aligned_pieces() -> None:
    assert pieces(0, 300, 64, 32) == [64, 128, 192, 256, 300]
    assert pieces(100, 300, 64, 32) == [160, 224, 288, 300]  # from the cached blocks on
    assert pieces(0, 300, 0, 32) == [300]  # 0: one request
    assert pieces(0, 50, 64, 32) == [50]
    assert pieces(288, 288, 64, 32) == []  # all cached: nothing to do
    assert pieces(0, 200, 40, 32) == [32, 64, 96, 128, 160, 192, 200]  # never less than a block


def test_an_anticipation_knows_which_of_its_chunks_a_prefix_cache_holds() -> None:
    from contenox.node.anticipating import Anticipation
    from contenox.planner.inputs import Chunk

    def chunk(cid: str) -> Chunk:
        return Chunk(id=cid, path=cid.split(":")[0], start_line=1, end_line=5, name=cid, text=cid)

    chunks = [chunk("a.py:1-5"), chunk("held.py:1-5"), chunk("b.py:1-5"), chunk("cut.py:1-5"), chunk("c.py:1-5")]
    # laid out: a ends at 120, b at 180 (held.py is in the thread already); cut.py was left out by budget fitting
    anticipation = Anticipation(Focus(path="a.py", line=1), "main", chunks, tokens=100, prefix=200,
                                ends=(("a.py:1-5", 120), ("b.py:1-5", 180), ("c.py:1-5", 200)),
                                held=("held.py:1-5",))
    assert anticipation.computed(0) == 0
    assert anticipation.computed(119) == 0
    assert anticipation.computed(120) == 2  # a, and the thread's own chunk after it
    assert anticipation.computed(179) == 2
    assert anticipation.computed(10_000) == 3  # never past a chunk that was not prefilled
    # a cache of 16-token blocks holding 112 tokens holds a's blocks but the one it ends in: a turn recomputes that
    assert anticipation.computed(112, block=16) == 2 and anticipation.computed(104, block=16) == 0
    assert Anticipation(Focus(path="a.py", line=1), "main", [], tokens=0, prefix=0).computed(0) == 0


def test_a_question_being_typed_is_anticipated_with_the_question_s_own_retrieval_budget() -> None:
    planner = PlannerConfig(retrieval_tokens=3000)
    assert anticipated_tokens(AnticipateConfig(tokens=1000), planner, "") == 1000  # a place: the anticipation's
    assert anticipated_tokens(AnticipateConfig(tokens=1000), planner, "  \n") == 1000
    assert anticipated_tokens(AnticipateConfig(tokens=1000), planner, "Why does verify") == 3000  # the question's
    assert anticipated_tokens(AnticipateConfig(tokens=1000, draft_tokens=1500), planner, "Why does verify") == 1500
