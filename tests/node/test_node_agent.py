"""An agent turn in the node: a certified model's tool calls are run against the real workspace, reported as
tool activity, and their results appended to the turn; the answer comes after; the next turn reuses the whole
agent turn. The model's answers are scripted (tests/support/agent_kit.py); the tokenizer, planner, engine,
workspace and git are real."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from contenox.config import load_config
from contenox.errors import Cancelled
from contenox.node import Node, backend
from contenox.node.contract import ToolActivity, TurnEvent, TurnRequest
from contenox.runtime_ov import InstalledModel
from support.agent_kit import HANG, Script, call, certified_home
from support.gitrepo import make_repo

pytestmark = pytest.mark.slow

UTIL = "def helper(x):\n    return x - 1\n"
FIX = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n+    return x + 1\n")


@pytest.fixture
def agent_home(tmp_path: Path, fim_model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = certified_home(tmp_path / "home", fim_model)
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    yield home


@pytest.fixture
async def node(agent_home: Path) -> AsyncIterator[Node]:
    node = Node(load_config(agent_home))
    yield node
    await node.close()


def scripted(monkeypatch: pytest.MonkeyPatch, *answers: str) -> Script:
    script = Script(*answers)
    monkeypatch.setattr(backend, "submit", script.submit)
    return script


async def test_an_agent_turn_reads_proposes_an_edit_and_answers(node: Node, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL, "main.py": "from util import helper\n"})
    script = scripted(monkeypatch,
                      "Let me read it.\n" + call("read_file", path="util.py"),
                      call("propose_edit", path="util.py", diff=FIX) + "\n" + call("read_file", path="../secret"),
                      "helper subtracted one; the proposed edit makes it add one.",
                      "It returns x + 1 once applied.")
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Fix helper: it should add one."), on_event)
    assert outcome.text == "helper subtracted one; the proposed edit makes it add one."
    assert outcome.tool_steps == 2 and outcome.finish_reason == "stop"
    # the user saw the text before the call, never the markup
    streamed = "".join(e.text for e in events if e.kind == "chunk")
    assert streamed == "Let me read it.\n" + outcome.text and "<tool_call>" not in streamed
    # each call: started, then ended with its kind, locations and output
    tools = [e.tool for e in events if e.kind == "tool" and e.tool is not None]
    ended = [t for t in tools if t.status != "in_progress"]
    assert [t.status for t in tools] == ["in_progress", "completed", "in_progress", "completed", "in_progress",
                                         "failed"]
    read, edit, outside = ended
    assert (read.kind, read.title, read.locations) == ("read", "Read util.py", ((str(repo / "util.py"), None),))
    assert "    2      return x - 1" in read.output
    assert (edit.kind, edit.edit_index, edit.locations) == ("edit", 0, ((str(repo / "util.py"), 2),))
    assert outside.output.startswith("error: ") and "outside" in outside.output
    assert isinstance(read, ToolActivity)
    # the edit is proposed for review, not written
    [proposed] = outcome.edits.edits
    assert proposed.path == "util.py" and proposed.new_text == UTIL.replace("x - 1", "x + 1")
    assert (repo / "util.py").read_text() == UTIL
    # every step's prompt extends the last one: its prefill is only the new results
    first, second, third = script.prompts[:3]
    assert second[:len(first)] == first and third[:len(second)] == second
    results = node.workspace(str(repo)).planner
    assert results is not None and results.tools
    explain = outcome.explain
    tools_segment = next(s for s in explain.segments if s.kind == "tools")
    assert tools_segment.tokens > 100
    assert any(n.startswith("agent turn: 2 tool step(s) (read_file, propose_edit); time to first token per step")
               for n in explain.notes)
    # the next turn holds the agent turn as it was sent: all of it is a prefix of the next prompt
    await node.turn(TurnRequest(root=str(repo), prompt="What does helper return now?"))
    follow = script.prompts[3]
    answer_ids = results.tokenizer.encode(outcome.text)
    assert follow[:len(third) + len(answer_ids)] == third + answer_ids
    history = await node.history(str(repo), "main")
    assert [h.answer for h in history] == [outcome.text, "It returns x + 1 once applied."]
    assert [h.finish_reason for h in history] == ["stop", "stop"]  # as recorded: a client shows a cut answer as cut
    assert script.tools == [True] * 4  # every step of a tool-enabled turn carries the tool-call grammar


async def test_a_turn_offers_one_edit_per_file_however_many_times_it_edits_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B edits a file, then edits it again: the second diff is written against the first's result, and
    the turn offers one edit of the file holding both (two edits of one file from its old text would clash)."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    more = "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,3 @@\n def helper(x):\n     return x + 1\n+# checked\n"
    scripted(monkeypatch, call("propose_edit", path="util.py", diff=FIX),
             call("propose_edit", path="util.py", diff=more), "Both changes are proposed.")
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Make helper add one and mark it checked."),
                              on_event)
    [proposed] = outcome.edits.edits
    assert proposed.old_text == UTIL and proposed.new_text == "def helper(x):\n    return x + 1\n# checked\n"
    ended = [e.tool for e in events if e.kind == "tool" and e.tool is not None and e.tool.status != "in_progress"]
    assert [(t.title, t.edit_index) for t in ended] == [("Edit util.py", 0),
                                                        ("Edit util.py on top of the earlier edit", 0)]


async def test_a_question_that_only_asks_to_see_gets_no_edit(node: Node, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked to show a to-do file, the 1.5B went on to do its first item: that edit is not run, and the answer
    is asked for again in text (under the answer grammar)."""
    from contenox.node.agent import ANSWER_GRAMMAR
    from contenox.node.verifying import asks_only_to_read

    assert asks_only_to_read("Show me the contents of notes/todo.txt.")
    assert not asks_only_to_read("Show me how to fix helper.") and not asks_only_to_read("Fix helper: add one.")
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL, "todo.txt": "1. Make helper add one.\n"})
    script = scripted(monkeypatch, call("read_file", path="todo.txt"), call("propose_edit", path="util.py", diff=FIX),
                      "todo.txt says: 1. Make helper add one.")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Show me the contents of todo.txt."))
    assert outcome.text == "todo.txt says: 1. Make helper add one." and outcome.tool_steps == 1
    assert outcome.edits.edits == () and (repo / "util.py").read_text() == UTIL
    assert script.grammars[-1] == ANSWER_GRAMMAR
    assert any("proposed an edit after 1 tool step(s) where the question asks for none" in n
               for n in outcome.explain.notes)


async def test_limits_and_cancel_end_an_agent_turn_cleanly(node: Node, tmp_path: Path, agent_home: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    (agent_home / "config.toml").write_text((agent_home / "config.toml").read_text() + "\n[tools]\nmax_steps = 1\n")
    limited = Node(load_config(agent_home))
    try:
        script = scripted(monkeypatch, call("read_file", path="util.py"),
                          "Still looking. " + call("search", pattern="x"), "helper is in util.py.")
        outcome = await limited.turn(TurnRequest(root=str(repo), prompt="Where is helper?"))
        # at the limit the last call is not run: the model answers in text from the results so far
        assert outcome.tool_steps == 1 and outcome.text == "helper is in util.py."
        assert any("agent turn stopped after 1 tool step(s)" in n and n.endswith("asked to answer in text")
                   for n in outcome.explain.notes)
        from contenox.node.agent import ANSWER_GRAMMAR

        assert script.grammars[-1] == ANSWER_GRAMMAR and script.tools[-1] is False  # no call, no code block first
        assert script.prompts[-1] == script.prompts[-2]  # the same prompt: the step's results, answered in text
    finally:
        await limited.close()

    script = scripted(monkeypatch, call("run_command", command="make"), call("run_command", command="make"),
                      "Run `make` yourself: I could not.")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Build it."))
    assert outcome.tool_steps == 1 and outcome.text == "Run `make` yourself: I could not."  # not run twice
    assert any("the model made the same call again (run_command); it was not run twice" in n
               for n in outcome.explain.notes)

    script = scripted(monkeypatch, call("list_files"), HANG)
    task = asyncio.ensure_future(node.turn(TurnRequest(root=str(repo), prompt="List and then think.")))
    await asyncio.wait_for(script.reached_hang.wait(), 60)
    task.cancel()
    with pytest.raises(Cancelled):
        await task
    history = await node.history(str(repo), "main")  # (one journal: both nodes use this home)
    # the cancelled agent turn: no answer recorded, the question kept where it was asked, with why
    assert [(h.user, h.turn, h.answer, h.unanswered) for h in history] == [
        ("Where is helper?", 1, "helper is in util.py.", ""), ("Build it.", 2, outcome.text, ""),
        ("List and then think.", 0, "", "stopped before the answer was finished")]


async def test_each_step_prefills_only_its_new_results_on_the_real_engine(node: Node, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL * 40, "main.py": "from util import helper\n"})
    script = Script(call("read_file", path="util.py"), call("search", pattern="helper"), "Done.",
                    prefill=backend.submit)  # the engine really prefills every step's prompt
    monkeypatch.setattr(backend, "submit", script.submit)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Where is helper used?"))
    assert outcome.tool_steps == 2
    first, second, third = script.metrics
    block = 32  # SmolLM2 / Qwen cache block size
    for before, after, prompt in ((first, second, script.prompts[1]), (second, third, script.prompts[2])):
        new = len(prompt) - before.prompt_tokens
        assert after.predicted_cached_tokens >= before.prompt_tokens - block  # the previous step is reused
        assert after.measured_recomputed_tokens <= new + 2 * block + after.chunk_tokens
    assert third.predicted_cached_tokens > 0.8 * third.prompt_tokens  # (only the search results are new)
    notes = " ".join(outcome.explain.notes)
    assert "time to first token per step" in notes
    print("agent steps (prompt tokens, cached, ttft ms):",
          [(m.prompt_tokens, m.predicted_cached_tokens, round(m.ttft_ms)) for m in script.metrics])


async def test_a_no_from_the_tool_check_answers_the_turn_in_text(node: Node, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool check (contenox.planner.toolcheck) asked first: on no the question is followed by the text-only
    line, the answer carries no call grammar and a call it writes anyway is not run; the next turn's yes gives the
    tools back and its first step must be a call ([tools] require_call), the step after the result need not. The check's instruction and examples are the same every turn (the engine's prefix cache holds
    them): only the question differs."""
    from contenox.planner.prompts import load_prompts

    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    code = "```python\ndef read_file(path):\n    return open(path).read()\n```"
    script = Script(code + "\n" + call("read_file", path="util.py"), call("read_file", path="util.py"),
                    "helper subtracts one.", checks=("no", "yes"))
    monkeypatch.setattr(backend, "submit", script.submit)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    asked = "Write a Python function named read_file that returns a file's text."
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=asked), on_event)
    assert outcome.tool_steps == 0 and not [e for e in events if e.kind == "tool"]
    assert outcome.text.startswith(code)  # the call written anyway is text: shown, never run
    assert script.tools == [False]
    from contenox.planner.toolcheck import GRAMMAR, KIND_GRAMMAR, TEXT_ONLY_GRAMMAR

    # the check's two questions, then the answer: no call opening first
    assert script.grammars[:3] == [GRAMMAR, KIND_GRAMMAR, TEXT_ONLY_GRAMMAR]
    planner = node.workspace(str(repo)).planner
    assert planner is not None
    prompt = planner.tokenizer.decode(script.prompts[0])
    assert asked in prompt and prompt.endswith(load_prompts().text_only + "\nassistant\n")  # (markers decoded away)
    assert any(n.startswith("tools: the tool check answered no (needs a tool: no; kind: repo)")
               for n in outcome.explain.notes)

    second = await node.turn(TurnRequest(root=str(repo), prompt="What does helper in util.py do?"))
    assert second.tool_steps == 1 and script.tools == [False, True, True]
    assert script.required == [False, True, False]  # the check's yes makes the first step a call; later ones free
    assert script.grammars[3:] == [GRAMMAR, KIND_GRAMMAR, "", ""]
    assert load_prompts().text_only not in planner.tokenizer.decode(script.prompts[1])[len(prompt):]
    first_check, second_check = (planner.tokenizer.decode(ids) for ids in script.checked)
    assert asked in first_check and "What does helper in util.py do?" in second_check
    shared = len(first_check) - len(f"Request: {asked}\nassistant\n")
    assert first_check[:shared] == second_check[:shared]


async def test_a_call_of_no_declared_tool_after_the_results_is_answered_again_in_text(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a tool result the 1.5B writes a fenced call of a tool that does not exist (eval: `rename_function`
    as the whole answer of both refactor tasks): not shown, and the model is asked once more, under a grammar
    whose answer cannot open with an object or a code block. An answer that opens with a code block and is no
    call is shown whole once it ends."""
    from contenox.node.agent import ANSWER_GRAMMAR

    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    junk = '```json\n{\n  "name": "rename_function",\n  "arguments": {"old_name": "helper", "new_name": "dec"}\n}\n```'
    script = scripted(monkeypatch, call("read_file", path="util.py"), junk, "Rename helper to dec in util.py.")
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename helper in util.py to dec."), on_event)
    assert outcome.text == "Rename helper to dec in util.py." and outcome.tool_steps == 1
    streamed = "".join(e.text for e in events if e.kind == "chunk")
    assert "rename_function" not in streamed and streamed.endswith("Rename helper to dec in util.py.")
    assert script.grammars[-1] == ANSWER_GRAMMAR and script.prompts[-1] == script.prompts[-2]
    assert any("was a call the node does not run ('rename_function'" in n for n in outcome.explain.notes)

    code = "```python\ndef helper(x):\n    return x + 1\n```\nThat is the fix."
    scripted(monkeypatch, call("read_file", path="util.py"), code)
    events.clear()
    shown = await node.turn(TurnRequest(root=str(repo), prompt="Show helper fixed to add one."), on_event)
    assert shown.text == code and "".join(e.text for e in events if e.kind == "chunk").endswith(code)


FROM_MEMORY = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x-1\n+    return x+1\n")
"""The 1.5B's kind of diff: its context written from memory (spacing the file does not have), so it does not apply."""


def _rest(name: str, **arguments: object) -> str:
    """What follows a call's opening in the native markup (``<tool_call>\\n{"name": "..."``)."""
    import json

    return call(name, **arguments).split(json.dumps(name), 1)[1]


async def test_an_edit_that_does_not_apply_is_drawn_again_held_to_the_file_s_lines(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's diff does not apply: the call is drawn again from its opening on (the text before it kept),
    under a grammar of the file's own lines; the redrawn edit is what the turn proposes, and explain says so."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = scripted(monkeypatch, "I will fix it.\n" + call("propose_edit", path="util.py", diff=FROM_MEMORY),
                      _rest("propose_edit", path="util.py", diff=FIX), "helper now adds one.")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Fix helper: it should add one."))
    [proposed] = outcome.edits.edits
    assert proposed.new_text == UTIL.replace("x - 1", "x + 1")
    first, redraw = script.prompts[:2]
    head = "I will fix it.\n<tool_call>\n" + '{"name": "propose_edit"'
    tokenizer = node.workspace(str(repo)).planner.tokenizer  # type: ignore[union-attr]
    assert redraw == first + tokenizer.encode(head)  # the answer up to the call's opening, kept
    grammar = script.grammars[-2]
    assert '"    return x - 1"' in grammar and '"def helper(x):"' in grammar  # the file's own lines
    assert script.tools[1] is False  # the redraw is under its own grammar alone
    notes = outcome.explain.notes
    assert any(n.startswith("the model's edit of util.py: ") and "drawn again" in n and "(2 line(s))" in n
               for n in notes), notes
    after = tokenizer.decode_raw(script.prompts[2])  # the step as the thread holds it: the redrawn call
    assert head + _rest("propose_edit", path="util.py", diff=FIX) in after and "x-1" not in after


async def test_a_redrawn_edit_that_still_fails_goes_to_the_model_as_a_tool_error(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One redraw per step: its failure is the step's result, and the model answers from it."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = scripted(monkeypatch, call("propose_edit", path="util.py", diff=FROM_MEMORY),
                      _rest("propose_edit", path="util.py", diff=FROM_MEMORY), "The edit did not apply.")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Fix helper: it should add one."))
    assert outcome.text == "The edit did not apply." and not outcome.edits.edits
    assert len(script.prompts) == 3 and outcome.tool_steps == 1


async def test_no_redraw_for_an_edit_that_applies_or_a_file_that_does_not_exist(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contenox.node import tools

    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = scripted(monkeypatch, call("propose_edit", path="util.py", diff=FIX),
                      call("propose_edit", path="nope.py", diff=FROM_MEMORY.replace("util.py", "nope.py")), "Done.")
    tried: list[str] = []
    real = tools._propose_edit
    monkeypatch.setattr(tools, "_propose_edit", lambda c, *a: tried.append(str(c.arguments["path"])) or real(c, *a))
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Fix helper: it should add one."))
    assert outcome.text == "Done." and len(script.prompts) == 3
    assert not any("drawn again" in n for n in outcome.explain.notes)
    assert tried == ["util.py", "nope.py"]  # each edit tried once: the step uses the result the check had


async def test_a_file_s_edit_is_drawn_again_once_a_turn(node: Node, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The redrawn call still fails and the model edits the file again: that edit's error goes to the model as
    is (the 1.5B's redrawn calls, cut at the token limit step after step, cost five redraws in one turn)."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = scripted(monkeypatch, call("propose_edit", path="util.py", diff=FROM_MEMORY),
                      _rest("propose_edit", path="util.py", diff=FROM_MEMORY),
                      call("propose_edit", path="util.py", diff=FROM_MEMORY.replace("x+1", "x+2")), "It failed.")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Fix helper: it should add one."))
    assert outcome.text == "It failed." and outcome.tool_steps == 2 and len(script.prompts) == 4
    assert sum("drawn again" in n for n in outcome.explain.notes) == 1
