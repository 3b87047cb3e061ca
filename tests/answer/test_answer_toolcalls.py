"""The strict tool-call parser against a corpus of well-formed and malformed calls."""

from __future__ import annotations

import json

import pytest

from contenox.answer.toolcalls import ToolCall, parse_tool_calls, schemas_of, streamable
from contenox.planner.prompts import load_prompts

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


def test_markup_inside_a_code_fence_naming_no_language_is_an_example_not_a_call() -> None:
    text = "Call it like this:\n```\n" + _call("read_file", {"path": "a.py"}) + "\n```\nDone."
    parsed = parse_tool_calls(text, SCHEMAS)
    assert parsed.calls == () and parsed.errors == () and parsed.text == text.strip()


def test_plain_answers_have_no_calls() -> None:
    assert parse_tool_calls("A mutex is a lock.", SCHEMAS) == parse_tool_calls("A mutex is a lock.", {})
    assert parse_tool_calls("A mutex is a lock.", SCHEMAS).calls == ()


# Real answers of the Qwen2.5-Coder models to the certification suite (bench/results/*certify*.json, read with
# today's tolerant rules) and hand-written negatives: answer -> the calls read (name, arguments), malformed count.
R = '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "src/app.py"\n  }\n}\n```'
RECORDED = [
    pytest.param(R, [("read_file", {"path": "src/app.py"})], 0, id="1.5b-fenced-read"),
    pytest.param('To find where `parse_config` is defined in this repository, I\'ll search through the source '
                 'code:\n\n```json\n{\n    "name": "find_symbol",\n    "arguments": {\n        "name": '
                 '"parse_config"\n    }\n}\n```\n\nThis function is likely defined in a file named `config.py` or '
                 'similar within the `src` directory of y', [("find_symbol", {"name": "parse_config"})], 0,
                 id="1.5b-short-prose-then-call-then-text"),
    pytest.param('```json\n{\n  "name": "open_tests_test_api_py",\n  "arguments": {\n    "path": '
                 '"tests/test_api.py"\n  }\n}\n```', [], 0, id="1.5b-invented-tool-is-text"),
    pytest.param('```json\n{\n  "name": "src/app.py",\n  "arguments": {\n    "workspace_root": '
                 '"/home/contenox/workspace"\n  }\n}\n```', [], 0, id="0.5b-file-as-name-is-text"),
    pytest.param('```json\n{\n    "workspace_root": "/home/user/Workspace",\n    "editor_path": "/usr/bin/vim"\n}\n```',
                 [], 0, id="0.5b-settings-object-is-text"),
    pytest.param('```json\n{\n  "name": "Cargo.toml",\n  "version": "1.0.0",\n  "edition": "2021",\n  "authors": '
                 '[\n    {\n      "name": "Contenox",\n', [], 0, id="0.5b-cut-manifest-is-text"),
    pytest.param('The `parse_config` function is defined in the `config.py` file of the repository.', [], 0,
                 id="0.5b-plain-answer"),
    pytest.param('```json\n{\n  "name": "propose_edit",\n  "arguments": {\n    "path": "src/app.py",\n    "diff": '
                 '"--- a/src/app.py\\n+++ b/src/app.py\\n@@ -1,3 +1,3 @@\\n-cfg = load()\\n+config', [], 1,
                 id="1.5b-edit-cut-by-token-limit-is-malformed"),
]
NEGATIVES = [
    pytest.param('The node offers tools to the model in the system prompt, with a JSON schema for each, and the '
                 'model answers with a call when it needs to read or change the workspace (read a file, search, '
                 'propose an edit, run the tests). A tool call is JSON '
                 'like this:\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
                 '\nThe node reads it, runs the tool and sends the result back to the model, which then goes on '
                 'answering with the file in front of it. ' * 2 + 'That is the whole protocol.', [], 0,
                 id="example-in-an-explanation"),
    pytest.param('Here is a person record:\n```json\n{"name": "Ada", "arguments": {"age": 36}}\n```', [], 0,
                 id="object-naming-no-tool"),
    pytest.param('```python\ndef read_file(path):\n    return open(path).read()\n```\nCall read_file("a.py").', [], 0,
                 id="code-mentioning-a-tool"),
    pytest.param('Use `{"name": "search", "arguments": {"pattern": "x"}}` to search.', [], 0,
                 id="inline-object-mid-sentence"),
    pytest.param('{"name": "Ada", "email": "ada@example.com"}', [], 0, id="bare-object-naming-no-tool"),
    pytest.param('Why this works: ' + 'the regex anchors the match. ' * 10 + '\n```json\n{"name": "search", '
                 '"arguments": {"pattern": "^a"}}\n```\nSo `^a` matches a leading a.', [], 0,
                 id="long-prose-example-with-text-after"),
]
FORMS = [
    pytest.param('{"name": "list_files", "arguments": {"path": "src"}}', [("list_files", {"path": "src"})], 0,
                 id="bare-at-start"),
    pytest.param('<tools>\n{"name": "find_symbol", "arguments": {"name": "Matrix"}}\n</tools>',
                 [("find_symbol", {"name": "Matrix"})], 0, id="tools-wrapper"),
    pytest.param('<function_call>{"name": "search", "arguments": {"pattern": "TODO", "limit": 3}}</function_call>',
                 [("search", {"pattern": "TODO", "limit": 3})], 0, id="function-call-wrapper"),
    pytest.param('<response>{"name": "run_command", "arguments": {"command": "pytest -q"}}</response>',
                 [("run_command", {"command": "pytest -q"})], 0, id="response-wrapper"),
    pytest.param('<json>{"name": "read_file", "arguments": {"path": "a.py"}}</json>',
                 [("read_file", {"path": "a.py"})], 0, id="json-wrapper"),
    pytest.param('```xml\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n```',
                 [("read_file", {"path": "a.py"})], 0, id="fenced-xml-native"),
    pytest.param('Let me look at both.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```\n'
                 '```json\n{"name": "read_file", "arguments": {"path": "b.py"}}\n```',
                 [("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})], 0, id="two-fenced-calls"),
    pytest.param('The failing assertion is in the parser; ' * 8 + 'I will read it now.\n```json\n{"name": '
                 '"read_file", "arguments": {"path": "lib/parser.js"}}\n```', [("read_file", {"path": "lib/parser.js"})],
                 0, id="long-prose-then-call-as-the-last-thing"),
    pytest.param('```json\n{"name": "read_file", "arguments": {"file_path": "a.py"}}\n```', [], 1,
                 id="declared-tool-wrong-arguments-is-malformed"),
]


@pytest.mark.parametrize(("answer", "calls", "malformed"), [*RECORDED, *NEGATIVES, *FORMS])
def test_calls_in_the_forms_qwen_writes_only_where_a_call_stands(answer: str, calls: list[tuple[str, dict[str, object]]],
                                                                  malformed: int) -> None:
    parsed = parse_tool_calls(answer, SCHEMAS)
    assert [(c.name, c.arguments) for c in parsed.calls] == calls
    assert len(parsed.errors) == malformed, parsed.errors
    if not calls and not malformed:
        assert parsed.text == answer.strip()  # text, untouched


def test_the_text_around_a_fenced_call_stays_answer_text() -> None:
    parsed = parse_tool_calls(f"I'll read it:\n{R}\nThen I can tell you more.", SCHEMAS)
    assert [c.name for c in parsed.calls] == ["read_file"]
    assert parsed.text == "I'll read it:\n\nThen I can tell you more."


@pytest.mark.parametrize("answer", [R, "Sure.\n" + _call("search", {"pattern": "x"}),
                                    '{"name": "list_files", "arguments": {}}', NEGATIVES[0].values[0],
                                    NEGATIVES[2].values[0], "Plain text with a < sign and a { brace."])
def test_streaming_never_shows_a_call_and_shows_all_text(answer: str) -> None:
    parsed = parse_tool_calls(answer, SCHEMAS)
    shown = 0
    for end in range(1, len(answer) + 1):  # one character at a time: what is certain never shrinks
        certain, begun = streamable(answer[:end], SCHEMAS)
        assert certain >= shown
        shown = certain
        if begun:
            break
    final, begun = streamable(answer, SCHEMAS, final=True)
    assert begun == bool(parsed.calls or parsed.errors)
    if begun:  # what shows is the text before the call
        assert shown <= final and parsed.text.startswith(answer[:final].strip())
    else:
        assert final == len(answer)
