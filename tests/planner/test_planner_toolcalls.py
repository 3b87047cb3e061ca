"""The strict tool-call parser against a corpus of well-formed and malformed calls."""

from __future__ import annotations

import json

import pytest

from contenox.planner.prompts import load_prompts
from contenox.planner.toolcalls import ToolCall, parse_tool_calls, schemas_of

SCHEMAS = schemas_of([json.loads(line) for line in load_prompts().tools.splitlines()])


def _call(name: str, arguments: object) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def test_a_valid_call_and_its_surrounding_text() -> None:
    parsed = parse_tool_calls("Let me look.\n" + _call("read_file", {"path": "src/app.py"}), SCHEMAS)
    assert parsed.calls == (ToolCall(name="read_file", arguments={"path": "src/app.py"}),)
    assert parsed.text == "Let me look." and parsed.errors == ()


def test_two_calls_in_one_answer_and_string_arguments() -> None:
    text = _call("find_symbol", {"name": "parse"}) + '<tool_call>{"name": "search", "arguments": "{\\"pattern\\": \\"TODO\\", \\"limit\\": 5}"}</tool_call>'
    parsed = parse_tool_calls(text, SCHEMAS)
    assert [c.name for c in parsed.calls] == ["find_symbol", "search"]
    assert parsed.calls[1].arguments == {"pattern": "TODO", "limit": 5}


@pytest.mark.parametrize(("text", "error"), [
    ('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}', "unclosed"),
    ('<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>', "not JSON"),
    (_call("delete_everything", {}), "unknown tool 'delete_everything'"),
    (_call("read_file", {}), "missing required argument 'path'"),
    (_call("search", {"pattern": "x", "limit": "five"}), "argument 'limit' should be integer"),
    (_call("search", {"pattern": "x", "limit": True}), "argument 'limit' should be integer"),
    (_call("read_file", {"path": "a.py", "mode": "w"}), "undeclared argument 'mode'"),
    ('<tool_call>["read_file"]</tool_call>', "not an object"),
    ('<tool_call>{"name": "read_file", "arguments": [1]}</tool_call>', "'arguments' is not an object"),
])
def test_malformed_calls_are_text_with_the_reason(text: str, error: str) -> None:
    parsed = parse_tool_calls(text, SCHEMAS)
    assert parsed.calls == ()
    assert len(parsed.errors) == 1 and error in parsed.errors[0]


def test_markup_inside_a_code_fence_is_an_example_not_a_call() -> None:
    text = "Call it like this:\n```\n" + _call("read_file", {"path": "a.py"}) + "\n```\nDone."
    parsed = parse_tool_calls(text, SCHEMAS)
    assert parsed.calls == () and parsed.errors == () and parsed.text == text.strip()


def test_plain_answers_have_no_calls() -> None:
    assert parse_tool_calls("A mutex is a lock.", SCHEMAS) == parse_tool_calls("A mutex is a lock.", {})
    assert parse_tool_calls("A mutex is a lock.", SCHEMAS).calls == ()
