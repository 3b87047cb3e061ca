"""Fuzzing the node's three protocols with a fixed seed: the node must answer bad input with structured errors,
keep the connection usable and never crash (issue 16's campaign, kept as a suite).

:func:`fuzz_protocol` opens one connection of ``protocol`` (``rpc``, ``lsp``: Content-Length frames; ``acp``:
newline-delimited JSON) to a running node and sends ``count`` messages drawn from a seeded generator: random JSON
values and objects, the protocol's real methods with wrong or random params, ids of every type, garbage bytes,
truncated JSON, invalid UTF-8, deep nesting, duplicate headers. After each message it sends a well-formed probe
request and waits for its answer; a probe that gets none (or a closed connection) is a failure, and the
connection is reopened. The counts come back as :class:`FuzzResult`.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import msgspec

from contenox.client import connect
from contenox.config import Config

__all__ = ["FrameConnection", "FuzzResult", "fuzz_messages", "fuzz_protocol"]

_METHODS = {
    "rpc": ["ask", "status", "explain", "pin", "unpin", "related", "stop_turn", "cancel", "overlay", "history",
            "$/cancelRequest", "nope"],
    "lsp": ["initialize", "initialized", "textDocument/hover", "textDocument/didOpen", "textDocument/didChange",
            "textDocument/codeAction", "workspace/executeCommand", "contenox/chat", "contenox/explainContext",
            "$/cancelRequest", "shutdown", "nope/nope"],
    "acp": ["initialize", "session/new", "session/load", "session/prompt", "session/cancel", "session/set_mode",
            "authenticate", "fs/read_text_file", "nope"],
}
_PROBE = {
    "rpc": {"method": "status", "params": {}},
    "lsp": {"method": "contenox/explainContext", "params": {}},
    "acp": {"method": "initialize", "params": {"protocolVersion": 1}},
}


class FuzzResult(msgspec.Struct, kw_only=True):
    protocol: str
    sent: int = 0
    probes_answered: int = 0
    probes_lost: int = 0
    """Probes that got no answer (the connection closed or hung): each is a failure."""
    errors_structured: int = 0
    """Answers to fuzzed requests that were JSON-RPC errors with a code and a message."""
    reconnects: int = 0
    seconds: float = 0.0


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**31, -(2**63), 2**64, rng.randrange(-1000, 1000)])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-9, 3.14])
    if kind in (4, 5):
        return rng.choice(["", "x", "file:///etc/passwd", "/", "../../..", "\u0000", "é" * 50, "a" * 5000,
                           "acp-0000", "{}", "null"])
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["cwd", "prompt", "uri", "sessionId", "textDocument", "position", "id", "x", "params",
                        "protocolVersion", "path", "text", "pins", "max_new_tokens", "command", "arguments"]):
            _value(rng, depth + 1) for _ in range(rng.randrange(5))}


def fuzz_messages(protocol: str, seed: int, count: int) -> Iterator[bytes]:
    """``count`` fuzzed messages for ``protocol``, already framed (the same for the same seed)."""
    rng = random.Random(seed)
    methods = _METHODS[protocol]

    def frame(body: bytes) -> bytes:
        if protocol == "acp":
            return body.replace(b"\n", b" ") + b"\n"
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    for i in range(count):
        kind = rng.randrange(12)
        if kind <= 5:  # a request of a real method with random params and a random id
            message: dict[str, Any] = {"jsonrpc": rng.choice(["2.0", "2.0", "1.0", None]),
                                       "method": rng.choice(methods), "params": _value(rng)}
            if rng.random() < 0.8:
                message["id"] = rng.choice([i + 1000, f"s{i}", None, [1], {"a": 1}, 1.5, True])
            yield frame(json.dumps(message).encode())
        elif kind == 6:
            yield frame(json.dumps(_value(rng)).encode())
        elif kind == 7:
            yield frame(b'{"jsonrpc": "2.0", "id": 5, "method": "' + rng.choice(methods).encode() + b'", "par')
        elif kind == 8:
            yield frame(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"."))
        elif kind == 9:
            depth = rng.choice([100, 1000, 5000])
            yield frame(b'{"jsonrpc":"2.0","id":7,"method":"x","params":' + b"[" * depth + b"]" * depth + b"}")
        elif kind == 10:
            yield frame(b'{"jsonrpc":"2.0","id":8,"method":"\xff\xfe","params":{}}')
        elif protocol == "acp":
            yield b"\n\n   \n"
        else:  # a duplicate Content-Length header (the second one lies)
            body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": rng.choice(methods)}).encode()
            yield b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body) + 10) + body


class FrameConnection:
    """One raw connection with a reader of whole messages (frames or lines)."""

    def __init__(self, config: Config, protocol: str) -> None:
        sock = connect(config, protocol)
        assert sock is not None
        sock.settimeout(30)
        self.sock, self.protocol = sock, protocol
        self.file = sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self) -> dict[str, Any] | None:
        if self.protocol == "acp":
            line = self.file.readline(1 << 24)
            return json.loads(line) if line.strip() else ({} if line else None)
        length = None
        while True:
            line = self.file.readline(1 << 16)
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        body = self.file.read(length or 0)
        return json.loads(body) if body else None

    def probe(self, probe_id: int, result: FuzzResult) -> bool:
        """Send a well-formed request and read until its answer (counting the structured errors that answer
        fuzzed requests on the way); False: no answer (closed or timed out)."""
        message = {"jsonrpc": "2.0", "id": probe_id, **_PROBE[self.protocol]}
        body = json.dumps(message).encode()
        try:
            self.send(body + b"\n" if self.protocol == "acp" else b"Content-Length: %d\r\n\r\n" % len(body) + body)
            while True:
                answer = self.receive()
                if answer is None:
                    return False
                if answer.get("id") == probe_id:
                    return True
                error = answer.get("error")
                if isinstance(error, dict) and isinstance(error.get("code"), int) and error.get("message"):
                    result.errors_structured += 1
        except (TimeoutError, OSError, ValueError):
            return False

    def close(self) -> None:
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass


def fuzz_protocol(config: Config, protocol: str, *, seed: int, count: int) -> FuzzResult:
    """Send ``count`` fuzzed messages to the running node on ``protocol``, each followed by a probe."""
    result = FuzzResult(protocol=protocol)
    started = time.monotonic()
    conn = FrameConnection(config, protocol)
    if protocol == "lsp":  # a window first says hello, as an editor does
        conn.send(b"Content-Length: %d\r\n\r\n" % len(body := json.dumps(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}).encode()) + body)
        conn.receive()
    for number, data in enumerate(fuzz_messages(protocol, seed, count)):
        try:
            conn.send(data)
        except OSError:
            pass
        result.sent += 1
        if conn.probe(10_000_000 + number, result):
            result.probes_answered += 1
        else:
            result.probes_lost += 1
            conn.close()
            conn = FrameConnection(config, protocol)
            result.reconnects += 1
    conn.close()
    result.seconds = round(time.monotonic() - started, 1)
    return result
