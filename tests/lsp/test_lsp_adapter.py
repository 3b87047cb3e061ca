"""The LSP adapter in-process over a socketpair, against a fake node (the node core has its own tests)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from contenox.jsonrpc import MAX_MESSAGE_BYTES
from contenox.lsp import serve_connection
from contenox.node.contract import AnticipationStatus, CommandResult, ToolActivity
from support.lsp_fake_node import FakeNode
from support.lsp_rpc_peer import RpcPeer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "util.py").write_text("def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n")
    return root


class Conn:
    def __init__(self, peer: RpcPeer, server: asyncio.Task[None]) -> None:
        self.peer = peer
        self.server = server


async def _connect(node: FakeNode, root: Path, *, progress: bool = True, experimental: Any = None) -> Conn:
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a)
    server = asyncio.ensure_future(serve_connection(sr, sw, node))
    cr, cw = await asyncio.open_unix_connection(sock=b)
    peer = RpcPeer(cr, cw)
    caps: dict[str, Any] = {"window": {"workDoneProgress": progress}}
    if experimental is not None:
        caps["experimental"] = experimental
    reply = await peer.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": caps})
    assert "executeCommandProvider" in reply["result"]["capabilities"]
    peer.notify("initialized", {})
    return Conn(peer, server)


@pytest.fixture
async def conn(workspace: Path) -> AsyncIterator[tuple[Conn, FakeNode]]:
    node = FakeNode()
    c = await _connect(node, workspace)
    yield c, node
    await c.peer.close()
    await asyncio.wait_for(c.server, 10)


def _sel(root: Path, **extra: Any) -> dict[str, Any]:
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 16}}
    return {"uri": (root / "util.py").as_uri(), "range": rng, **extra}


async def test_code_action_to_command_streams_turn_and_cache_status(conn: tuple[Conn, FakeNode],
                                                                   workspace: Path) -> None:
    c, node = conn
    arg = _sel(workspace)
    actions = await c.peer.request("textDocument/codeAction", {
        "textDocument": {"uri": arg["uri"]}, "range": arg["range"], "context": {"diagnostics": []}})
    titles = [a["title"] for a in actions["result"]]
    assert titles == ["Explain selection", "Find related code", "Ask Contenox about selection"]
    command = actions["result"][0]["command"]
    command["arguments"][0]["chatId"] = "c1"
    reply = await c.peer.request("workspace/executeCommand", {"command": command["command"],
                                                             "arguments": command["arguments"]})
    assert reply["result"]["text"] == "Hello world"
    assert reply["result"]["explain"]["turn"] == 1
    chunks = [n["text"] for n in c.peer.of("$/contenox/chatChunk") if n["chatId"] == "c1"]
    assert "".join(chunks) == "Hello world"
    assert node.requests[-1].thread == "panel"
    command["arguments"][0].update(chatId="c2", thread="panel-new")  # after New chat in the panel
    await c.peer.request("workspace/executeCommand", {"command": command["command"], "arguments": command["arguments"]})
    assert node.requests[-1].thread == "panel-new"
    history = await c.peer.request("contenox/history", {"thread": "panel-new"})  # what a reloaded panel shows
    assert [(t["turn"], t["answer"]) for t in history["result"]] == [(2, "Hello world")]
    assert history["result"][0]["explain"]["turn"] == 2  # a reloaded panel shows each turn's explain summary again
    assert history["result"][0]["finishReason"] == "stop"  # how each answer ended, as recorded
    assert (await c.peer.request("contenox/history", {"thread": "nope"}))["result"] == []
    threads = (await c.peer.request("contenox/threads", {}))["result"]  # the panel's thread picker
    assert [(t["thread"], t["turns"]) for t in threads] == [("panel", 1), ("panel-new", 1)]
    assert all(t["title"] and isinstance(t["lastUsed"], float) for t in threads)
    node.finish_reason = "length"
    command["arguments"][0]["chatId"] = "c3"
    await c.peer.request("workspace/executeCommand", {"command": command["command"], "arguments": command["arguments"]})
    history = await c.peer.request("contenox/history", {"thread": "panel-new"})
    assert history["result"][-1]["finishReason"] == "length"  # a reloaded panel shows it cut, with its Continue
    statuses = await c.peer.wait_notification("$/contenox/cacheStatus", 3)
    assert statuses[-1]["state"] == "idle" and statuses[-1]["promptTokens"] == 100
    assert "prefill" in [s["state"] for s in statuses]
    request = node.requests[-1]
    assert request.selection is not None and "def helper(x):" in request.selection
    assert request.root == str(workspace) and request.client_id.startswith("lsp-")
    methods = [r["method"] for r in c.peer.server_requests]
    assert "window/workDoneProgress/create" in methods
    kinds = [n["value"]["kind"] for n in c.peer.of("$/progress")]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    # an agent turn's tool calls reach the chat as they start and end
    node.tools = [ToolActivity(id="step1-0", name="read_file", kind="other", title="read_file(path='util.py')",
                               status="in_progress"),
                  ToolActivity(id="step1-0", name="read_file", kind="read", title="Read util.py", status="completed",
                               locations=((str(workspace / "util.py"), 2),), output="util.py, 2 lines: ...")]
    command["arguments"][0]["chatId"] = "c-tools"
    await c.peer.request("workspace/executeCommand", {"command": command["command"], "arguments": command["arguments"]})
    tools = [n for n in c.peer.of("$/contenox/chatTool") if n["chatId"] == "c-tools"]
    assert [(t["id"], t["status"], t["title"]) for t in tools] == [
        ("step1-0", "in_progress", "read_file(path='util.py')"), ("step1-0", "completed", "Read util.py")]
    assert tools[1]["locations"] == [{"path": str(workspace / "util.py"), "line": 2}] and tools[1]["kind"] == "read"


async def test_hover_shows_symbol_and_last_turn(conn: tuple[Conn, FakeNode], workspace: Path) -> None:
    c, _ = conn
    uri = (workspace / "util.py").as_uri()
    pos = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 6}}
    first = await c.peer.request("textDocument/hover", pos)
    value = first["result"]["contents"]["value"]
    assert "`helper`" in value and "util.py:1" in value and "last turn" not in value
    assert "rank: 2 of 3 files" in value  # a position, not a raw PageRank float
    await c.peer.request("contenox/chat", {"chatId": "x", "prompt": "hi"})
    second = await c.peer.request("textDocument/hover", pos)
    value = second["result"]["contents"]["value"]
    assert "_last turn 1: 0/100 tokens cached (0%)_" in value
    assert "| system |" not in value  # the full table is the panel's, not every hover's


async def test_second_turn_reports_cached_tokens(conn: tuple[Conn, FakeNode]) -> None:
    c, _ = conn
    await c.peer.request("contenox/chat", {"chatId": "a", "prompt": "one"})
    second = await c.peer.request("contenox/chat", {"chatId": "b", "prompt": "two"})
    assert second["result"]["explain"]["totals"]["cached"] > 0
    status = [s for s in c.peer.of("$/contenox/cacheStatus") if s["state"] == "idle"][-1]
    assert status["cachedTokens"] == 92 and status["hitPct"] == 92.0
    explain = await c.peer.request("contenox/explainContext", {})
    assert explain["result"]["turn"] == 2


async def test_chat_cancel_cancels_the_node_turn(conn: tuple[Conn, FakeNode]) -> None:
    c, node = conn
    node.hold = True
    msg_id, fut = c.peer.start_request("contenox/chat", {"chatId": "k", "prompt": "slow"})
    await asyncio.wait_for(node.started.wait(), 10)
    c.peer.notify("$/cancelRequest", {"id": msg_id})
    reply = await asyncio.wait_for(fut, 10)
    assert reply["error"]["code"] == -32800
    assert node.cancelled == 1
    node.hold = False
    again = await c.peer.request("contenox/chat", {"chatId": "k2", "prompt": "again"})
    assert again["result"]["text"] == "Hello world"


async def test_command_cancel_cancels_the_node_turn(conn: tuple[Conn, FakeNode], workspace: Path) -> None:
    c, node = conn
    node.hold = True
    msg_id, fut = c.peer.start_request("workspace/executeCommand", {
        "command": "contenox.explainSelection", "arguments": [_sel(workspace)]})
    await asyncio.wait_for(node.started.wait(), 10)
    c.peer.notify("$/cancelRequest", {"id": msg_id})
    reply = await asyncio.wait_for(fut, 10)
    assert reply["error"]["code"] == -32800
    for _ in range(100):
        if node.cancelled:
            break
        await asyncio.sleep(0.01)
    assert node.cancelled == 1


async def test_errors_are_json_rpc_errors_and_connection_survives(conn: tuple[Conn, FakeNode]) -> None:
    c, _ = conn
    over = await c.peer.request("contenox/chat", {"chatId": "e", "prompt": "too long"})
    assert over["error"]["code"] == -32007 and "8192" in over["error"]["message"]
    assert over["error"]["data"]["kind"] == "over_context"
    unknown = await c.peer.request("contenox/nope", {})
    assert unknown["error"]["code"] == -32601
    missing = await c.peer.request("contenox/chat", {"chatId": "e"})
    assert missing["error"]["code"] == -32602 and "prompt" in missing["error"]["message"]
    bad_hover = await c.peer.request("textDocument/hover", {"textDocument": 3})
    assert bad_hover["error"]["code"] == -32602
    bad_cmd = await c.peer.request("workspace/executeCommand", {"command": "contenox.pin", "arguments": [1, 2]})
    assert bad_cmd["error"]["code"] == -32602
    c.peer.send_raw(b"Content-Length: 9\r\n\r\n{not json")
    huge = MAX_MESSAGE_BYTES + 1
    c.peer.send_raw(b"Content-Length: %d\r\n\r\n" % huge + b"x" * huge)
    deep = b"[" * 5000 + b"]" * 5000  # regression: a RecursionError closed the connection
    c.peer.send_raw(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
    # regression (the fuzz suite): a second, lying Content-Length left the body unread and the next frame lost
    body = b'{"jsonrpc": "2.0", "id": 99, "method": "nope"}'
    c.peer.send_raw(b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body) + 10) + body)
    ok = await asyncio.wait_for(c.peer.request("contenox/explainContext", {}), 10)
    assert ok["result"] is None
    errors = [n["params"]["error"]["code"] for n in c.peer.notifications if n["method"] == "<error>"]
    assert errors == [-32700, -32600, -32700, -32700]


async def test_pin_overlay_and_related(conn: tuple[Conn, FakeNode], workspace: Path) -> None:
    c, node = conn
    uri = (workspace / "util.py").as_uri()
    path = str(workspace / "util.py")
    await c.peer.request("workspace/executeCommand", {"command": "contenox.pin", "arguments": [uri]})
    assert node.pinned[str(workspace)] == [path]
    listed = (await c.peer.request("contenox/pins", {}))["result"]  # the editor's pins view
    assert listed == [{"root": str(workspace), "pins": [{"path": path, "uri": uri}]}]
    lines = {"uri": uri, "range": {"start": {"line": 0, "character": 3}, "end": {"line": 2, "character": 0}}}
    pinned = await c.peer.request("workspace/executeCommand", {"command": "contenox.pin", "arguments": [lines]})
    assert pinned["result"] == {"pinned": f"{path}:1-2"}  # whole lines; the end at a line start is not one
    assert node.pinned[str(workspace)] == [path, f"{path}:1-2"]
    node.pinned[str(workspace)].pop()
    await c.peer.request("workspace/executeCommand", {"command": "contenox.unpin", "arguments": [uri]})
    assert node.pinned[str(workspace)] == []
    c.peer.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": "x = 1\n"}})
    c.peer.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}, "text": "2"}]})
    related = await c.peer.request("workspace/executeCommand", {
        "command": "contenox.findRelated", "arguments": [_sel(workspace)]})
    assert node.overlays[path] == "x = 2\n"
    assert related["result"]["related"][0]["path"] == "util.py"
    c.peer.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    await c.peer.request("contenox/explainContext", {})
    assert node.overlays[path] is None
    owner = node.overlay_owners[path]  # the buffers are this connection's: another window's outlive them
    other = await _connect(node, workspace, progress=False)
    other.peer.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": "y = 1\n"}})
    await other.peer.request("contenox/explainContext", {})
    assert node.overlays[path] == "y = 1\n" and node.overlay_owners[path] != owner
    await other.peer.close()  # a window gone (even without closing its files) releases its buffers
    await asyncio.wait_for(other.server, 10)
    assert node.released == [node.overlay_owners[path]]


async def test_two_connections_get_their_own_replies(workspace: Path) -> None:
    node = FakeNode()
    one, two = await _connect(node, workspace), await _connect(node, workspace, progress=False)
    r1, r2 = await asyncio.gather(one.peer.request("contenox/chat", {"chatId": "one", "prompt": "a"}),
                                  two.peer.request("contenox/chat", {"chatId": "two", "prompt": "b"}))
    assert r1["result"]["text"] == r2["result"]["text"] == "Hello world"
    assert {n["chatId"] for n in one.peer.of("$/contenox/chatChunk")} == {"one"}
    assert {n["chatId"] for n in two.peer.of("$/contenox/chatChunk")} == {"two"}
    assert len({r.client_id for r in node.requests}) == 2
    await one.peer.request("shutdown")
    one.peer.notify("exit")
    await asyncio.wait_for(one.server, 10)  # exit ends this connection only
    r3 = await two.peer.request("contenox/chat", {"chatId": "two", "prompt": "c"})
    assert r3["result"]["explain"]["turn"] == 3
    await one.peer.close()
    await two.peer.close()
    await asyncio.wait_for(two.server, 10)


async def test_client_disconnect_cancels_its_turn(workspace: Path) -> None:
    node = FakeNode()
    node.hold = True
    c = await _connect(node, workspace)
    c.peer.start_request("contenox/chat", {"chatId": "gone", "prompt": "slow"})
    await asyncio.wait_for(node.started.wait(), 10)
    await c.peer.close()
    await asyncio.wait_for(c.server, 10)
    for _ in range(100):
        if node.cancelled:
            break
        await asyncio.sleep(0.01)
    assert node.cancelled == 1


async def test_chat_max_new_tokens(conn: tuple[Conn, FakeNode]) -> None:
    c, node = conn
    await c.peer.request("contenox/chat", {"chatId": "m", "prompt": "short", "maxNewTokens": 4})
    bad = await c.peer.request("contenox/chat", {"chatId": "m", "prompt": "short", "maxNewTokens": "x"})
    assert bad["error"]["code"] == -32602 and "maxNewTokens" in bad["error"]["message"]
    assert [r.max_new_tokens for r in node.requests] == [4]


async def test_requests_are_scoped_to_the_workspace_folders(conn: tuple[Conn, FakeNode], tmp_path: Path) -> None:
    """Regression: a hover outside the folders made the node index that file's directory (/etc, the home
    directory), and `contenox.pin file:///etc/passwd` succeeded."""
    c, node = conn
    outside = tmp_path / "elsewhere" / "secret.py"
    outside.parent.mkdir()
    outside.write_text("TOKEN = 'x'\n")
    uri = outside.as_uri()
    c.peer.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": "TOKEN = 'x'\n"}})
    hover = await c.peer.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                        "position": {"line": 0, "character": 1}})
    assert hover["result"] is None
    pin = await c.peer.request("workspace/executeCommand", {"command": "contenox.pin", "arguments": [uri]})
    assert pin["error"]["data"]["kind"] == "path_outside_workspace"
    assert node.overlays == {} and node.pinned == {}


async def test_requests_after_shutdown_get_invalid_request(conn: tuple[Conn, FakeNode]) -> None:
    """Regression (the fuzz suite): pygls dropped requests after `shutdown`, so a client waited forever."""
    c, _ = conn
    assert (await c.peer.request("shutdown", None))["result"] is None
    late = await asyncio.wait_for(c.peer.request("contenox/explainContext", {}), 10)
    assert late["error"]["code"] == -32600 and "shut down" in late["error"]["message"]


async def test_the_model_picker_lists_and_switches(conn: tuple[Conn, FakeNode]) -> None:
    c, node = conn
    assert (await c.peer.request("contenox/models", {}))["result"] == {"current": "smollm2-135m",
                                                                        "installed": ["alt", "smollm2-135m"]}
    switched = await c.peer.request("contenox/useModel", {"name": "alt"})
    assert switched["result"]["current"] == "alt" and node.model == "alt"
    missing = await c.peer.request("contenox/useModel", {"name": "nope"})
    assert missing["error"]["data"]["kind"] == "model_not_found"


async def test_an_agent_turns_commands_run_in_the_editor_that_offers_it(workspace: Path) -> None:
    node = FakeNode()
    node.command = "pytest -q"
    plain = await _connect(node, workspace)  # an editor that does not run commands: the node gets no host
    await plain.peer.request("contenox/chat", {"chatId": "a", "prompt": "Run the tests."})
    assert node.command_hosts == [None] and node.command_results == []
    await plain.peer.close()
    runner = await _connect(node, workspace, progress=False, experimental={"contenoxRunCommand": True})
    runner.peer.answers["contenox/runCommand"] = {"ran": True, "exitCode": 1, "output": "1 failed"}
    await runner.peer.request("contenox/chat", {"chatId": "b", "prompt": "Run the tests."})
    [asked] = [r for r in runner.peer.server_requests if r["method"] == "contenox/runCommand"]
    assert asked["params"] == {"chatId": "b", "id": "step1-0", "command": "pytest -q", "cwd": str(workspace)}
    assert node.command_results == [CommandResult(ran=True, exit_code=1, output="1 failed")]
    runner.peer.answers["contenox/runCommand"] = {"ran": False, "reason": "the user did not allow it"}
    await runner.peer.request("contenox/chat", {"chatId": "c", "prompt": "Run the tests."})
    assert node.command_results[-1] == CommandResult(ran=False, reason="the user did not allow it")
    await runner.peer.close()


async def test_focus_reaches_the_node_and_its_anticipation_comes_back(conn: tuple[Conn, FakeNode],
                                                                     workspace: Path) -> None:
    c, node = conn
    uri = (workspace / "util.py").as_uri()
    c.peer.notify("contenox/focus", {"uri": uri, "line": 4, "thread": "panel-x", "draft": "why",
                                     "terminal": "$ pytest\nFAILED", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}})
    c.peer.notify("contenox/focus", {"uri": uri})  # no line: refused quietly (a notification has no reply)
    c.peer.notify("contenox/focus", {"uri": "untitled:Untitled-1", "line": 0})  # not a file: nothing to anticipate
    await c.peer.request("contenox/threads", {})  # the notifications before it were handled
    assert [(f["path"], f["line"], f["thread"], f["draft"], f["visible"], f["terminal"]) for f in node.focuses] == [
        (str(workspace / "util.py"), 5, "panel-x", "why", (1, 21), "$ pytest\nFAILED")]
    client = node.focuses[0]["client_id"]
    node.anticipated("another-client", AnticipationStatus(root=str(workspace), path="util.py", state="warm", tokens=9))
    node.anticipated(client, AnticipationStatus(root=str(workspace), path="util.py", state="warm", tokens=120,
                                                text="warm for util.py: 120 tokens of code prefilled"))
    (sent,) = await c.peer.wait_notification("$/contenox/anticipation", 1)
    assert sent == {"uri": uri, "state": "warm", "tokens": 120, "text": "warm for util.py: 120 tokens of code prefilled"}
