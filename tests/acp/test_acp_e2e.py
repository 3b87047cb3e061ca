"""End to end: the ACP SDK client drives the real ``contenox acp`` proxy, node and model; then two LSP
windows and an ACP thread share one node at once."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from support.acp_recorder import Recorder
from support.lsp_client import chat, start_window
from support.lsp_e2e_kit import PYTHON, NodeHome, make_repo

pytestmark = pytest.mark.slow


@asynccontextmanager
async def agent(env: dict[str, str]) -> AsyncIterator[tuple[Any, Recorder]]:
    recorder = Recorder()
    async with spawn_agent_process(recorder, PYTHON, "-m", "contenox", "acp", env=env) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        assert init.agent_capabilities.load_session
        yield conn, recorder


async def test_acp_prompt_resources_usage_cancel_and_load(node_home: NodeHome, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    async with agent(node_home.env) as (conn, rec):
        new = await conn.new_session(cwd=str(repo))
        sid = new.session_id
        link = ResourceContentBlock(type="resource_link", uri=(repo / "util.py").as_uri(), name="util.py")
        embedded = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
            uri="file:///notes/review.md", text="Reviewer note: helper must never return None."))
        first = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            text_block("Does helper follow the reviewer note?"), link, embedded]), 300)
        assert first.stop_reason in ("end_turn", "max_tokens")
        answer = rec.text(sid)
        assert answer
        usage = rec.of("usage_update", sid)
        assert len(usage) == 1 and usage[0].size > usage[0].used > 0
        explain = usage[0].field_meta["contenox"]
        assert explain["totals"]["tokens"] == usage[0].used and explain["workspace"] == str(repo)
        segments = {s["kind"]: s for s in explain["segments"]}
        assert segments["pins"]["tokens"] == 0  # the linked file went into the turn's message, not the pins:
        assert "mentioned util.py: in this turn's message" in " ".join(explain["notes"])  # (the next turn's cache)
        assert rec.of("plan", sid)[-1].entries[-1].status == "completed"
        commands = await rec.wait_for("available_commands_update")
        assert {c.name for c in commands[0].available_commands} == {"explain-context", "pin", "unpin"}
        # the thread list and its title, and the model picker, as the real node answers them
        [info] = rec.of("session_info_update", sid)
        assert info.title == "Does helper follow the reviewer note?"
        listed = await conn.list_sessions(cwd=str(repo))
        assert [(i.session_id, i.title) for i in listed.sessions] == [(sid, info.title)]
        [option] = new.config_options
        assert option.id == "model" and option.current_value == "smollm2-135m"
        assert "smollm2-135m" in [o.value for o in option.options]
        kept = await conn.set_config_option(config_id="model", session_id=sid, value="smollm2-135m")
        assert kept.config_options[0].current_value == "smollm2-135m"

        second = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("And main.run?")]), 300)
        assert second.stop_reason in ("end_turn", "max_tokens")
        assert rec.of("usage_update", sid)[-1].field_meta["contenox"]["totals"]["cached"] > 0

        before = len(rec.of("agent_message_chunk", sid))
        long = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[
            text_block("Count from 1 to 500, one number per line.")], contenox={"maxNewTokens": 400}))
        await rec.wait_for("agent_message_chunk", before + 1, timeout=300)
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(long, 120)
        assert cancelled.stop_reason == "cancelled"

    async with agent(node_home.env) as (conn, rec):  # a new ACP process (the editor restarted) loads the thread
        await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id=sid), 120)
        users = [u.content.text for u in rec.of("user_message_chunk", sid)]
        assert users == ["Does helper follow the reviewer note?", "And main.run?",
                         "Count from 1 to 500, one number per line."]  # the stopped prompt is kept, in its place
        assert answer in rec.text(sid)
        assert rec.text(sid).endswith("_(no answer: stopped before the answer was finished)_")
        third = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/explain-context")]), 120)
        assert third.stop_reason == "end_turn" and "system" in rec.text(sid)


async def test_two_windows_and_a_thread_share_one_node(node_home: NodeHome, tmp_path: Path) -> None:
    repo_a, repo_b = make_repo(tmp_path / "a"), make_repo(tmp_path / "b")
    (one, rec1), (two, rec2) = await asyncio.gather(start_window(repo_a, node_home.env), start_window(repo_b, node_home.env))
    try:
        async with agent(node_home.env) as (conn, rec3):
            sid = (await conn.new_session(cwd=str(repo_a))).session_id
            r1, r2, r3 = await asyncio.wait_for(asyncio.gather(
                chat(one, "same-id", "What does helper do?"),
                chat(two, "same-id", "What does run return?"),
                conn.prompt(session_id=sid, prompt=[text_block("Where is helper defined?")])), 600)
            # both windows used the same chatId: each one's chunks must be exactly its own answer
            assert r1["text"] == rec1.text("same-id") and r2["text"] == rec2.text("same-id")
            assert r1["explain"]["workspace"] == str(repo_a) and r2["explain"]["workspace"] == str(repo_b)
            assert r3.stop_reason in ("end_turn", "max_tokens")
            assert rec3.of("usage_update", sid)[-1].field_meta["contenox"]["workspace"] == str(repo_a)
            assert {s["workspace"] for s in rec1.statuses} == {str(repo_a)}
            assert {s["workspace"] for s in rec2.statuses} == {str(repo_b)}

            again = await chat(one, "again", "And util.py?")
            assert again["explain"]["totals"]["cached"] > 0  # a later turn in workspace a reuses its prefix
            assert again["text"] == rec1.text("again")
    finally:
        for client in (one, two):
            await client.shutdown_session()
            await client.stop()


@pytest.mark.parametrize("how", ["stdin closed, output unread", "client killed"])
def test_a_client_gone_mid_turn_leaks_no_connection(node_home: NodeHome, tmp_path: Path, how: str) -> None:
    """Regression (issue 16, defect 3): the proxy never exited and the node kept the connection when the client
    closed stdin (or died) mid-turn: the node blocked flushing answer chunks to a peer that no longer read.
    Regression (issue 28, defect 5): the node then waited its whole 5 s close timeout, abandoned the close task
    ("Task was destroyed but it is pending!") and logged the cancelled session/prompt as an unhandled error."""
    repo = make_repo(tmp_path / "repo")
    node_log = Path(node_home.config.logs_dir) / "node.log"
    log_start = node_log.stat().st_size if node_log.exists() else 0
    proxy = subprocess.Popen([PYTHON, "-m", "contenox", "acp"], env=node_home.env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proxy.stdin is not None and proxy.stdout is not None

    def send(message: dict[str, Any]) -> None:
        proxy.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proxy.stdin.flush()  # type: ignore[union-attr]

    def until(predicate: Any) -> dict[str, Any]:
        while True:
            message = json.loads(proxy.stdout.readline())  # type: ignore[union-attr]
            if predicate(message):
                return dict(message)

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}})
        until(lambda m: m.get("id") == 1)
        send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(repo), "mcpServers": []}})
        session = until(lambda m: m.get("id") == 2)["result"]["sessionId"]
        send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": session, "_meta": {"contenox": {"maxNewTokens": 400}},
            "prompt": [{"type": "text", "text": "Write a long essay about every function here."}]}})
        until(lambda m: m.get("method") == "session/update"
              and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
        gone = time.monotonic()
        if how == "client killed":
            proxy.kill()
        else:
            proxy.stdin.close()
        assert proxy.wait(60) is not None  # the proxy exits (the node dropped the connection)
        while "disconnected" not in node_log.read_bytes()[log_start:].decode() and time.monotonic() - gone < 30:
            time.sleep(0.05)
        released_s = time.monotonic() - gone
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = node_home.cli("node", "status", "--json")
        if json.loads(done.stdout)["clients"] == 1:  # the status request's own connection
            break
        time.sleep(0.5)
    assert json.loads(node_home.cli("node", "status", "--json").stdout)["clients"] == 1
    log = node_log.read_bytes()[log_start:].decode()
    assert any(line.endswith(": disconnected") for line in log.splitlines()), log
    assert "Task was destroyed but it is pending" not in log
    assert "Unhandled error while handling request" not in log and " ERROR " not in log, log
    assert "stopped reading" not in log  # not the 5 s close timeout: the gone peer is aborted at once
    assert released_s < 4.0  # well within the old 5 s wait, with room for a loaded machine
