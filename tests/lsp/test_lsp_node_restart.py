"""End to end: the node is killed (-9) while an editor window (``contenox lsp``) or an agent client (``contenox
acp``) waits on it. The waiting request gets a structured ``node_unavailable`` error, the relay starts a node again
and tells it what the client had set up (LSP initialize and open buffers; ACP initialize and its sessions), and the
next requests work without a restart of the editor. The ACP prompt that was cut off stays in its session."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp.schema import ClientCapabilities
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from contenox.runtime_ov.store import InstalledModel
from support.acp_recorder import Recorder
from support.lsp_client import request, start_window
from support.lsp_e2e_kit import CONFIG, PYTHON, NodeHome, make_repo

pytestmark = pytest.mark.slow


@pytest.fixture
def own_node(default_model: InstalledModel, tmp_path: Path) -> Iterator[NodeHome]:
    """A node of this test's own (it is killed here; the shared one must not be)."""
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / default_model.name).symlink_to(default_model.path, target_is_directory=True)
    (home / "config.toml").write_text(CONFIG.replace("max_new_tokens = 6", "max_new_tokens = 400"), encoding="utf-8")
    node = NodeHome(home, Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp")))
    yield node
    node.stop()
    shutil.rmtree(node.runtime, ignore_errors=True)


def _node_pid(node: NodeHome) -> int:
    pid = node.node_pid()
    assert pid is not None
    return pid


async def test_a_killed_node_fails_the_pending_request_and_the_window_carries_on(own_node: NodeHome,
                                                                                tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    client, rec = await start_window(repo, own_node.env)
    try:
        main_uri = (repo / "main.py").as_uri()
        edited = "from util import helper\n\n\ndef run():\n    return helper(41)\n\n\ndef unsaved_only():\n    return helper(2)\n"
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=main_uri, language_id="python", version=1, text=edited)))
        first_pid = _node_pid(own_node)
        chat = asyncio.ensure_future(request(client, "contenox/chat", {
            "chatId": "long", "prompt": "Count from 1 to 500, one number per line.", "maxNewTokens": 400}))
        await rec.wait(lambda: bool(rec.text("long")))
        os.kill(first_pid, signal.SIGKILL)
        with pytest.raises(JsonRpcException) as lost:
            await asyncio.wait_for(chat, 60)
        assert lost.value.code == -32016 and "contenox/chat" in str(lost.value)

        # the same window, no restart: the relay started a node and replayed initialize and the open buffer (line 8
        # exists only in the unsaved buffer: the hovered word is read from the replayed document)
        hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=main_uri), position=types.Position(line=8, character=12))),
            120)
        assert _node_pid(own_node) != first_pid
        assert hover is not None and "helper" in hover.contents.value  # type: ignore[union-attr]
        again = await request(client, "contenox/chat", {"chatId": "again", "prompt": "Say hi.", "maxNewTokens": 4})
        assert again["text"] == rec.text("again")
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_killed_node_fails_the_acp_prompt_and_the_session_carries_on_with_the_prompt_kept(
        own_node: NodeHome, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    recorder = Recorder()
    async with spawn_agent_process(recorder, PYTHON, "-m", "contenox", "acp", env=own_node.env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        sid = (await conn.new_session(cwd=str(repo))).session_id
        first_pid = _node_pid(own_node)
        long = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[
            text_block("Count from 1 to 500, one number per line.")], contenox={"maxNewTokens": 400}))
        await recorder.wait_for("agent_message_chunk", 1, timeout=300)
        os.kill(first_pid, signal.SIGKILL)
        with pytest.raises(RequestError) as lost:
            await asyncio.wait_for(long, 60)
        assert lost.value.code == -32016 and "session/prompt" in str(lost.value)

        # the same ACP process: the relay loaded the session into a new node (its history was not shown again)
        shown = len(recorder.of("user_message_chunk", sid))
        again = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("Say hi.")],
                                                   contenox={"maxNewTokens": 4}), 300)
        assert again.stop_reason in ("end_turn", "max_tokens")
        assert _node_pid(own_node) != first_pid
        assert len(recorder.of("user_message_chunk", sid)) == shown

    reloaded = Recorder()  # the editor restarted: the interrupted prompt is in the thread, marked, in its place
    async with spawn_agent_process(reloaded, PYTHON, "-m", "contenox", "acp", env=own_node.env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id=sid), 120)
        users = [u.content.text for u in reloaded.of("user_message_chunk", sid)]
        assert users == ["Count from 1 to 500, one number per line.", "Say hi."]
        assert "_(no answer: cut off: the node went away before the answer was finished)_" in reloaded.text(sid)
