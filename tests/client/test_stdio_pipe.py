"""The stdio relay behind ``contenox lsp`` / ``contenox acp`` (client.stdio_pipe), on real pipes and socketpairs:
bytes pass unchanged; when the node goes away, pending requests get ``node_unavailable`` and a new connection is
told what the editor set up (LSP initialize and open documents, ACP sessions)."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator

from contenox.client import Relay
from contenox.client.stdio_pipe import Splitter
from contenox.jsonrpc import encode_frame, encode_line


def _read_all(fd: int) -> bytes:
    out = b""
    while chunk := os.read(fd, 1 << 16):
        out += chunk
    return out


def test_bytes_pass_both_ways_unchanged() -> None:
    node_end, relay_end = socket.socketpair()
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    relay = Relay(None, "lsp", stdin_r, stdout_w, connect=lambda: relay_end)
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(relay.run()))
    thread.start()
    payload = b"Content-Length: 2\r\n\r\n{}" * 1000 + bytes(range(256))
    os.write(stdin_w, payload)
    os.close(stdin_w)  # the editor closed stdin: the relay half-closes the socket
    received = b""
    while chunk := node_end.recv(1 << 16):
        received += chunk
    assert received == payload
    node_end.sendall(b"\x00reply\xff" * 5000)
    node_end.close()  # the node closed the connection after the editor left: the relay exits 0
    thread.join(10)
    os.close(stdout_w)
    assert _read_all(stdout_r) == b"\x00reply\xff" * 5000
    os.close(stdout_r)
    assert result == [0] and relay.reconnects == 0


def _messages(protocol: str, data: bytes) -> list[dict]:
    return [json.loads(body) for _, body in Splitter(protocol).feed(data) if body]


class _Nodes:
    """Node ends of successive connections, as the relay asks for them."""

    def __init__(self) -> None:
        self.ends: list[socket.socket] = []
        self.ready = threading.Semaphore(0)

    def connect(self) -> socket.socket:
        node_end, relay_end = socket.socketpair()
        self.ends.append(node_end)
        self.ready.release()
        return relay_end

    def next(self) -> socket.socket:
        assert self.ready.acquire(timeout=10)
        return self.ends[-1]


def _recv_messages(sock: socket.socket, protocol: str, count: int) -> Iterator[dict]:
    splitter = Splitter(protocol)
    got = 0
    sock.settimeout(10)
    while got < count:
        for _, body in splitter.feed(sock.recv(1 << 16)):
            got += 1
            yield json.loads(body)


class _RelayUnderTest:
    """A relay on real pipes whose node connections come from :class:`_Nodes`, run on a thread."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.nodes = _Nodes()
        stdin_r, self.stdin_w = os.pipe()
        self.stdout_r, self.stdout_w = os.pipe()
        self.relay = Relay(None, protocol, stdin_r, self.stdout_w, connect=self.nodes.connect)
        self.thread = threading.Thread(target=self.relay.run)
        self.thread.start()

    def editor_sends(self, *messages: dict) -> None:
        encode = encode_frame if self.protocol == "lsp" else encode_line
        os.write(self.stdin_w, b"".join(encode(m) for m in messages))

    def finish(self, node: socket.socket) -> list[dict]:
        """The editor leaves, then ``node`` closes; what the editor received."""
        os.close(self.stdin_w)
        assert self.relay.editor_done.wait(10)  # the relay saw the editor leave before the node closes
        node.close()
        self.thread.join(10)
        os.close(self.stdout_w)
        return _messages(self.protocol, _read_all(self.stdout_r))


def test_lsp_pending_requests_fail_and_a_new_node_gets_initialize_and_the_open_documents() -> None:
    run = _RelayUnderTest("lsp")
    nodes, relay = run.nodes, run.relay
    first = nodes.next()
    sent = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "file:///w"}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": "file:///w/a.py", "text": "x = 1\n", "version": 1}}},
            {"jsonrpc": "2.0", "method": "textDocument/didChange",
             "params": {"textDocument": {"uri": "file:///w/a.py", "version": 2}, "contentChanges": [{"text": "y"}]}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": "file:///w/b.py", "text": "", "version": 1}}},
            {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": "file:///w/b.py"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "contenox/chat", "params": {"chatId": "c", "prompt": "hi"}}]
    run.editor_sends(*sent)
    assert [m.get("method") for m in _recv_messages(first, "lsp", len(sent))] == [m["method"] for m in sent]
    first.sendall(encode_frame({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}))
    first.close()  # the node died with the chat pending

    second = nodes.next()
    replayed = list(_recv_messages(second, "lsp", 4))
    assert replayed[0]["method"] == "initialize" and replayed[0]["params"] == {"rootUri": "file:///w"}
    assert str(replayed[0]["id"]).startswith("contenox-relay-")
    assert [m["method"] for m in replayed[1:]] == ["initialized", "textDocument/didOpen", "textDocument/didChange"]
    second.sendall(encode_frame({"jsonrpc": "2.0", "id": replayed[0]["id"], "result": {"capabilities": {}}}))
    run.editor_sends({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {}})
    assert next(_recv_messages(second, "lsp", 1))["id"] == 3  # the editor's next request reaches the new node
    second.sendall(encode_frame({"jsonrpc": "2.0", "id": 3, "result": None}))
    out = run.finish(second)
    assert out[0] == {"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}
    assert out[1]["id"] == 2 and out[1]["error"]["code"] == -32016
    assert out[1]["error"]["data"]["kind"] == "node_unavailable" and "contenox/chat" in out[1]["error"]["message"]
    assert out[2] == {"jsonrpc": "2.0", "id": 3, "result": None}  # the replayed initialize's answer was not shown
    assert len(out) == 3 and relay.reconnects == 1


def test_acp_sessions_are_loaded_again_on_the_new_node_and_their_history_is_not_replayed_to_the_client() -> None:
    run = _RelayUnderTest("acp")
    nodes = run.nodes
    first = nodes.next()
    run.editor_sends({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
                     {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}})
    assert len(list(_recv_messages(first, "acp", 2))) == 2
    first.sendall(encode_line({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}})
                  + encode_line({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}))
    run.editor_sends({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                      "params": {"sessionId": "s1", "prompt": []}})
    assert next(_recv_messages(first, "acp", 1))["id"] == 2
    first.close()

    second = nodes.next()
    init, load = list(_recv_messages(second, "acp", 2))
    assert init["method"] == "initialize" and load["method"] == "session/load"
    assert load["params"] == {"sessionId": "s1", "cwd": "/w", "mcpServers": []}
    second.sendall(encode_line({"jsonrpc": "2.0", "id": init["id"], "result": {}})
                   + encode_line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1"}})
                   + encode_line({"jsonrpc": "2.0", "id": load["id"], "result": {}}))
    out = run.finish(second)
    assert [m.get("id") for m in out] == [0, 1, 2]
    assert out[2]["error"]["code"] == -32016 and "session/prompt" in out[2]["error"]["message"]


def test_a_connection_that_dies_during_the_replay_is_replaced_before_the_editor_next_request_is_sent() -> None:
    """Right after a node is killed, its listening socket can still take a connection that is reset a moment
    later: the relay waits for the answer to its replayed initialize and connects again when that dies."""
    run = _RelayUnderTest("lsp")
    nodes, relay = run.nodes, run.relay
    first = nodes.next()
    run.editor_sends({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert next(_recv_messages(first, "lsp", 1))["method"] == "initialize"
    first.sendall(encode_frame({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}))
    first.close()

    stale = nodes.next()
    assert next(_recv_messages(stale, "lsp", 1))["method"] == "initialize"
    run.editor_sends({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}})
    stale.close()  # reset before it answered: the hover must not have gone to it

    live = nodes.next()
    replayed = next(_recv_messages(live, "lsp", 1))
    assert replayed["method"] == "initialize"
    live.sendall(encode_frame({"jsonrpc": "2.0", "id": replayed["id"], "result": {"capabilities": {}}}))
    hover = next(_recv_messages(live, "lsp", 1))
    assert hover["id"] == 2 and hover["method"] == "textDocument/hover"
    live.sendall(encode_frame({"jsonrpc": "2.0", "id": 2, "result": None}))
    out = run.finish(live)
    assert out == [{"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}, {"jsonrpc": "2.0", "id": 2,
                                                                                "result": None}]
    assert relay.reconnects == 1 and len(nodes.ends) == 3
