"""A question that only asks how code works is followed by the explain format (the steps by name, no edit block)
instead of the answer format; a question that asks for a change, or comes with a failing run, keeps the answer
format, and so does a turn that advertises tools (its certified texts). Explain-context names the choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.answer.questions import explains_only
from contenox.config import PlannerConfig
from contenox.planner.prompts import explain_request, load_prompts
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer
from support.cache_mirror import MirroredPlanner
from support.planner_samples import sample_inputs

HOW = "How does key rotation work here? Which key signs new values, and which keys are tried when verifying?"
FIX = "Key rotation is broken: new values are signed with the oldest key. Fix it."


@pytest.fixture(scope="module")
def qwen(fim_model: InstalledModel) -> Tokenizer:
    return load_tokenizer(fim_model.weights)


NOTE = "answer format: how the code works, step by step by name, and no edit block"


def _question_message(planner: MirroredPlanner, question: str, terminal: str = "") -> tuple[str, list[str]]:
    plan = planner.plan(sample_inputs(user=question, diff="", terminal=terminal))
    return plan.messages[-1]["content"], list(plan.manifest.notes)


def test_a_how_question_gets_the_explain_format_and_explain_context_says_so(qwen: Tokenizer,
                                                                           fim_model: InstalledModel,
                                                                           tmp_path: Path) -> None:
    explain, answer = explain_request(), load_prompts().answer
    assert "write no edit block" in explain and explain != answer
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test")
    message, notes = _question_message(planner, HOW)
    assert message.endswith(HOW + "\n\n" + explain) and answer not in message
    assert any(note.startswith(NOTE) for note in notes)


def test_a_change_or_a_failing_run_keeps_the_answer_format(qwen: Tokenizer, fim_model: InstalledModel,
                                                           tmp_path: Path) -> None:
    answer = load_prompts().answer
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test")
    for question, terminal in ((FIX, ""), (HOW, "FAILED tests/test_signer.py::test_rotation - AssertionError\n")):
        message, notes = _question_message(planner, question, terminal)
        assert message.endswith(answer), question
        assert not any(note.startswith(NOTE) for note in notes)


def test_a_tool_turn_keeps_its_certified_answer_format(qwen: Tokenizer, fim_model: InstalledModel,
                                                      tmp_path: Path) -> None:
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test",
                              tools=True)
    message, notes = _question_message(planner, HOW)
    assert message.endswith(load_prompts().answer) and not any(note.startswith(NOTE) for note in notes)


def test_which_questions_only_ask_how() -> None:
    assert explains_only(HOW) and explains_only("Walk me through what happens between load_dotenv() and os.environ")
    assert not explains_only(FIX) and not explains_only("Add a flag to load_dotenv that skips comments.")
    assert not explains_only(HOW, terminal="1 failed")
    # a yes-or-no question asks to be told too; one that goes on to ask for a change does not
    assert explains_only("Is range parsing cached? Where, keyed on what?")
    assert explains_only("If a variable is already set in my shell, does loading the .env overwrite it?")
    assert not explains_only("Is range parsing cached? If not, add a cache.")
    assert not explains_only("Does parse fail on empty input? It should raise ValueError.")
