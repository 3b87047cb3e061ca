"""Budget fitting: cheapest material goes first, system and instructions are never cut, OverContext says by how much."""

from __future__ import annotations

import pytest

from contenox.errors import OverContext
from contenox.planner import Pin
from support.planner_samples import sample_inputs

SMALL = {"max_tested_context": 1400, "default_context": 1024}
RESERVE = 200
LIMIT = SMALL["max_tested_context"] - RESERVE


def _small(make_planner):
    return make_planner(profile_changes=SMALL, output_reserve=RESERVE)


def test_a_turn_that_fits_is_untouched(make_planner):
    plan = _small(make_planner).plan(sample_inputs())
    assert plan.manifest.total_tokens <= LIMIT
    assert all(not s.note for s in plan.manifest.segments)


def test_old_turns_go_first_then_terminal_keeps_its_tail(make_planner):
    log = "\n".join(f"line {i}: step {i} ok" for i in range(300)) + "\nFAILED test_overdraft"
    history = [(f"question {i} " + "word " * 40, f"answer {i} " + "text " * 40) for i in range(3)]
    plan = _small(make_planner).plan(sample_inputs(terminal=log, history=history))
    manifest = plan.manifest
    assert manifest.total_tokens <= LIMIT
    assert manifest.segment("history").note == "3 older turn(s) summarised to fit the context (thread rebased)"
    assert manifest.segment("terminal").note.startswith("cut to last ")
    terminal_text = plan.messages[-1]["content"]
    assert "FAILED test_overdraft" in terminal_text and "line 0:" not in terminal_text
    assert "earlier lines cut]" in terminal_text
    assert manifest.segment("pins").note == "" and manifest.segment("repo_map").note == ""


def test_repo_map_shrinks_through_the_workspace_callback(make_planner):
    big_map = "\n".join(f"pkg/module_{i}.py:\n  def function_{i}(arg)" for i in range(120))
    budgets = []

    def rebuild(budget: int) -> str:
        budgets.append(budget)
        return "\n".join(f"pkg/module_{i}.py:\n  def function_{i}(arg)" for i in range(budget // 20))

    plan = _small(make_planner).plan(sample_inputs(repo_map=big_map, repo_map_at=rebuild, terminal="", diff=""))
    assert plan.manifest.total_tokens <= LIMIT
    assert len(budgets) == 1 and budgets[0] > 0
    assert plan.manifest.segment("repo_map").note.startswith("shrunk to ")
    assert "module_0.py" in plan.messages[0]["content"] and "module_119.py" not in plan.messages[0]["content"]


def test_repo_map_without_callback_keeps_its_top_lines(make_planner):
    big_map = "\n".join(f"pkg/module_{i}.py:\n  def function_{i}(arg)" for i in range(120))
    plan = _small(make_planner).plan(sample_inputs(repo_map=big_map, terminal="", diff=""))
    system = plan.messages[0]["content"]
    assert "module_0.py" in system and "module_119.py" not in system and "more lines cut]" in system


def test_pins_are_summarised_to_outlines_largest_first(make_planner):
    body = "\n".join(f"    total += {i}" for i in range(150))
    big = f"def compute(values):\n    total = 0\n{body}\n    return total\n\n\nclass Ledger:\n    pass\n"
    pins = (Pin(path="small.py", text="def tiny():\n    return 1\n"),
            Pin(path="big.py", text=big),
            Pin(path="given.py", text=big.replace("compute", "other"), outline="def other(values) -> int"))
    plan = _small(make_planner).plan(sample_inputs(pins=pins, repo_map="", terminal="", diff=""))
    manifest = plan.manifest
    assert manifest.total_tokens <= LIMIT
    system = plan.messages[0]["content"]
    assert "return 1" in system  # the small pin stays whole
    assert "def compute(values):\nclass Ledger:" in system  # the rough outline of big.py
    assert "total += 7" not in system
    note = manifest.segment("pins").note
    assert "summarised to its outline" in note


def test_a_user_turn_that_cannot_fit_is_over_context_by_how_much(make_planner):
    planner = _small(make_planner)
    huge = "please " * 2000
    with pytest.raises(OverContext) as info:
        planner.plan(sample_inputs(user=huge))
    error = info.value
    assert error.details["limit"] == LIMIT
    assert error.details["over_by"] == error.details["needed"] - LIMIT > 0
    assert f"over by {error.details['over_by']} tokens" in error.message
    assert error.to_dict()["kind"] == "over_context"


def test_instructions_are_never_cut(make_planner):
    rules = "\n".join(f"Rule {i}: always do thing number {i} carefully." for i in range(150))
    with pytest.raises(OverContext):
        _small(make_planner).plan(sample_inputs(instructions=(("AGENTS.md", rules),)))


def test_overflow_is_measured_against_the_tested_context_minus_reserve(make_planner):
    plan = make_planner(profile_changes=SMALL, output_reserve=0).plan(sample_inputs())
    limit0 = plan.manifest.total_tokens  # the turn as it is
    tight = make_planner("tight", profile_changes={"max_tested_context": limit0 + 50, "default_context": 512},
                         output_reserve=50)
    assert tight.plan(sample_inputs()).manifest.total_tokens == limit0  # fits exactly
    tighter = make_planner("tighter", profile_changes={"max_tested_context": limit0 + 50, "default_context": 512},
                           output_reserve=51)
    assert tighter.plan(sample_inputs()).manifest.segment("terminal").note  # one token over: terminal cut
