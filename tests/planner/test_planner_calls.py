"""A how-does-it-work question's call tree: built from a real workspace by the planner's inputs, named in
explain-context, and laid out in the turn's message between the retrieved code and the question."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.config import PlannerConfig, WorkspaceConfig
from contenox.planner import build_inputs
from contenox.planner.segments import render_segments
from contenox.workspace import Workspace
from support import gitrepo
from support.planner_samples import sample_inputs

FILES = {
    "tok/serializer.py": ("class Serializer:\n    def loads(self, token):\n        return self.check(unquote(token))\n\n"
                          "    def check(self, value):\n        return value\n\n\ndef unquote(token):\n    return token\n"),
}
QUESTION = "How does Serializer.loads get to the check?"


def _inputs(tmp_path: Path, prompt: str, **config: int):  # type: ignore[no-untyped-def]
    config = {"call_tree_lines": 30, **config}
    root = gitrepo.make_repo(tmp_path / "repo", FILES, commit=True, message="initial")
    ws = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    return build_inputs(PlannerConfig(**config), ws, lambda s: len(s) // 4, root=root, prompt=prompt, selection=None,
                        pins=(), terminal="", thread="main", reasons={})


def test_the_inputs_carry_the_tree_and_say_so(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, QUESTION)
    assert inputs.calls == ("Serializer.loads (tok/serializer.py:2)\n  -> Serializer.check (tok/serializer.py:5)\n"
                            "  -> unquote (tok/serializer.py:9)")  # in the order the calls begin in the source
    assert ("calls: the calls Serializer.loads makes, read from the source (3 lines, at most "
            "planner.call_tree_lines = 30), before the question") in inputs.notes


def test_off_and_other_questions_carry_none(tmp_path: Path) -> None:
    assert PlannerConfig().call_tree_lines == 0  # off unless configured: it did not lift the default model's answers
    assert _inputs(tmp_path / "off", QUESTION, call_tree_lines=0).calls == ""
    assert not any(n.startswith("calls:") for n in _inputs(tmp_path / "fix", "Fix Serializer.loads").notes)


def test_the_tree_goes_between_the_retrieved_code_and_the_question(make_planner) -> None:  # type: ignore[no-untyped-def]
    planner = make_planner()
    inputs = msgspec.structs.replace(sample_inputs(user=QUESTION), calls="Serializer.loads (tok/serializer.py:2)")
    draft, *_ = planner._draft(inputs, planner._records)
    rendered = {seg.kind: seg for seg in render_segments(planner.frame, planner.prompts, draft, tools="")}
    user = "".join(rendered["user"].parts)
    assert user.index("# Calls from the code the question names") < user.index(QUESTION)
    assert "```\nSerializer.loads (tok/serializer.py:2)\n```" in user
    assert "# Calls" not in "".join(rendered["retrieved"].parts)
    plan = planner.plan(inputs)
    assert "# Calls from the code" in planner.tokenizer.decode(plan.token_ids)
