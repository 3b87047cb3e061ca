"""Agent turns in the planner, on the real Qwen2.5-Coder tokenizer (its template renders tools): the tools segment
is the template's own tool text, each step's prompt extends the last, and the next turn's history holds the
steps exactly as they were sent (so a step's prefill is its new results and the next turn reuses all of it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.config import PlannerConfig
from contenox.planner.chat_frame import derive_chat_frame, derive_tool_frame
from contenox.planner.journal import ToolStep
from contenox.planner.prompts import load_prompts, tool_definitions
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer
from support.cache_mirror import MirroredPlanner
from support.planner_samples import sample_inputs


@pytest.fixture(scope="module")
def qwen(fim_model: InstalledModel) -> Tokenizer:
    return load_tokenizer(fim_model.weights)


def test_the_tool_frame_is_the_templates_own_text(qwen: Tokenizer, tokenizer: Tokenizer) -> None:
    tools = tool_definitions(load_prompts())
    frame, why = derive_tool_frame(qwen, derive_chat_frame(qwen), tools)
    assert frame is not None and why == ""
    assert frame.block.startswith("\n\n# Tools\n\nYou may call one or more functions")
    assert '"name": "propose_edit"' in frame.block and frame.block.endswith("</tool_call>")
    assert frame.result("R") == "<tool_response>\nR\n</tool_response>"
    rendered = qwen.apply_chat_template([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
                                        tools=tools)
    assert rendered.startswith("<|im_start|>system\nS" + frame.block + "<|im_end|>")
    # SmolLM2's template writes calls as a JSON "tool_calls" object, which the strict parser does not read
    none, why = derive_tool_frame(tokenizer, derive_chat_frame(tokenizer), tools)
    assert none is None and "not <tool_call>" in why


def test_a_tool_turn_says_when_not_to_call_a_tool(qwen: Tokenizer, fim_model: InstalledModel,
                                                 tmp_path: Path) -> None:
    prompts = load_prompts()
    frame, _ = derive_tool_frame(qwen, derive_chat_frame(qwen), tool_definitions(prompts))
    assert frame is not None and "Never call run_command" in prompts.tool_policy
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test",
                      tools=True)
    system = planner.plan(sample_inputs(diff="", terminal="")).messages[0]["content"]
    # the policy is the system message's own text, the template's tool block after it (as certify renders it)
    assert (prompts.system + "\n\n" + prompts.tool_policy + frame.block + "\n\n# Policy\n") in system
    plain = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "plain", backend_version="test")
    messages = plain.plan(sample_inputs(diff="", terminal="")).messages
    assert prompts.tool_policy not in messages[0]["content"] and messages[-1]["content"].endswith(prompts.answer)


def test_steps_extend_the_turn_and_the_next_turn_holds_them_as_sent(qwen: Tokenizer, fim_model: InstalledModel,
                                                                    tmp_path: Path) -> None:
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test",
                      tools=True)
    plan = planner.plan(sample_inputs(diff="", terminal=""))
    tools = next(s for s in plan.manifest.segments if s.kind == "tools")
    assert tools.tokens > 100 and not any(n.startswith("tools: not advertised") for n in plan.manifest.notes)
    steps = [ToolStep(call='Let me read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "bank.py"}}'
                           "\n</tool_call>", result=planner.tool_result("bank.py, 3 lines:\n    1  x = 1")),
             ToolStep(call='<tool_call>\n{"name": "search", "arguments": {"pattern": "x"}}\n</tool_call>',
                      result=planner.tool_result("bank.py:1: x = 1"))]
    first = planner.step_ids(plan, steps[:1])
    second = planner.step_ids(plan, steps)
    assert first[:len(plan.token_ids)] == plan.token_ids and second[:len(first)] == first  # append-only
    # after the turn's prompt, each step is what the template renders for an assistant call and a tool message
    defs = tool_definitions(load_prompts())
    messages = [*plan.messages, {"role": "assistant", "content": steps[0].call},
                {"role": "tool", "content": "bank.py, 3 lines:\n    1  x = 1"},
                {"role": "assistant", "content": steps[1].call}, {"role": "tool", "content": "bank.py:1: x = 1"}]
    base = qwen.apply_chat_template(plan.messages, tools=defs)
    full = qwen.apply_chat_template(messages, tools=defs)
    assert full.startswith(base)
    assert second[len(plan.token_ids):] == qwen.encode(full[len(base):])
    planner.record(plan, None, answer_text="Fixed.", steps=steps)
    follow = planner.plan(sample_inputs(user="And now?", diff="", terminal=""))
    answer = qwen.encode("Fixed.")
    assert follow.token_ids[:len(second) + len(answer)] == second + answer  # the whole agent turn is reused
    assert [m["role"] for m in follow.messages] == ["system", "user", "assistant", "user", "assistant", "user",
                                                    "assistant", "user"]


def test_an_agent_turn_does_not_make_the_next_turn_summarise_older_turns(qwen: Tokenizer, fim_model: InstalledModel,
                                                                         tmp_path: Path) -> None:
    planner = MirroredPlanner(qwen, fim_model.profile, PlannerConfig(), tmp_path / "state", backend_version="test",
                      tools=True)
    for n in range(3):
        planner.record(planner.plan(sample_inputs(user=f"q{n}", diff="", terminal="")), None, answer_text=f"a{n}")
    agent = planner.plan(sample_inputs(user="fix it", diff="", terminal=""))
    steps = [ToolStep(call='<tool_call>\n{"name": "search", "arguments": {"pattern": "x"}}\n</tool_call>',
                      result=planner.tool_result(f"bank.py:{n}: x = {n}")) for n in (1, 2)]
    assert agent.entry.base == 0
    planner.record(agent, None, answer_text="Fixed.", steps=steps)
    after = planner.plan(sample_inputs(user="And now?", diff="", terminal=""))
    # every earlier turn is still there in full: the whole thread so far is this turn's prefix
    assert after.entry.base == 0 and not any(n.startswith("thread rebased") for n in after.manifest.notes)
    assert [m["content"] for m in after.messages if m["role"] == "assistant"][:3] == ["a0", "a1", "a2"]
    planner.record(after, None, answer_text="Done.")
    last = planner.plan(sample_inputs(user="Once more?", diff="", terminal=""))
    assert not any(n.startswith("thread rebased") for n in last.manifest.notes)
    assert last.messages[:len(after.messages)] == [*after.messages[:-1], {"role": "user", "content": after.user}]
