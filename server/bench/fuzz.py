"""Fuzzing the node's three protocols with a fixed seed: the node must answer bad input with structured errors,
keep the connection usable and never crash (the first fault campaign, kept as a suite).

:func:`fuzz_protocol` opens one connection of ``protocol`` (``rpc``, ``lsp``: Content-Length frames; ``acp``:
newline-delimited JSON) to a running node and sends ``count`` messages drawn from a seeded generator: random JSON
values and objects, the protocol's real methods with wrong or random params, ids of every type, garbage bytes,
truncated JSON, invalid UTF-8, deep nesting, duplicate headers. After each message it sends a well-formed probe
request and waits for its answer; a probe that gets none (or a closed connection) is a failure, and the
connection is reopened. The counts come back as :class:`FuzzResult`.
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

import msgspec

from contenox.client import connect
from contenox.config import Config

__all__ = ["FrameConnection", "FuzzResult", "RelayConnection", "fuzz_messages", "fuzz_protocol", "fuzz_relay",
           "relay_messages"]

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
    exits: int = 0
    """Relay processes that exited during the fuzz (each one an editor losing Contenox): a failure."""
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


def _read_message(file: IO[bytes], protocol: str) -> dict[str, Any] | None:
    """The next message on ``file`` ({} for a blank ACP line, None at the end)."""
    if protocol == "acp":
        line = file.readline(1 << 24)
        return json.loads(line) if line.strip() else ({} if line else None)
    length = None
    while True:
        line = file.readline(1 << 16)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if length is not None:
                break
            continue
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = file.read(length or 0)
    return json.loads(body) if body else None


class _Connection:
    protocol: str

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def receive(self) -> dict[str, Any] | None:
        raise NotImplementedError

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


class FrameConnection(_Connection):
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
        return _read_message(self.file, self.protocol)

    def close(self) -> None:
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass


class RelayConnection(_Connection):
    """The editor-side relay as an editor runs it (``contenox lsp --stdio`` / ``contenox acp``, a subprocess with
    ``env``), with the connection's interface; :attr:`stderr` keeps what it wrote there."""

    def __init__(self, env: dict[str, str], protocol: str, timeout_s: float = 30.0) -> None:
        args = ["lsp", "--stdio"] if protocol == "lsp" else ["acp"]
        self.protocol = protocol
        self.timeout_s = timeout_s
        self.process = subprocess.Popen([sys.executable, "-m", "contenox", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.stderr = b""
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while True:
            try:
                message = _read_message(self.process.stdout, self.protocol)
            except ValueError:
                message = {}
            self._messages.put(message)
            if message is None:
                return

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 1 << 16):
            self.stderr += chunk

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any] | None:
        try:
            return self._messages.get(timeout=self.timeout_s)
        except queue.Empty:
            return None

    def close(self) -> int | None:
        """Close stdin as an editor does; the relay's exit code (None: it had to be killed)."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.close()
        except OSError:
            pass
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None
        finally:
            for reader in self._readers:
                reader.join(5)


def relay_messages(protocol: str, seed: int, count: int) -> Iterator[bytes]:
    """The node's fuzz (:func:`fuzz_messages`) with what the relay itself must track mixed in: documents whose
    ``uri`` is a list, an object or a number, messages nested thousands deep with and without an id, conflicting
    and malformed Content-Length headers, a header block over any sane size (the same for the same seed)."""
    rng = random.Random(seed)
    node_fuzz = fuzz_messages(protocol, seed, count)

    def frame(body: bytes) -> bytes:
        if protocol == "acp":
            return body.replace(b"\n", b" ") + b"\n"
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    for i in range(count):
        kind = rng.randrange(10)
        if kind <= 3:
            yield next(node_fuzz)
        elif kind <= 5:
            method = rng.choice(["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose"])
            uri: Any = rng.choice([["file:///a.py"], {"path": "/a.py"}, 7, None, True, [[[]]]])
            document = rng.choice([{"uri": uri, "text": "x", "version": 1}, [uri], uri])
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {"textDocument": document}}
            if rng.random() < 0.3:
                message["id"] = f"doc-{i}"
            yield frame(json.dumps(message).encode())
        elif kind == 6:
            depth = rng.choice([1000, 5000, 20000])
            msg_id = rng.choice([b'"deep-%d"' % i, b"%d" % (50_000 + i), b"null", b""])
            head = b'{"jsonrpc":"2.0",' + (b'"id":' + msg_id + b"," if msg_id else b"") + b'"method":"x",'
            yield frame(head + b'"params":' + b"[" * depth + b"]" * depth + b"}")
        elif protocol == "acp":
            yield rng.choice([b"\n\r\n", b"[" * 3000 + b"\n", b"\xff\xfe{\n", b'{"id":{"id":[1]}}\n'])
        elif kind == 7:  # conflicting, duplicate, negative, non-numeric Content-Length headers
            body = json.dumps({"jsonrpc": "2.0", "id": f"dup-{i}", "method": "nope/nope"}).encode()
            other = rng.choice([len(body) + 10, len(body) - 5, len(body)])
            yield b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), other) + body
        elif kind == 8:
            yield rng.choice([b"Content-Length: -4\r\n\r\n", b"Content-Length: abc\r\n\r\n",
                              b"Content-Type: x\r\n\r\n", b"\r\n\r\n\n"])
        else:
            yield b"X-Pad: " + b"a" * rng.choice([9000, 70000]) + b"\r\n\r\n"


def fuzz_relay(env: dict[str, str], protocol: str, *, seed: int, count: int) -> FuzzResult:
    """:func:`relay_messages` through a relay subprocess (environment ``env``: its CONTENOX_HOME and
    XDG_RUNTIME_DIR) to its node, a probe after each; a relay that exits is counted and started again."""
    result = FuzzResult(protocol=f"{protocol}-relay")
    started = time.monotonic()
    conn = _relay(env, protocol)
    for number, data in enumerate(relay_messages(protocol, seed, count)):
        try:
            conn.send(data)
        except OSError:
            pass
        result.sent += 1
        if conn.probe(20_000_000 + number, result):
            result.probes_answered += 1
            continue
        result.probes_lost += 1
        if conn.process.poll() is not None:
            result.exits += 1
        conn.close()
        conn = _relay(env, protocol)
        result.reconnects += 1
    if conn.close() != 0:
        result.exits += 1
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _relay(env: dict[str, str], protocol: str) -> RelayConnection:
    conn = RelayConnection(dict(os.environ, **env), protocol)
    if protocol == "lsp":  # a window first says hello, as an editor does
        conn.send(b"Content-Length: %d\r\n\r\n" % len(body := json.dumps(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}).encode()) + body)
        conn.receive()
    return conn


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
