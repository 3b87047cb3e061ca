"""An agent turn through ACP with the SDK client: the ACP adapter over a socketpair in front of a real node
(real Qwen tokenizer and planner, real workspace and git) whose model answers are scripted
(tests/support/agent_kit.py). The client sees each tool call (kind, status, locations, output), is asked before
the proposed edit is written, and can cancel in the middle of the loop."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ClientCapabilities

from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from contenox.acp import serve_connection
from contenox.node import Node, backend
from contenox.runtime_ov import InstalledModel
from support.acp_recorder import Recorder
from support.agent_kit import HANG, Script, call, certified_node
from support.gitrepo import make_repo

pytestmark = pytest.mark.slow

UTIL = "def helper(x):\n    return x - 1\n"
FIX = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n+    return x + 1\n")


@pytest.fixture
async def node(tmp_path: Path, fim_model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Node]:
    async with certified_node(tmp_path / "home", fim_model, monkeypatch) as node:
        yield node


@asynccontextmanager
async def connect(node: Node, permit: str, *, terminal: bool = False) -> AsyncIterator[tuple[Any, Recorder]]:
    """The SDK client connected to the ACP adapter in front of ``node``; closed (and the adapter ended) after."""
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a, limit=1 << 24)
    server = asyncio.ensure_future(serve_connection(sr, sw, node))
    cr, cw = await asyncio.open_unix_connection(sock=b, limit=1 << 24)
    recorder = Recorder(permit=permit)
    conn = connect_to_agent(recorder, cw, cr)
    try:
        await conn.initialize(protocol_version=PROTOCOL_VERSION,
                              client_capabilities=ClientCapabilities(terminal=terminal))
        yield conn, recorder
    finally:
        cw.close()
        await asyncio.wait_for(server, 10)


@pytest.mark.parametrize("permit", ["apply", "reject"])
async def test_the_agent_reads_proposes_and_the_client_decides(node: Node, tmp_path: Path, permit: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = Script("I will read it first.\n" + call("read_file", path="util.py"),
                    call("propose_edit", path="util.py", diff=FIX), "Proposed: helper now adds one.")
    monkeypatch.setattr(backend, "submit", script.submit)
    async with connect(node, permit) as (conn, rec):
        sid = (await conn.new_session(cwd=str(repo))).session_id
        reply = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("Fix helper to add one.")]),
                                       120)
        assert reply.stop_reason == "end_turn"
        text = rec.text(sid)  # no call markup shown; the agent's edit is a change: its verification is said
        assert text.startswith("I will read it first.\nProposed: helper now adds one.\n"), text
        assert text.endswith("_not verified: no check command: no failing run in the terminal output, no [verify] "
                             "command, and no test runner detected_")
        started = rec.of("tool_call", sid)
        assert [(s.kind, s.status) for s in started] == [("read", "in_progress"), ("edit", "in_progress"),
                                                        ("edit", "pending")]
        assert started[0].title == "read_file(path='util.py')"
        updates = rec.of("tool_call_update", sid)
        read, proposed = updates[0], updates[1]
        assert (read.tool_call_id, read.kind, read.status, read.title) == (
            started[0].tool_call_id, "read", "completed", "Read util.py")
        assert read.locations[0].path == str(repo / "util.py") and "return x - 1" in read.content[0].content.text
        assert (proposed.kind, proposed.status, proposed.title) == ("edit", "completed", "Edit util.py")
        # then the edit itself: a diff the client is asked about before anything is written
        [(asked, _options)] = rec.permission_requests
        assert asked.tool_call_id == started[2].tool_call_id and started[2].content[0].type == "diff"
        text = (repo / "util.py").read_text()
        assert text == (UTIL.replace("x - 1", "x + 1") if permit == "apply" else UTIL)
        assert updates[-1].status == ("completed" if permit == "apply" else "failed")


async def test_a_cancel_in_the_middle_of_the_loop_ends_the_turn_cancelled(node: Node, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = Script(call("search", pattern="helper"), HANG)
    monkeypatch.setattr(backend, "submit", script.submit)
    async with connect(node, "apply") as (conn, rec):
        sid = (await conn.new_session(cwd=str(repo))).session_id
        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("Search, then think.")]))
        await asyncio.wait_for(script.reached_hang.wait(), 60)  # the second step is running
        await conn.cancel(session_id=sid)
        reply = await asyncio.wait_for(prompt, 60)
        assert reply.stop_reason == "cancelled"
        [search] = [u for u in rec.of("tool_call_update", sid)]
        assert (search.kind, search.status) == ("search", "completed")
        assert (repo / "util.py").read_text() == UTIL and not rec.permission_requests


@pytest.mark.parametrize("permit", ["apply", "reject"])
async def test_a_command_runs_in_the_clients_terminal_only_when_allowed(node: Node, tmp_path: Path, permit: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL, "test_util.py": (
        "from util import helper\n\n\ndef test_helper():\n    assert helper(1) == 2\n")})
    command = f"{sys.executable} -c \"import util; print('helper(1) =', util.helper(1))\""
    script = Script(call("run_command", command=command), "The test fails: helper(1) is 0, not 2.")
    monkeypatch.setattr(backend, "submit", script.submit)
    async with connect(node, permit, terminal=True) as (conn, rec):
        sid = (await conn.new_session(cwd=str(repo))).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("Run it.")]), 120)
        [(asked, options)] = rec.permission_requests  # asked first, about the call the user sees
        [started] = rec.of("tool_call", sid)
        assert asked.tool_call_id == started.tool_call_id and asked.kind == "execute"
        assert [o.option_id for o in options] == ["apply", "reject"] and command in asked.title
        result = script.prompts[1]  # the second step's prompt ends with the tool result
        tail = node.workspace(str(repo)).planner.tokenizer.decode(result[-80:])  # type: ignore[union-attr]
        last = rec.of("tool_call_update", sid)[-1]
        if permit == "apply":
            assert rec.commands == [("/bin/sh", ["-c", command], str(repo))] and rec.released == ["term-1"]
            terminal = rec.of("tool_call_update", sid)[0]  # the running terminal is embedded in the call
            assert terminal.content[0].type == "terminal" and terminal.content[0].terminal_id == "term-1"
            assert (last.kind, last.status) == ("execute", "completed") and "exit code 0" in last.title
            assert "helper(1) = 0" in last.content[0].content.text and "helper(1) = 0" in tail
        else:
            assert rec.commands == [] and (last.kind, last.status) == ("execute", "failed")
            assert "not run: the user did not allow it" in last.content[0].content.text


async def test_a_client_without_a_terminal_runs_no_command(node: Node, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    script = Script(call("run_command", command="python -m pytest -q"), "Please run the tests yourself.")
    monkeypatch.setattr(backend, "submit", script.submit)
    async with connect(node, "apply") as (conn, rec):
        sid = (await conn.new_session(cwd=str(repo))).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("Run everything.")]), 120)
        assert not rec.permission_requests and rec.commands == []
        last = rec.of("tool_call_update", sid)[-1]
        assert last.status == "failed" and "offers no terminal" in last.content[0].content.text
