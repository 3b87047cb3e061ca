"""The editor-side relays (``contenox lsp --stdio``, ``contenox acp``) fuzzed with a fixed seed: whatever bytes the
editor sends, the relay neither exits nor desyncs from the node. It cuts the stream exactly where the node's reader
does; a message it cannot track is answered with a structured error when it has an id, else dropped."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from typing import Any

import pytest

from contenox.bench.fuzz import fuzz_relay, relay_messages
from contenox.client import Relay
from contenox.client.stdio_pipe import Splitter
from contenox.config import Config
from contenox.errors import InvalidRequest
from contenox.jsonrpc import FrameError, FrameTooLarge, encode_frame, encode_line, read_frame, read_line

SEED = 20261201


async def _node_reads(protocol: str, data: bytes) -> list[bytes]:
    """The message bodies the node's own reader takes from ``data``, as its connection loop reads them."""
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    bodies: list[bytes] = []
    while True:
        try:
            body = await (read_frame(reader) if protocol == "lsp" else read_line(reader))
        except (FrameError, FrameTooLarge):
            continue
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return bodies
        if body is None:
            return bodies
        if protocol == "acp" and not body.strip():
            continue
        bodies.append(body)


@pytest.mark.parametrize("protocol", ["lsp", "acp"])
async def test_the_relay_cuts_every_fuzzed_stream_where_the_node_does(protocol: str) -> None:
    for seed in range(SEED, SEED + 20):
        data = b"".join(relay_messages(protocol, seed, 60))
        splitter = Splitter(protocol, from_editor=True)
        forwarded: list[bytes] = []
        tracked: list[bytes] = []
        for at in range(0, len(data), 997):  # fed in pieces, as a pipe delivers them
            for raw, body in splitter.feed(data[at:at + 997]):
                forwarded.append(raw)
                if body:
                    tracked.append(body)
        rest = splitter.rest()
        node = await _node_reads(protocol, b"".join(forwarded) + rest)
        assert [b.strip() if protocol == "acp" else b for b in node] == tracked, seed


def _relay_on_socketpair(protocol: str) -> tuple[socket.socket, int, int, threading.Thread]:
    node_end, relay_end = socket.socketpair()
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    relay = Relay(None, protocol, stdin_r, stdout_w, connect=lambda: relay_end)
    thread = threading.Thread(target=relay.run, daemon=True)
    thread.start()
    return node_end, stdin_w, stdout_r, thread


def _answers(protocol: str, fd: int, count: int) -> list[dict[str, Any]]:
    splitter = Splitter(protocol)
    out: list[dict[str, Any]] = []
    while len(out) < count:
        out.extend(json.loads(body) for _, body in splitter.feed(os.read(fd, 1 << 16)) if body)
    return out


@pytest.mark.parametrize("protocol", ["lsp", "acp"])
def test_messages_the_relay_cannot_track_are_answered_or_dropped_and_the_next_one_passes(protocol: str) -> None:
    node_end, stdin_w, stdout_r, thread = _relay_on_socketpair(protocol)
    encode = encode_frame if protocol == "lsp" else encode_line
    deep = b"[" * 1000 + b"]" * 1000
    sent = [b'{"jsonrpc":"2.0","id":"deep","method":"x","params":' + deep + b"}",
            b'{"jsonrpc":"2.0","method":"x","params":' + deep + b"}",
            json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                        "params": {"textDocument": {"uri": ["file:///a.py"], "text": ""}}}).encode(),
            json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange",
                        "params": {"textDocument": {"uri": {"a": 1}}, "contentChanges": []}}).encode()]
    good = encode({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
    os.write(stdin_w, b"".join(body + b"\n" if protocol == "acp" else b"Content-Length: %d\r\n\r\n%s" % (
        len(body), body) for body in sent) + good)
    node_end.settimeout(10)
    received = b""
    while not received.endswith(good):
        received += node_end.recv(1 << 16)
    assert received == good  # only the message it could track reached the node, whole
    (answer,) = _answers(protocol, stdout_r, 1)
    assert answer["id"] == "deep" and answer["error"]["code"] == InvalidRequest.code
    assert answer["error"]["data"]["kind"] == "invalid_request" and "deep" in answer["error"]["message"]
    assert thread.is_alive()
    os.close(stdin_w)
    node_end.close()
    thread.join(10)
    assert not thread.is_alive()


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["lsp", "acp"])
def test_fuzzed_editor_input_never_ends_the_relay(node_config: Config, protocol: str) -> None:
    result = fuzz_relay({"CONTENOX_HOME": node_config.home}, protocol, seed=SEED, count=120)
    assert (result.sent, result.probes_answered, result.probes_lost, result.exits) == (120, 120, 0, 0), result
