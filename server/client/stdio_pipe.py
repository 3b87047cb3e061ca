"""``contenox lsp`` / ``contenox acp``: the editor's protocol stream piped to the node, surviving the node.

Messages pass through unchanged, but the relay reads their envelopes: which editor requests the node has not
answered yet, and what a new node must be told to carry on (LSP: ``initialize``, ``initialized`` and the open
documents with their changes; ACP: ``initialize`` and a ``session/load`` of each session). When the node goes
away (killed, crashed, stopped), each pending request gets a structured ``node_unavailable`` error at once, a
node is started again and told that state, and the editor's next request works. Answers to the relay's own
requests, and the history a ``session/load`` replays, are not forwarded.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from contenox.client.node_client import ensure_node
from contenox.config import Config
from contenox.errors import ContenoxError, InvalidRequest, NodeUnavailable
from contenox.jsonrpc import (
    MAX_HEADER_BYTES,
    MAX_MESSAGE_BYTES,
    FrameError,
    content_length,
    encode_frame,
    encode_line,
    error_frame,
    error_line,
)

__all__ = ["Relay", "Splitter", "pipe_stdio"]

log = logging.getLogger(__name__)
_CHUNK = 1 << 16
_RELAY_ID = "contenox-relay-"
_RECONNECTS = 5
_HANDSHAKE_S = 60.0
_BLANK_LINES = re.compile(rb"(?:\r*\n)+")


class Splitter:
    """Cuts a byte stream into messages exactly where the node's reader does (``jsonrpc.read_frame`` /
    ``read_line``), so the relay and the node never disagree on where a message starts: Content-Length frames
    (lsp) or lines (acp). A piece that is not a message the node will read (a header block without a usable
    Content-Length, a body skipped for conflicting lengths, a body or line over the size limit) comes out with
    an empty body: it passes through untracked and the node answers it as it does on its own socket."""

    def __init__(self, protocol: str, *, from_editor: bool = False) -> None:
        self.framed = protocol == "lsp"
        self.from_editor = from_editor
        """A header block over the limit is dropped (from the editor: the node would close the connection) or
        passed on (from the node)."""
        self._buffer = b""
        self._skip = 0
        """Body bytes that pass through untracked (a frame over the limit, or skipped for conflicting lengths)."""
        self._long_line = False
        """ACP: inside a line over the limit, passed through as it comes."""
        self._dropping = False
        """LSP: inside a header line over the limit, dropped up to its end."""

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """The complete messages now in the buffer, each as (raw bytes as received, JSON body)."""
        self._buffer += data
        out: list[tuple[bytes, bytes]] = []
        while self._buffer:
            piece = self._next_frame() if self.framed else self._next_line()
            if piece is None:
                break
            if piece[0]:  # empty: bytes dropped, go on
                out.append(piece)
        return out

    def _next_line(self) -> tuple[bytes, bytes] | None:
        end = self._buffer.find(b"\n")
        if end < 0:
            if self._long_line or len(self._buffer) > MAX_MESSAGE_BYTES:  # the node discards it: so does the relay
                self._long_line = True
                raw, self._buffer = self._buffer, b""
                return raw, b""
            return None
        raw, self._buffer = self._buffer[:end + 1], self._buffer[end + 1:]
        if self._long_line:
            self._long_line = False
            return raw, b""
        return raw, raw.strip()

    def _next_frame(self) -> tuple[bytes, bytes] | None:
        if self._dropping:  # the rest of a header line over the limit
            end = self._buffer.find(b"\n")
            self._dropping = end < 0
            cut = end + 1 if end >= 0 else len(self._buffer)
            raw, self._buffer = self._buffer[:cut], self._buffer[cut:]
            return (b"" if self.from_editor else raw), b""
        if self._skip:
            raw, self._buffer = self._buffer[:self._skip], self._buffer[self._skip:]
            self._skip -= len(raw)
            return raw, b""
        if blank := _BLANK_LINES.match(self._buffer):  # stray blank lines between frames: the node skips them too
            raw, self._buffer = self._buffer[:blank.end()], self._buffer[blank.end():]
            return (b"" if self.from_editor else raw), b""
        headers: list[bytes] = []
        at = 0
        while True:
            end = self._buffer.find(b"\n", at)
            if end < 0 or end + 1 > MAX_HEADER_BYTES:
                if end < 0 and len(self._buffer) <= MAX_HEADER_BYTES:
                    return None  # the header block is not complete yet
                # a header block beyond any sane size: the node would close the connection, so the editor's
                # block is dropped (up to the end of the line that crossed the limit) and the node never sees it
                cut = end + 1 if end >= 0 else len(self._buffer)
                self._dropping = end < 0
                raw, self._buffer = self._buffer[:cut], self._buffer[cut:]
                if not self.from_editor:
                    return raw, b""
                log.warning("dropped %d bytes of an editor header block over %d bytes", cut, MAX_HEADER_BYTES)
                return b"", b""
            line = self._buffer[at:end + 1].rstrip(b"\r\n")
            at = end + 1
            if not line:
                break
            headers.append(line)
        try:
            length = content_length(headers)
        except FrameError as exc:  # the node answers a parse error and skips the body by the first length, if any
            raw, self._buffer = self._buffer[:at], self._buffer[at:]
            self._skip = min(exc.skip, MAX_MESSAGE_BYTES)
            return raw, b""
        if length > MAX_MESSAGE_BYTES:  # the node discards the body and answers it
            raw, self._buffer = self._buffer[:at], self._buffer[at:]
            self._skip = length
            return raw, b""
        if len(self._buffer) < at + length:
            return None
        raw, self._buffer = self._buffer[:at + length], self._buffer[at + length:]
        return raw, raw[at:]

    def rest(self) -> bytes:
        """What is left when the stream ends (an incomplete message), passed on as it is."""
        rest, self._buffer = self._buffer, b""
        return rest


def _decode(body: bytes) -> dict[str, Any] | None:
    """The message, or None when it is not a JSON object (passed on: the node answers it). RecursionError for
    one nested too deeply to decode (the relay cannot track it)."""
    try:
        message = msgspec.json.decode(body) if body else None
    except msgspec.DecodeError:
        return None
    return message if isinstance(message, dict) else None


_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_COLON = re.compile(rb"\s*:\s*")


def _top_level_id(body: bytes) -> str | int | None:
    """The ``id`` of a message too deep or odd to decode whole (None: it has none, or not a usable one)."""
    depth = 0
    for token in _TOKENS.finditer(body):
        first = token.group()[:1]
        if first in (b"{", b"["):
            depth += 1
        elif first in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and token.group() == b'"id"' and (colon := _COLON.match(body, token.end())):
            try:
                value, _ = json.JSONDecoder().raw_decode(body.decode("utf-8", "replace"), colon.end())
            except (ValueError, RecursionError):
                return None
            return value if isinstance(value, str | int) and not isinstance(value, bool) else None
    return None


def _key(msg_id: Any) -> str:
    return msgspec.json.encode(msg_id).decode()


class Relay:
    """One editor connection's relay; :meth:`run` returns when the editor closes it."""

    def __init__(self, config: Config | None, protocol: str, stdin_fd: int, stdout_fd: int,
                 connect: Callable[[], socket.socket] | None = None) -> None:
        """``connect``: a new connection to the node, past the protocol line (default: :func:`ensure_node`,
        which starts the node when none runs)."""
        assert config is not None or connect is not None
        self._connect = connect or (lambda: ensure_node(config, protocol))  # type: ignore[arg-type]
        self.protocol = protocol
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.sock: socket.socket | None = None
        self._lock = threading.RLock()
        self._out = threading.Lock()
        """Held while writing to the editor: the node's messages and the relay's own answers never interleave."""
        self._pending: dict[str, tuple[Any, str]] = {}
        """Editor requests the node has not answered: key -> (id, method)."""
        self._initialize: dict[str, Any] | None = None
        self._initialized: bytes | None = None
        self._documents: dict[str, list[bytes]] = {}
        self._sessions: dict[str, str] = {}
        self._new_sessions: dict[str, str] = {}
        """ACP ``session/new`` requests in flight: key -> cwd (the answer names the session)."""
        self._own: set[str] = set()
        """The relay's own requests to a new node, whose answers (and replayed history) are not forwarded."""
        self._ids = itertools.count(1)
        self.editor_done = threading.Event()
        """Set once the editor closed its side (stdin at its end): the node closing the connection then is the
        normal end, not a reason to start it again."""
        self._exited = False
        """The editor sent LSP ``exit``: the node closing the connection is the normal end."""
        self.reconnects = 0

    # -- editor -> node ---------------------------------------------------------------------------
    def _note_outgoing(self, raw: bytes, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if "id" in message:
            self._pending[_key(message["id"])] = (message["id"], method)
            if method == "initialize":
                self._initialize = params
            elif method == "session/new":
                self._new_sessions[_key(message["id"])] = str(params.get("cwd", ""))
            elif method == "session/load" and isinstance(params.get("sessionId"), str):
                self._sessions[params["sessionId"]] = str(params.get("cwd", ""))
            return
        document = params.get("textDocument")
        uri = document.get("uri") if isinstance(document, dict) else None
        if uri is not None and not isinstance(uri, str) and method.startswith("textDocument/"):
            raise InvalidRequest(f"{method}: textDocument.uri must be a string, not {type(uri).__name__}")
        if method == "initialized":
            self._initialized = raw
        elif method == "textDocument/didOpen" and uri:
            self._documents[uri] = [raw]
        elif method == "textDocument/didChange" and uri in self._documents:
            self._documents[uri].append(raw)
        elif method == "textDocument/didClose" and uri:
            self._documents.pop(uri, None)
        elif method == "exit":
            self._exited = True

    def _admit(self, raw: bytes, body: bytes) -> bool:
        """Track an editor message; False when the relay cannot (nested too deeply to decode, a document whose
        ``uri`` is not a string): such a message is answered with a structured error when it has an id, else
        dropped and logged, and not passed on. Any byte sequence: the relay outlives it and stays in sync."""
        try:
            self._note_outgoing(raw, _decode(body))
            return True
        except RecursionError:
            why = "nested too deeply"
        except ContenoxError as exc:
            why = exc.message
        except Exception as exc:  # whatever a message does to the tracking, the relay carries on
            log.debug("tracking an editor message failed", exc_info=True)
            why = f"{type(exc).__name__}: {exc}"
        msg_id = _top_level_id(body)
        if msg_id is None:
            log.warning("dropped an editor message the relay cannot pass on (%s; %d bytes)", why, len(body))
        else:
            log.warning("answered editor message %r with an error: %s", msg_id, why)
            encode = error_frame if self.protocol == "lsp" else error_line
            self._write(encode(msg_id, InvalidRequest.code, f"the message cannot be passed on: {why}",
                               InvalidRequest.kind, {"relay": True}))
        return False

    def _upstream(self) -> None:
        splitter = Splitter(self.protocol, from_editor=True)
        try:
            while data := os.read(self.stdin_fd, _CHUNK):
                for raw, body in splitter.feed(data):
                    with self._lock:
                        if not self._admit(raw, body):
                            continue
                        sock = self.sock
                        if sock is not None:
                            with contextlib.suppress(OSError):  # a dead node: the failover answers for it
                                sock.sendall(raw)
            with self._lock:
                if self.sock is not None and (rest := splitter.rest()):
                    with contextlib.suppress(OSError):
                        self.sock.sendall(rest)
        except OSError as exc:
            log.debug("stdin -> node stopped: %s", exc)
        finally:
            self.editor_done.set()
            with self._lock:
                if self.sock is not None:
                    with contextlib.suppress(OSError):
                        self.sock.shutdown(socket.SHUT_WR)

    # -- node -> editor ---------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        with self._out:
            while view:
                view = view[os.write(self.stdout_fd, view):]

    def _forward(self, raw: bytes, message: dict[str, Any] | None) -> bool:
        """Whether ``raw`` goes to the editor (answers to the relay's own requests and the history they replay
        do not)."""
        if message is None:
            return True
        if "method" in message:
            return not (self._own and message["method"] == "session/update")
        if "id" not in message:
            return True
        key = _key(message["id"])
        if key in self._own:
            self._own.discard(key)
            return False
        self._pending.pop(key, None)
        cwd = self._new_sessions.pop(key, None)
        result = message.get("result")
        if cwd is not None and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self._sessions[result["sessionId"]] = cwd
        return True

    def _downstream(self, sock: socket.socket, splitter: Splitter) -> None:
        with contextlib.suppress(OSError):  # reset or closed: the node is gone either way
            while data := sock.recv(_CHUNK):
                self._deliver(splitter.feed(data))
        self._write(splitter.rest())

    def _deliver(self, messages: list[tuple[bytes, bytes]]) -> None:
        for raw, body in messages:
            with self._lock:
                try:
                    forward = self._forward(raw, _decode(body))
                except RecursionError:  # not an answer the relay tracks: the editor gets it as it is
                    forward = True
            if forward:
                self._write(raw)

    # -- failover ---------------------------------------------------------------------------------
    def _encode(self, message: dict[str, Any]) -> bytes:
        return encode_frame(message) if self.protocol == "lsp" else encode_line(message)

    def _request(self, method: str, params: dict[str, Any]) -> bytes:
        msg_id = f"{_RELAY_ID}{next(self._ids)}"
        self._own.add(_key(msg_id))
        return self._encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def _replay(self) -> list[bytes]:
        """What a new node is told before the editor's next message."""
        out: list[bytes] = []
        if self._initialize is not None:
            out.append(self._request("initialize", self._initialize))
        if self.protocol == "lsp":
            if self._initialized is not None:
                out.append(self._initialized)
            out.extend(raw for changes in self._documents.values() for raw in changes)
        else:
            out.extend(self._request("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
                       for sid, cwd in self._sessions.items())
        return out

    def _fail_pending(self, reason: str) -> None:
        encode = error_frame if self.protocol == "lsp" else error_line
        for msg_id, method in self._pending.values():
            self._write(encode(msg_id, NodeUnavailable.code, f"the node went away during {method} ({reason}); "
                               "it has been started again: send the request again", NodeUnavailable.kind,
                               {"method": method}))
        self._pending.clear()
        self._new_sessions.clear()

    def _handshake(self, sock: socket.socket) -> Splitter | None:
        """Replay the editor's state to a new node and wait for the answers to the relay's own requests
        (``initialize``, ACP ``session/load``); None when the connection dies first (right after a node is
        killed, the kernel can still queue connections on its listening socket for a moment: they are reset
        once it closes)."""
        splitter = Splitter(self.protocol)
        try:
            for raw in self._replay():
                sock.sendall(raw)
            sock.settimeout(_HANDSHAKE_S)
            while self._own:  # not all answered yet
                data = sock.recv(_CHUNK)
                if not data:
                    return None
                self._deliver(splitter.feed(data))
        except OSError as exc:
            log.info("a new node connection failed during the replay: %s", exc)
            return None
        finally:
            with contextlib.suppress(OSError):
                sock.settimeout(None)
        return splitter

    def _reconnect(self) -> tuple[socket.socket, Splitter]:
        """A connection to a node (started again) that has taken the editor's state."""
        last: ContenoxError | None = None
        for attempt in range(_RECONNECTS):
            try:
                sock = self._connect()
            except ContenoxError as exc:
                last = exc
                continue
            self._own.clear()
            splitter = self._handshake(sock)
            if splitter is not None:
                return sock, splitter
            sock.close()
            time.sleep(0.1 * (attempt + 1))
        raise last or NodeUnavailable("cannot start the node again")

    def run(self) -> int:
        self.sock = self._connect()
        splitter = Splitter(self.protocol)
        threading.Thread(target=self._upstream, name="stdin->node", daemon=True).start()
        while True:
            sock = self.sock
            self._downstream(sock, splitter)
            with self._lock:  # the editor's next messages wait here until the new node has its state
                sock.close()
                self.sock = None
                if self.editor_done.is_set() or self._exited:
                    return 0  # the editor closed its side and the node finished: a normal end
                self._fail_pending("its connection closed")
                self.reconnects += 1
                log.warning("the node went away; starting it again (%d)", self.reconnects)
                try:
                    self.sock, splitter = self._reconnect()
                except ContenoxError as exc:
                    log.error("cannot reach the node again: %s", exc.message)
                    return 1


def pipe_stdio(config: Config, protocol: str) -> int:
    """Pipe this process's stdio to ``protocol`` on the node (started on demand, and again if it goes away)."""
    import sys

    return Relay(config, protocol, sys.stdin.fileno(), sys.stdout.fileno()).run()
