"""The ACP adapter in-process over a socketpair with the SDK's client, against a fake node."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    ResourceContentBlock,
    TextResourceContents,
)

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from contenox.acp import serve_connection
from contenox.acp.sessions import LegacyUnanswered, SessionRecord, SessionStore, title_of
from contenox.answer.edits import ProposedEdit, ProposedEdits, unified_diff
from contenox.jsonrpc import MAX_MESSAGE_BYTES as MAX_LINE_BYTES
from contenox.node.contract import Exchange
from contenox.verify import CandidateResult, Verification, consent_scope
from support.acp_recorder import Recorder
from support.lsp_fake_node import FakeNode


class Session:
    def __init__(self, conn: Any, recorder: Recorder, server: asyncio.Task[None], writer: Any) -> None:
        self.conn, self.recorder, self.server, self.writer = conn, recorder, server, writer

    async def close(self) -> None:
        self.writer.close()
        await asyncio.wait_for(self.server, 10)


async def _connect(node: FakeNode, *, permit: str | None = None,
                   capabilities: ClientCapabilities | None = None) -> Session:
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a, limit=1 << 24)
    server = asyncio.ensure_future(serve_connection(sr, sw, node))
    cr, cw = await asyncio.open_unix_connection(sock=b, limit=1 << 24)
    recorder = Recorder(permit=permit)
    conn = connect_to_agent(recorder, cw, cr)
    init = await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                 client_capabilities=capabilities or ClientCapabilities())
    caps = init.agent_capabilities
    assert caps is not None and caps.load_session and caps.prompt_capabilities is not None
    assert caps.prompt_capabilities.embedded_context and not caps.prompt_capabilities.image
    return Session(conn, recorder, server, cw)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "util.py").write_text("def helper(x):\n    return x + 1\n")
    return root


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[tuple[Session, FakeNode]]:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    s = await _connect(node)
    yield s, node
    await s.close()


async def test_prompt_streams_chunks_usage_plan_and_uses_resources(session: tuple[Session, FakeNode],
                                                                   workspace: Path) -> None:
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    commands = await s.recorder.wait_for("available_commands_update")
    assert [c.name for c in commands[0].available_commands] == ["explain-context", "pin", "unpin"]
    link = ResourceContentBlock(type="resource_link", uri=(workspace / "util.py").as_uri(), name="util.py")
    embedded = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
        uri="file:///scratch/notes.md", text="The helper must stay pure."))
    reply = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Is helper pure?"), link, embedded])
    assert reply.stop_reason == "end_turn"
    assert s.recorder.text(new.session_id) == "Hello world"
    usage = s.recorder.of("usage_update", new.session_id)
    assert len(usage) == 1 and usage[0].used == 100 and usage[0].size == 8192
    assert usage[0].field_meta["contenox"]["totals"]["tokens"] == 100
    plans = s.recorder.of("plan", new.session_id)
    assert len(plans) >= 3 and all(e.status == "completed" for e in plans[-1].entries)
    request = node.requests[-1]
    assert request.prompt == "Is helper pure?" and request.root == str(workspace)
    assert request.pins == (str(workspace / "util.py"),)
    assert request.selection is not None and "The helper must stay pure." in request.selection


async def test_cited_files_become_resource_links_and_usage_is_filled(session: tuple[Session, FakeNode],
                                                                     workspace: Path) -> None:
    s, node = session
    node.cites = ("util.py", "gone.py")  # gone.py: cited as real but no longer on disk
    new = await s.conn.new_session(cwd=str(workspace))
    reply = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Where is helper?")])
    links = [u.content for u in s.recorder.of("agent_message_chunk", new.session_id)
             if u.content.type == "resource_link"]
    assert [(link.name, link.uri, link.title) for link in links] == [
        ("util.py", (workspace / "util.py").as_uri(), "util.py (cited)")]
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cached_read_tokens,
            reply.usage.total_tokens) == (100, 2, 0, 102)
    # Zed reports no cursor: the session's next question likely starts at what the answer cites: anticipated there
    [focus] = node.focuses
    assert (focus["path"], focus["line"], focus["thread"]) == (str(workspace / "util.py"), 1, new.session_id)


async def test_cancel_stops_the_turn_with_stop_reason_cancelled(session: tuple[Session, FakeNode],
                                                                workspace: Path) -> None:
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    node.hold = True
    prompt = asyncio.ensure_future(s.conn.prompt(session_id=new.session_id, prompt=[text_block("slow")]))
    await asyncio.wait_for(node.started.wait(), 10)
    await s.conn.cancel(session_id=new.session_id)
    reply = await asyncio.wait_for(prompt, 10)
    assert reply.stop_reason == "cancelled" and node.cancelled == 1
    final = s.recorder.of("plan", new.session_id)[-1]  # no step left in progress after Stop
    assert [e.status for e in final.entries] == ["completed", "pending", "pending"]
    assert final.entries[1].content.endswith("(stopped)")
    node.hold = False
    again = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
    assert again.stop_reason == "end_turn"


async def test_a_cancel_sent_right_after_the_prompt_is_honoured(session: tuple[Session, FakeNode],
                                                                  workspace: Path) -> None:
    """Regression: a session/cancel right after session/prompt (before the first plan update went out) was
    dropped and the turn ran to its end (9 of 9 tries)."""
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    node.hold = True
    prompt = asyncio.ensure_future(s.conn.prompt(session_id=new.session_id, prompt=[text_block("slow")]))
    await asyncio.sleep(0)  # the prompt is on its way; nothing has answered yet
    await s.conn.cancel(session_id=new.session_id)
    reply = await asyncio.wait_for(prompt, 10)
    assert reply.stop_reason == "cancelled"
    node.hold = False
    assert (await s.conn.prompt(session_id=new.session_id, prompt=[text_block("again")])).stop_reason == "end_turn"


async def test_a_stopped_prompt_is_in_the_nodes_log_for_every_client_and_an_old_sessions_own_still_show(
        session: tuple[Session, FakeNode], workspace: Path, tmp_path: Path) -> None:
    """A prompt is told to the node before its turn is sent, so one stopped before its turn ran (the Stop came
    while it was being set up) is in the node's open-questions log, which every client reads (the VS Code panel
    through ``history``) and ``session/load`` shows in its place. A session an earlier version saved with its own
    unanswered prompts still shows them where they were asked (one recorded under way: cut off)."""
    s, node = session
    sid = (await s.conn.new_session(cwd=str(workspace))).session_id
    node.hold = True
    prompt = asyncio.ensure_future(s.conn.prompt(session_id=sid, prompt=[text_block("slow")]))
    await asyncio.sleep(0)
    await s.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(prompt, 10)).stop_reason == "cancelled"
    node.hold = False
    await s.conn.prompt(session_id=sid, prompt=[text_block("again")])
    history = await node.history(str(workspace), sid)
    assert [(e.user, e.unanswered) for e in history] == [("slow", "stopped before the answer was finished"),
                                                         ("again", "")]
    assert node.requests[-1].asked and not node.asked  # the turn carried its question's id and ended it
    again = await _connect(node)
    try:
        await again.conn.load_session(cwd=str(workspace), session_id=sid)
        assert [u.content.text for u in again.recorder.of("user_message_chunk", sid)] == ["slow", "again"]
        assert "_(no answer: stopped before the answer was finished)_Hello world" in again.recorder.text(sid)
    finally:
        await again.close()

    old = SessionRecord(session_id="acp-old0000000000001", cwd=str(workspace), created=1.0, unanswered=(
        LegacyUnanswered(prompt="before", after=0, why="stopped"), LegacyUnanswered(prompt="under way", after=1)))
    SessionStore(node.config.state_dir / "acp" / "sessions").save(old)
    node.exchanges[(str(workspace), old.session_id)] = [Exchange(turn=1, user="answered", answer="Yes.")]
    third = await _connect(node)
    try:
        await third.conn.load_session(cwd=str(workspace), session_id=old.session_id)
        assert [u.content.text for u in third.recorder.of("user_message_chunk", old.session_id)] == [
            "before", "answered", "under way"]
        assert third.recorder.text(old.session_id).endswith("_(no answer: cut off: the node went away before the "
                                                            "answer was finished)_")
    finally:
        await third.close()


async def test_an_unknown_slash_command_is_answered_not_asked(session: tuple[Session, FakeNode],
                                                              workspace: Path) -> None:
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    reply = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("/explian-context")])
    assert reply.stop_reason == "end_turn" and node.requests == []
    assert s.recorder.text(new.session_id).startswith("Unknown command /explian-context. The commands are "
                                                      "/explain-context, /pin, /unpin")
    await s.conn.prompt(session_id=new.session_id, prompt=[text_block("/etc/hosts has a typo?")])
    assert [r.prompt for r in node.requests] == ["/etc/hosts has a typo?"]  # a path is a question


async def test_commands_and_load_replays_transcript(tmp_path: Path, workspace: Path) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    s = await _connect(node)
    new = await s.conn.new_session(cwd=str(workspace))
    sid = new.session_id
    await s.conn.prompt(session_id=sid, prompt=[text_block("/explain-context")])
    assert "No turn has run" in s.recorder.text(sid)
    mark = len(s.recorder.updates)
    await s.conn.prompt(session_id=sid, prompt=[text_block("/pin")])  # alone: the list
    assert s.recorder.text(sid, since=mark).startswith("Nothing is pinned. `/pin PATH` pins a file")
    mark = len(s.recorder.updates)
    await s.conn.prompt(session_id=sid, prompt=[text_block("/pin util.py")])
    assert node.pinned[str(workspace)] == [str(workspace / "util.py")]
    assert s.recorder.text(sid, since=mark) == (f"Pinned util.py.\n\nPinned in every turn of `{workspace}`:\n"
                                                f"- `{workspace / 'util.py'}`")
    await s.conn.prompt(session_id=sid, prompt=[text_block("what is helper?")])
    await s.conn.prompt(session_id=sid, prompt=[text_block("/explain-context")])
    assert "system" in s.recorder.text(sid)
    await s.close()

    again = await _connect(node)  # a new client (Zed restarted) loads the thread
    await again.conn.load_session(cwd=str(workspace), session_id=sid)
    users = [u.content.text for u in again.recorder.of("user_message_chunk", sid)]
    assert users == ["what is helper?"]  # the model's turns, from the node's journal; commands are not turns
    assert node.requests[-1].thread == sid
    assert "Hello world" in again.recorder.text(sid)
    reply = await again.conn.prompt(session_id=sid, prompt=[text_block("more")])
    assert reply.stop_reason == "end_turn"
    await again.close()


async def test_bad_requests_get_errors_and_connection_survives(session: tuple[Session, FakeNode],
                                                               workspace: Path) -> None:
    s, _ = session
    with pytest.raises(RequestError) as unknown:
        await s.conn.prompt(session_id="nope", prompt=[text_block("x")])
    assert unknown.value.code == -32602
    with pytest.raises(RequestError) as missing:
        await s.conn.load_session(cwd=str(workspace), session_id="acp-doesnotexist")
    assert missing.value.code == -32002
    with pytest.raises(RequestError) as bad_cwd:
        await s.conn.new_session(cwd="relative/dir")
    assert bad_cwd.value.code == -32602
    new = await s.conn.new_session(cwd=str(workspace))
    with pytest.raises(RequestError) as over:
        await s.conn.prompt(session_id=new.session_id, prompt=[text_block("too long")])
    assert over.value.code == -32007 and over.value.data["kind"] == "over_context"
    ok = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("fine")])
    assert ok.stop_reason == "end_turn"


async def test_disconnect_cancels_running_turn(tmp_path: Path, workspace: Path) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    s = await _connect(node)
    new = await s.conn.new_session(cwd=str(workspace))
    node.hold = True
    pending = asyncio.ensure_future(s.conn.prompt(session_id=new.session_id, prompt=[text_block("slow")]))
    await asyncio.wait_for(node.started.wait(), 10)
    await s.close()
    pending.cancel()
    for _ in range(100):
        if node.cancelled:
            break
        await asyncio.sleep(0.01)
    assert node.cancelled == 1


async def test_malformed_and_huge_lines_get_errors_and_connection_survives(tmp_path: Path) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a)
    server = asyncio.ensure_future(serve_connection(sr, sw, node))
    cr, cw = await asyncio.open_unix_connection(sock=b, limit=1 << 24)
    cw.write(b"{not json\n")
    cw.write(b"[1, 2]\n")
    cw.write(b'{"jsonrpc": "2.0", "id": 7, "method": "nope/unknown", "params": {}}\n')
    cw.write(b'{"x": "' + b"y" * (MAX_LINE_BYTES + 10) + b'"}\n')
    cw.write(b"[" * 5000 + b"]" * 5000 + b"\n")  # regression: a RecursionError closed the connection
    cw.write(b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 1}}\n')
    replies = [json.loads(await asyncio.wait_for(cr.readline(), 30)) for _ in range(6)]
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert [r["error"]["code"] for r in replies if r["id"] is None] == [-32700, -32600, -32600, -32700]
    assert by_id[7]["error"]["code"] == -32601
    assert by_id[8]["result"]["agentCapabilities"]["loadSession"] is True
    cw.close()
    await asyncio.wait_for(server, 10)


async def test_prompt_meta_caps_the_answer(session: tuple[Session, FakeNode], workspace: Path) -> None:
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    await s.conn.prompt(session_id=new.session_id, prompt=[text_block("short")], contenox={"maxNewTokens": 3})
    await s.conn.prompt(session_id=new.session_id, prompt=[text_block("default")])
    assert [r.max_new_tokens for r in node.requests] == [3, None]


def _helper_edit(workspace: Path) -> ProposedEdits:
    old = (workspace / "util.py").read_text()
    new = old.replace("x + 1", "x + 2")
    return ProposedEdits(edits=(ProposedEdit(path="util.py", old_text=old, new_text=new,
                                             diff=unified_diff("util.py", old, new), blocks=1),),
                         problems=("edit block 2: its search lines are not in gone.py",))


@pytest.mark.parametrize("permit", ["apply", "reject", "cancelled"])
async def test_proposed_edits_are_tool_calls_applied_only_when_permitted(tmp_path: Path, workspace: Path,
                                                                         permit: str) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    node.edits = _helper_edit(workspace)
    s = await _connect(node, permit=permit)
    try:
        new = await s.conn.new_session(cwd=str(workspace))
        reply = await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Make helper add two")])
        assert reply.stop_reason == "end_turn"
        [start] = s.recorder.of("tool_call", new.session_id)
        assert (start.kind, start.status, start.title) == ("edit", "pending", "Edit util.py")
        [diff] = start.content
        assert (diff.type, diff.path, diff.new_text) == ("diff", str(workspace / "util.py"),
                                                         "def helper(x):\n    return x + 2\n")
        assert start.locations[0].line == 2
        [(asked, options)] = s.recorder.permission_requests
        assert asked.tool_call_id == start.tool_call_id and [o.option_id for o in options] == ["apply", "reject"]
        statuses = [u.status for u in s.recorder.of("tool_call_update", new.session_id)]
        text = (workspace / "util.py").read_text()
        if permit == "apply":
            assert statuses == ["in_progress", "completed"] and text.endswith("x + 2\n")
        else:
            assert statuses == ["failed"] and text.endswith("x + 1\n")
        assert "Edit not applied: edit block 2: its search lines are not in gone.py" in s.recorder.text(new.session_id)
        [focus] = node.focuses  # the file the answer changes, at its first hunk
        assert (focus["path"], focus["line"]) == (str(workspace / "util.py"), 1)
    finally:
        await s.close()


async def test_an_edit_to_a_file_changed_since_is_refused_and_writes_go_through_the_client(
        tmp_path: Path, workspace: Path) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    node.edits = _helper_edit(workspace)
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=True))
    s = await _connect(node, permit="apply", capabilities=caps)
    try:
        new = await s.conn.new_session(cwd=str(workspace))
        await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Make helper add two")])
        assert s.recorder.writes == [(str(workspace / "util.py"), "def helper(x):\n    return x + 2\n")]
        assert (workspace / "util.py").read_text().endswith("x + 1\n")  # the client writes, not the node
        (workspace / "util.py").write_text("def helper(x):\n    return x - 1\n")
        await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Again")])
        assert len(s.recorder.writes) == 1
        last = s.recorder.of("tool_call_update", new.session_id)[-1]
        assert last.status == "failed" and "changed since the edit was proposed" in last.content[0].content.text
    finally:
        await s.close()


async def test_sessions_are_listed_newest_first_with_titles_from_their_first_prompt(
        session: tuple[Session, FakeNode], workspace: Path, tmp_path: Path) -> None:
    s, _ = session
    other = tmp_path / "other"
    other.mkdir()
    first = (await s.conn.new_session(cwd=str(workspace))).session_id
    second = (await s.conn.new_session(cwd=str(other))).session_id
    third = (await s.conn.new_session(cwd=str(workspace))).session_id
    question = "Why does helper add one?\nIt is used in main.py as well, and " + "more " * 30
    await s.conn.prompt(session_id=first, prompt=[text_block(question)])
    await s.conn.prompt(session_id=first, prompt=[text_block("And the second question?")])
    [info] = s.recorder.of("session_info_update", first)  # named once, by the first prompt
    assert info.title == "Why does helper add one?" and info.updated_at.endswith("Z")

    listed = await s.conn.list_sessions()
    assert [i.session_id for i in listed.sessions] == [first, third, second] and listed.next_cursor is None
    assert [i.title for i in listed.sessions] == ["Why does helper add one?", None, None]
    assert [i.cwd for i in listed.sessions] == [str(workspace), str(workspace), str(other)]
    mine = await s.conn.list_sessions(cwd=str(workspace))
    assert [i.session_id for i in mine.sessions] == [first, third]

    for _ in range(50):
        await s.conn.new_session(cwd=str(other))
    page = await s.conn.list_sessions(cwd=str(other))
    assert len(page.sessions) == 50 and page.next_cursor == "50"
    rest = await s.conn.list_sessions(cwd=str(other), cursor=page.next_cursor)
    assert len(rest.sessions) == 1 and rest.next_cursor is None
    assert {i.session_id for i in page.sessions + rest.sessions} >= {second}
    with pytest.raises(RequestError) as bad:
        await s.conn.list_sessions(cursor="abc")
    assert "cursor" in str(bad.value.data)
    assert title_of("  \n" + "word " * 20) == "word " * 11 + "word…"  # first line, cut at 60 characters


async def test_a_loaded_session_names_its_title(session: tuple[Session, FakeNode], workspace: Path) -> None:
    s, node = session
    sid = (await s.conn.new_session(cwd=str(workspace))).session_id
    await s.conn.prompt(session_id=sid, prompt=[text_block("Where is helper defined?")])
    again = await _connect(node)
    try:
        await again.conn.load_session(cwd=str(workspace), session_id=sid)
        [info] = again.recorder.of("session_info_update", sid)
        assert info.title == "Where is helper defined?"
    finally:
        await again.close()


async def test_what_a_prompt_leaves_out_reaches_the_turn_as_notes(session: tuple[Session, FakeNode],
                                                                  workspace: Path) -> None:
    from acp import image_block

    s, node = session
    sid = (await s.conn.new_session(cwd=str(workspace))).session_id
    await s.conn.prompt(session_id=sid, prompt=[text_block("What is in the picture?"),
                                                image_block(data="iVBORw0KGgo=", mime_type="image/png"),
                                                ResourceContentBlock(type="resource_link", uri="https://x.example/a",
                                                                     name="a")])
    assert node.requests[-1].notes == ("image content is not supported and was skipped",
                                       "link https://x.example/a is not a file and was skipped")


async def test_the_model_picker_is_a_session_config_option(session: tuple[Session, FakeNode], workspace: Path) -> None:
    s, node = session
    new = await s.conn.new_session(cwd=str(workspace))
    [option] = new.config_options
    assert (option.id, option.category, option.current_value) == ("model", "model", "smollm2-135m")
    assert [o.value for o in option.options] == ["alt", "smollm2-135m"]
    switched = await s.conn.set_config_option(config_id="model", session_id=new.session_id, value="alt")
    assert switched.config_options[0].current_value == "alt" and node.model == "alt"
    with pytest.raises(RequestError) as missing:
        await s.conn.set_config_option(config_id="model", session_id=new.session_id, value="nope")
    assert missing.value.data["kind"] == "model_not_found" and node.model == "alt"
    with pytest.raises(RequestError):
        await s.conn.set_config_option(config_id="mode", session_id=new.session_id, value="x")


async def test_a_mentioned_file_is_read_through_the_client_so_unsaved_edits_count(
        tmp_path: Path, workspace: Path) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=False))
    s = await _connect(node, capabilities=caps)
    try:
        util, other = str(workspace / "util.py"), str(workspace / "same.py")
        (workspace / "same.py").write_text("X = 1\n")
        s.recorder.buffers[util] = "def helper(x):\n    return x + 100  # unsaved\n"
        sid = (await s.conn.new_session(cwd=str(workspace))).session_id
        await s.conn.prompt(session_id=sid, prompt=[
            text_block("What does helper return?"),
            ResourceContentBlock(type="resource_link", uri=(workspace / "util.py").as_uri(), name="util.py"),
            ResourceContentBlock(type="resource_link", uri=(workspace / "same.py").as_uri(), name="same.py")])
        assert s.recorder.reads == [util, other]
        assert node.overlays_at_turns[-1] == {util: "def helper(x):\n    return x + 100  # unsaved\n"}  # only a change
        assert node.overlays == {util: None}  # laid over for that turn only
    finally:
        await s.close()


@pytest.mark.parametrize(("permit", "answer"), [("allow", True), ("deny", False), ("cancelled", None)])
async def test_a_check_command_is_asked_with_request_permission_and_the_verdict_is_said(
        tmp_path: Path, workspace: Path, permit: str, answer: bool | None) -> None:
    node = FakeNode(state_dir=tmp_path / "home" / "state")
    node.check = "python -m pytest -q"
    node.verification = Verification(status="passed", command="python -m pytest -q", command_source="terminal",
                                     candidates=(CandidateResult(index=1, round=0, sampled=False, constrained=False,
                                                                 outcome="failed"),
                                                 CandidateResult(index=2, round=0, sampled=True, constrained=True,
                                                                 outcome="passed")),
                                     chosen=2)
    s = await _connect(node, permit=permit)
    try:
        new = await s.conn.new_session(cwd=str(workspace))
        await s.conn.prompt(session_id=new.session_id, prompt=[text_block("Fix helper")])
        assert node.check_answers == [answer]
        [(asked, options)] = s.recorder.permission_requests
        assert asked.kind == "execute" and "python -m pytest -q" in asked.title
        # what else the answer allows, said in the question (the node's words: the same runner's other tests)
        assert asked.content is not None and asked.content[0].content.text == (
            f"Allowing it also allows {consent_scope('python -m pytest -q')}.")
        assert asked.raw_input == {"command": "python -m pytest -q", "cwd": str(workspace),
                                   "scope": consent_scope("python -m pytest -q")}
        assert [(o.option_id, o.kind) for o in options] == [("allow", "allow_always"), ("deny", "reject_always")]
        text = s.recorder.text(new.session_id)
        assert "verified: `python -m pytest -q` passed (1 of 2 candidates)" in text
        assert "the change offered is candidate 2's" in text
    finally:
        await s.close()
