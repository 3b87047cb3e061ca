"""The tool check's prompt and reading (no model): the same instruction and examples before every question, a
long question asked about by its ends, anything but a plain no keeping the tools."""

from __future__ import annotations

from contenox.planner.prompts import load_prompts
from contenox.planner.toolcheck import QUESTION_CHARS, check_ids, wants_tool
from contenox.runtime_ov import Tokenizer


def test_every_question_shares_the_check_prefix_and_a_long_one_is_cut_in_the_middle(tokenizer: Tokenizer) -> None:
    prompts = load_prompts()
    short = tokenizer.decode(check_ids(tokenizer, prompts, "What's in setup.py?"))
    pasted = "Why does this fail?\n" + "x = compute(1)\n" * 2000 + "Traceback: ValueError at line 3"
    long = tokenizer.decode(check_ids(tokenizer, prompts, pasted))
    shared = short.index("Request: What's in setup.py?")
    assert long[:shared] == short[:shared]  # the cached part: instruction and examples
    assert "Write a C function delete_file(path) that removes a file." in short[:shared]
    asked = long[shared:]
    assert asked.startswith("Request: Why does this fail?") and "Traceback: ValueError at line 3" in asked
    assert "[...]" in asked and len(asked) < QUESTION_CHARS + 100 < len(pasted)


def test_only_a_plain_no_takes_the_tools_away() -> None:
    assert not wants_tool("no") and not wants_tool(" No\n")
    assert wants_tool("yes") and wants_tool("") and wants_tool("not sure")
