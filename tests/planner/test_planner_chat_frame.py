"""The chat template is honoured: assembled segment ids equal the template's rendering, tokenized."""

from __future__ import annotations

import pytest

from contenox.errors import ProfileMismatch
from contenox.planner import Pin
from contenox.planner.chat_frame import derive_chat_frame
from support.planner_samples import sample_inputs


def test_smollm2_frame_pieces(tokenizer):
    frame = derive_chat_frame(tokenizer)
    assert frame.open_system == "<|im_start|>system\n"
    assert frame.system_to_user == "<|im_end|>\n<|im_start|>user\n"
    assert frame.user_to_assistant == "<|im_end|>\n<|im_start|>assistant\n"
    assert frame.assistant_to_user == "<|im_end|>\n<|im_start|>user\n"
    assert frame.generation == "<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize("changes", [
    {},
    {"diff": "", "terminal": ""},
    {"diff": "", "terminal": "  indented first line\n\n\n"},
    {"instructions": (), "repo_map": "", "pins": ()},
    {"pins": (Pin(path="x.py", text="    indented()\n\n"), ("y.md", "# Title\n\n  * item  \n"))},
    {"user": "\n\n  - a list item first\n  - second \n\n"},
    {"history": [("  first question ", "first answer\n\n"), ("second?", "  ```py\nx = 1\n```  ")]},
])
def test_assembled_ids_equal_template_rendering(make_planner, tokenizer, changes):
    planner = make_planner()
    plan = planner.plan(sample_inputs(**changes))
    rendered = tokenizer.apply_chat_template(plan.messages, add_generation_prompt=True)
    assert plan.token_ids == tokenizer.encode(rendered)
    assert plan.messages[0]["role"] == "system"
    assert plan.manifest.total_tokens == len(plan.token_ids)
    assert plan.manifest.segments[-1].token_end == len(plan.token_ids)


def test_recorded_history_keeps_template_equality(make_planner, tokenizer):
    planner = make_planner()
    plan = planner.plan(sample_inputs())
    planner.record(plan, None, answer_text="The transfer does not check the balance.\n")
    plan2 = planner.plan(sample_inputs(user="Show the fix.", diff="", terminal=""))
    assert [m["role"] for m in plan2.messages] == ["system", "user", "assistant", "user"]
    assert plan2.token_ids == tokenizer.encode(tokenizer.apply_chat_template(plan2.messages))


class _RewritingTemplate:
    """A template that trims contents: the planner cannot place cached ids inside it."""

    chat_template = "{{ messages }}"

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m['role']}>{m['content'][:3]}" for m in messages)


def test_template_that_rewrites_contents_is_a_profile_mismatch():
    with pytest.raises(ProfileMismatch, match="dropped or rewrote"):
        derive_chat_frame(_RewritingTemplate())
