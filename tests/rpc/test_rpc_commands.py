"""An agent turn's commands through the CLI's rpc: the node asks the client (``run_command``), the CLI asks the
user, runs the command in the workspace and answers with its exit code and output."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from contenox.cli import check_allowed, run_command_asked
from contenox.node.contract import CommandResult
from contenox.rpc import RpcConnection
from contenox.verify import consent_scope
from support.lsp_fake_node import FakeNode
from support.lsp_rpc_peer import RpcPeer


async def _connect(node: FakeNode) -> tuple[RpcPeer, asyncio.Task[None]]:
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a)
    server = asyncio.ensure_future(RpcConnection(sr, sw, node, "cli-1", lambda: None).serve())
    cr, cw = await asyncio.open_unix_connection(sock=b)
    return RpcPeer(cr, cw), server


async def test_commands_come_back_to_a_client_that_asked_for_them(tmp_path: Path) -> None:
    node = FakeNode()
    node.command = "pytest -q"
    peer, server = await _connect(node)
    try:
        reply = await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Run the tests."})
        assert "result" in reply and node.command_hosts == [None]  # piped or --json: no one to ask
        peer.answers["run_command"] = {"ran": True, "exit_code": 1, "output": "1 failed"}
        await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Run the tests.", "run_commands": True})
        [asked] = [r for r in peer.server_requests if r["method"] == "run_command"]
        assert asked["params"] == {"id": "step1-0", "command": "pytest -q", "cwd": str(tmp_path)}
        assert node.command_results == [CommandResult(ran=True, exit_code=1, output="1 failed")]
        peer.answers["run_command"] = None  # a client that answers nothing useful: not run
        await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Again.", "run_commands": True})
        assert node.command_results[-1] == CommandResult(ran=False)
    finally:
        await peer.close()
        await asyncio.wait_for(server, 10)


def test_the_cli_runs_a_command_only_when_the_user_says_yes(tmp_path: Path, capsys: object) -> None:
    command = f"{sys.executable} -c \"import os; print('in', os.getcwd()); raise SystemExit(2)\""
    assert run_command_asked(command, str(tmp_path), 30, answer=lambda _q: "n") == {
        "ran": False, "reason": "the user did not allow it"}
    done = run_command_asked(command, str(tmp_path), 30, answer=lambda _q: "y")
    assert done == {"ran": True, "exit_code": 2, "output": f"in {tmp_path}\n"}
    stopped = run_command_asked("sleep 30", str(tmp_path), 0.5, answer=lambda _q: "yes")
    assert stopped["ran"] is False and "ran past 0.5 s" in stopped["reason"]


async def test_a_check_command_is_allowed_by_the_client_that_asked(tmp_path: Path) -> None:
    node = FakeNode()
    node.check = "python -m pytest -q"
    peer, server = await _connect(node)
    try:
        await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Fix it.", "verify": None})
        assert node.check_answers == []  # piped or --json: no host, nobody asked
        peer.answers["allow_check"] = {"allowed": True}
        await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Fix it.", "run_commands": True,
                                   "env": {"PATH": "/opt/venv/bin"}})
        [asked] = [r for r in peer.server_requests if r["method"] == "allow_check"]
        assert asked["params"] == {"command": "python -m pytest -q", "cwd": str(tmp_path),
                                   "scope": consent_scope("python -m pytest -q")}
        assert "`python -m pytest -q` with other test files" in asked["params"]["scope"]
        assert node.check_answers == [True]
        assert node.requests[-1].env == {"PATH": "/opt/venv/bin"}
        peer.answers["allow_check"] = {"allowed": "maybe"}  # nothing usable: nobody decided
        await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Fix it.", "run_commands": True, "verify": True})
        assert node.check_answers[-1] is None and node.requests[-1].verify is True
        bad = await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Fix it.", "verify": "yes"})
        assert bad["error"]["data"] == {"kind": "invalid_request", "details": {"param": "verify"}}
        bad_env = await peer.request("ask", {"cwd": str(tmp_path), "prompt": "Fix it.", "env": {"A": 1}})
        assert bad_env["error"]["data"] == {"kind": "invalid_request", "details": {"param": "env"}}
    finally:
        await peer.close()
        await asyncio.wait_for(server, 10)


def test_the_cli_allows_a_check_only_when_the_user_says_yes(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_allowed("pytest -q", "/w", answer=lambda _q: "y", scope="the project's other tests") is True
    assert "allowing it also allows the project's other tests" in capsys.readouterr().out
    assert check_allowed("pytest -q", "/w", answer=lambda _q: "") is False

    def closed(_q: str) -> str:
        raise EOFError

    assert check_allowed("pytest -q", "/w", answer=closed) is False
