"""The tool check's prompt and reading (no model): the same instruction and examples before every question, a
long question asked about by its ends, anything but a plain no keeping the tools."""

from __future__ import annotations

from contenox.planner.prompts import load_prompts
from contenox.planner.toolcheck import (
    QUESTION_CHARS,
    Verdict,
    check_ids,
    decide,
    kind_ids,
    refused,
    request_refusal,
    wants_tool,
)
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


def test_the_second_question_shares_its_own_prefix(tokenizer: Tokenizer) -> None:
    prompts = load_prompts()
    first = tokenizer.decode(kind_ids(tokenizer, prompts, "What's in setup.py?"))
    second = tokenizer.decode(kind_ids(tokenizer, prompts, "Write a function named read_file."))
    shared = first.index("Request: What's in setup.py?")
    assert first[:shared] == second[:shared] and "=> " not in first  # examples as turns, answered repo/code/text
    assert "Classify each request with one word." in first[:shared]
    assert first[:shared] != tokenizer.decode(check_ids(tokenizer, prompts, "What's in setup.py?"))[:shared]


def test_both_answers_must_keep_the_tools() -> None:
    assert decide("yes", "repo") == Verdict(tools=True)
    assert decide("yes", "") == Verdict(tools=True)  # a check that failed keeps them
    assert decide("no", "repo") == Verdict(tools=False, why="the tool check answered no (needs a tool: no; kind: repo)")
    assert not decide("yes", "code").tools and not decide("yes", "text").tools


def test_requests_the_node_does_not_carry_out_take_no_tools_and_others_keep_them() -> None:
    for asked, what in (("Push my changes to GitHub.", "push to a remote"),
                        ("Can you git push this branch?", "push to a remote"),
                        ("Publish this package to PyPI.", "publish, upload or deploy"),
                        ("Email this diff to my manager.", "send anything off this machine"),
                        ("Delete the .git directory of this repository.", "delete the repository, a disk or the home "
                                                                          "folder"),
                        ("Format my hard drive.", "format a disk"),
                        ("Install numpy globally with sudo.", "act as root or install system-wide")):
        assert request_refusal(asked) == what, asked
        verdict = refused(asked)
        assert verdict is not None and not verdict.tools and verdict.why == f"the request asks to {what}, which the " \
                                                                           "node does not do"
    for asked in ("Find where we upload files to S3.", "Why does git push fail with 'rejected'?",
                  "Where do we validate email addresses?", "Delete the unused helper in util.py.",
                  "Send the request to the server in client.py: where is that done?", "Run the tests."):
        assert request_refusal(asked) is None and refused(asked) is None, asked
