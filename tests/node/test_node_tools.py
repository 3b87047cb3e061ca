"""The agent tools against a real workspace in a real git repository, and the stream filter that keeps tool-call
markup out of the answer text."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.answer.toolcalls import ToolCall, parse_tool_calls
from contenox.config import WorkspaceConfig
from contenox.node.agent import CallMarkupFilter, tool_schemas
from contenox.node.tools import run_tool
from contenox.workspace import Workspace
from support.gitrepo import make_repo

UTIL = "def helper(x):\n    return x - 1\n\n\ndef unused():\n    return 0\n"
MAIN = "from util import helper\n\n\ndef run():\n    return helper(41)\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = make_repo(tmp_path / "repo", {"util.py": UTIL, "app/main.py": MAIN, "README.md": "# demo\n"})
    return Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")


def call(tool: str, /, **arguments: object) -> ToolCall:
    return ToolCall(name=tool, arguments=dict(arguments))


def test_read_file_whole_or_lines_unsaved_buffer_first_and_errors_as_results(ws: Workspace) -> None:
    whole = run_tool(call("read_file", path="util.py"), ws, max_chars=4000)
    assert whole.ok and whole.kind == "read" and whole.title == "Read util.py"
    assert "    1  def helper(x):" in whole.text and "    6      return 0" in whole.text
    lines = run_tool(call("read_file", path="util.py", start_line=2, end_line=2), ws, max_chars=4000)
    assert lines.title == "Read util.py (lines 2-2)" and lines.locations == (("util.py", 2),)
    assert lines.text.endswith("    2      return x - 1")
    ws.set_overlay("util.py", "def helper(x):\n    return x + 1\n")  # the editor's unsaved text wins
    assert "return x + 1" in run_tool(call("read_file", path="util.py"), ws, max_chars=4000).text
    outside = run_tool(call("read_file", path="../../etc/passwd"), ws, max_chars=4000)
    assert not outside.ok and outside.text.startswith("error: ") and "outside" in outside.text
    missing = run_tool(call("read_file", path="nope.py"), ws, max_chars=4000)
    assert not missing.ok and missing.text.startswith("error: ")
    past = run_tool(call("read_file", path="util.py", start_line=40), ws, max_chars=4000)
    assert not past.ok and "has 2 lines" in past.text
    (ws.root / "empty.py").write_text("")
    ws.refresh()
    assert run_tool(call("read_file", path="empty.py"), ws, max_chars=4000).text == "empty.py is empty"
    cut = run_tool(call("read_file", path="util.py"), ws, max_chars=20)
    assert "[... cut: the result has" in cut.text  # an oversized result says it was cut


def test_search_find_symbol_and_list_files(ws: Workspace) -> None:
    found = run_tool(call("search", pattern=r"helper\(", limit=5), ws, max_chars=4000)
    assert found.ok and found.kind == "search"
    assert "app/main.py:5: return helper(41)" in found.text and "util.py:1: def helper(x):" in found.text
    bad = run_tool(call("search", pattern="(unclosed"), ws, max_chars=4000)
    assert not bad.ok and "not a regular expression" in bad.text
    symbol = run_tool(call("find_symbol", name="helper"), ws, max_chars=4000)
    assert symbol.ok and "util.py:1-2: def helper(x):" in symbol.text and "app/main.py" in symbol.text
    assert symbol.locations == (("util.py", 1),)
    assert "not defined" in run_tool(call("find_symbol", name="Nowhere"), ws, max_chars=4000).text
    listed = run_tool(call("list_files"), ws, max_chars=4000)
    assert listed.text.splitlines() == ["README.md", "app/main.py", "util.py"]
    assert run_tool(call("list_files", path="app"), ws, max_chars=4000).text == "app/main.py"
    assert not run_tool(call("list_files", path="nothing"), ws, max_chars=4000).ok


def test_propose_edit_checks_the_diff_against_the_current_text(ws: Workspace) -> None:
    diff = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n"
            "+    return x + 1\n")
    proposed = run_tool(call("propose_edit", path="util.py", diff=diff), ws, max_chars=4000)
    assert proposed.ok and proposed.kind == "edit" and proposed.edit is not None
    assert proposed.edit.new_text == UTIL.replace("x - 1", "x + 1") and proposed.edit.old_text == UTIL
    assert proposed.locations == (("util.py", 2),) and "the user reviews it" in proposed.text
    assert (ws.root / "util.py").read_text() == UTIL  # proposed, never written by the node
    wrong_counts = diff.replace("@@ -1,2 +1,2 @@", "@@ -1,5 +1,7 @@")  # models miscount: recounted
    assert run_tool(call("propose_edit", path="util.py", diff=wrong_counts), ws, max_chars=4000).ok
    stale = diff.replace("-    return x - 1", "-    return x * 2")
    refused = run_tool(call("propose_edit", path="util.py", diff=stale), ws, max_chars=4000)
    assert not refused.ok and refused.edit is None and refused.text.startswith("error: ")
    assert refused.unapplied  # the node may draw it again under the file's lines
    nothing = "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n     return x - 1\n"
    same = run_tool(call("propose_edit", path="util.py", diff=nothing), ws, max_chars=4000)
    assert not same.ok and same.unapplied and "changes nothing" in same.text
    new_file = ("--- /dev/null\n+++ b/docs/notes.md\n@@ -0,0 +1,1 @@\n+hello\n")
    created = run_tool(call("propose_edit", path="docs/notes.md", diff=new_file), ws, max_chars=4000)
    assert created.ok and created.edit is not None and created.edit.old_text is None
    assert created.edit.new_text == "hello\n"
    outside = run_tool(call("propose_edit", path="/etc/hosts", diff=diff), ws, max_chars=4000)
    assert not outside.ok and "outside" in outside.text and not outside.unapplied
    # a hunk that only adds lines, under context the file does not hold, is refused (the 1.5B's own diff split
    # a docstring: with no context to match it would land at its line number whatever it says)
    adrift = ("--- a/util.py\n+++ b/util.py\n@@ -1,3 +1,3 @@\n def helper(x):\n     \"\"\"Add one.\n"
              "+    return x + 2\n     \"\"\"\n")
    refused = run_tool(call("propose_edit", path="util.py", diff=adrift), ws, max_chars=4000)
    assert not refused.ok and refused.edit is None, refused
    added = "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,3 @@\n def helper(x):\n+    x = int(x)\n     return x - 1\n"
    grown = run_tool(call("propose_edit", path="util.py", diff=added), ws, max_chars=4000)
    assert grown.ok and grown.edit is not None and "    x = int(x)\n    return x - 1" in grown.edit.new_text


def test_a_second_edit_of_a_file_builds_on_the_first_or_replaces_it(ws: Workspace) -> None:
    """One edit per file per turn, from the file as it is: a further change composes with the earlier one; a
    new version of the same change (it no longer applies on top of it) replaces it."""
    first = run_tool(call("propose_edit", path="util.py", diff=(
        "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n+    return x + 1\n")),
        ws, max_chars=4000)
    assert first.edit is not None
    pending = {"util.py": first.edit}
    further = run_tool(call("propose_edit", path="util.py", diff=(
        "--- a/util.py\n+++ b/util.py\n@@ -5,2 +5,2 @@\n def unused():\n-    return 0\n+    return 1\n")),
        ws, max_chars=4000, pending=pending)
    assert further.ok and further.edit is not None and "on top of the earlier edit" in further.title
    assert further.edit.old_text == UTIL and further.edit.new_text == UTIL.replace("x - 1", "x + 1").replace(
        "return 0", "return 1")
    again = run_tool(call("propose_edit", path="util.py", diff=(
        "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n+    return x + 2\n")),
        ws, max_chars=4000, pending=pending)
    assert again.ok and again.edit is not None and "replaces the earlier edit" in again.title
    assert again.edit.old_text == UTIL and again.edit.new_text == UTIL.replace("x - 1", "x + 2")


def test_the_node_tools_are_the_schemas_the_parser_checks() -> None:
    schemas = tool_schemas()
    assert sorted(schemas) == ["find_symbol", "list_files", "propose_edit", "read_file", "run_command", "search"]
    parsed = parse_tool_calls('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py", "start_line": 3}}'
                              "\n</tool_call>", schemas)
    assert parsed.calls == (ToolCall(name="read_file", arguments={"path": "a.py", "start_line": 3}),)


@pytest.mark.parametrize("pieces", [
    ["Let me look.\n<tool_call>\n{...}\n</tool_call>"],
    ["Let me look.\n<", "tool", "_call>\n{", "...}\n</tool_call>"],
    ["Let me look.\n<tool_", "call>", "\n"],
])
def test_the_stream_shows_the_text_before_a_call_and_nothing_of_its_markup(pieces: list[str]) -> None:
    markup = CallMarkupFilter()
    shown = "".join(markup.feed(p) for p in pieces) + markup.flush()
    assert shown == "Let me look.\n" and markup.in_call


def test_an_answer_with_no_call_streams_whole_even_with_a_lone_angle_bracket() -> None:
    markup = CallMarkupFilter()
    pieces = ["Use a < b and <tool", "s> tags; end <"]
    shown = "".join(markup.feed(p) for p in pieces)
    assert shown == "Use a < b and <tools> tags; end "  # the last "<" is held: it could open a call
    assert shown + markup.flush() == "".join(pieces) and not markup.in_call


def _stream(answer: str, size: int = 7) -> tuple[CallMarkupFilter, list[str]]:
    markup = CallMarkupFilter()
    return markup, [markup.feed(answer[i:i + size]) for i in range(0, len(answer), size)] + [markup.flush()]


def test_markup_in_a_code_block_naming_no_language_streams_as_it_comes() -> None:
    answer = "The format is:\n```\n<tool_call>\n{...}\n</tool_call>\n```\nThat is all."
    markup, pieces = _stream(answer)
    assert "".join(pieces[:-1]) == answer and not markup.in_call  # an example: nothing held back
    assert markup.rest(answer) == ""


def test_a_fenced_call_is_held_back_and_a_json_example_released_once_text_follows_it() -> None:
    call = '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "a.py"\n  }\n}\n```'
    markup, pieces = _stream("I'll read it:\n" + call)
    assert "".join(pieces) == "I'll read it:\n" and markup.in_call
    intro = "A tool call names the tool and its arguments; the node runs it and answers with the result. " * 3
    example = intro + "Like this:\n" + call + "\nThat is all."
    markup, pieces = _stream(example)
    held = len(intro) + len("Like this:\n")
    assert "".join(pieces[:(held + len(call)) // 7]) == example[:held]  # held while it could be the last thing
    assert "".join(pieces) == example and not markup.in_call  # text followed: an example, streamed whole


def test_a_redrawn_edit_sees_a_short_file_whole_and_a_window_of_a_long_one() -> None:
    from contenox.node.agent import edit_window

    short = "".join(f"line {n}\n" for n in range(1, 51))
    assert edit_window(short, "") == short
    long = "".join(f"line {n}\n" for n in range(1, 1001))
    # the 1.5B's diff with line numbers copied from a read: the window is around what it meant
    meant = edit_window(long, "@@ -600 +600 @@\n   600  line 600\n-  601  line 601\n+line 601b\n")
    kept = meant.splitlines()
    assert "line 600" in kept and "line 530" in kept and "line 670" in kept and "line 400" not in kept
    assert len(kept) <= 161
    # context the file does not hold: the part the model read, else the file's first lines
    read = edit_window(long, "-nothing like it\n", seen=(300, 320)).splitlines()
    assert read[0] == "line 300" and read[-1] == "line 320"
    assert edit_window(long, "-nothing like it\n").splitlines()[0] == "line 1"


def test_the_rest_of_an_edit_call_is_drawn_in_the_form_the_model_opened_it() -> None:
    from contenox.node.agent import edit_call_rest

    answer = 'I will fix it.\n```json\n{\n  "name": "propose_edit",\n  "arguments": {"diff": "x"}}\n```'
    rest = edit_call_rest(answer, (("util.py", UTIL),))
    assert rest is not None
    head, grammar = rest
    assert head == 'I will fix it.\n```json\n{\n  "name": "propose_edit"'
    assert grammar.startswith('root ::= ",\\n  \\"arguments\\": " args "\\n}\\n```"'), grammar[:80]
    assert '"    return x - 1"' in grammar  # the file's lines
    assert edit_call_rest('```json\n{"name": "read_file", "arguments": {}}\n```', (("util.py", UTIL),)) is None
