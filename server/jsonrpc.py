"""The JSON-RPC 2.0 wire, once: frames, the size limit, error objects and error codes.

Every process and protocol speaks through this module: the daemon's refusals, the node's ``rpc``
protocol (the CLI), the LSP connection (Content-Length frames, as the node's ``rpc``) and the ACP
connection (one JSON object per line). A frame larger than :data:`MAX_MESSAGE_BYTES` is read and
discarded in pieces, so the stream stays in sync and the connection survives; the caller answers it
with an error. Codes are :class:`ErrorCode` (the JSON-RPC standard ones); a
:class:`~contenox.errors.ContenoxError` carries its own stable code in the server range.
"""

from __future__ import annotations

import asyncio
import enum
import socket
from typing import Any

import msgspec

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_MESSAGE_BYTES",
    "ErrorCode",
    "FrameError",
    "FrameTooLarge",
    "SocketFrames",
    "content_length",
    "encode_frame",
    "encode_line",
    "error_frame",
    "error_line",
    "error_object",
    "read_frame",
    "read_line",
]

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The largest message any connection accepts (a frame's body, or one ACP line)."""
MAX_HEADER_BYTES = 8192
"""The largest header block a Content-Length frame may have (the editor relay cuts frames as the node does)."""
_DISCARD_CHUNK = 1 << 20


class ErrorCode(enum.IntEnum):
    """The standard JSON-RPC codes (``ContenoxError`` subclasses carry their own, see errors.py).

    ``INVALID_REQUEST`` is for a message that is not a request at all (not an object, a bad id);
    a request whose params are wrong is ``INVALID_PARAMS``, the code of
    :class:`~contenox.errors.InvalidRequest`.
    """

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800


class FrameError(Exception):
    """The header block is malformed (no usable Content-Length); the frame was skipped."""

    skip = 0
    """Body bytes to skip after the headers (conflicting Content-Length headers: the first one)."""


class FrameTooLarge(Exception):
    """The message was larger than the limit; it was read and discarded."""

    def __init__(self, length: int) -> None:
        super().__init__(f"message of {length} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")
        self.length = length


def error_object(code: int, message: str, kind: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``error`` member of a response: stable code, one-line message, ``data.kind`` and details."""
    return {"code": int(code), "message": message, "data": {"kind": kind, "details": details or {}}}


def _error_message(msg_id: Any, code: int, message: str, kind: str,
                   details: dict[str, Any] | None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": error_object(code, message, kind, details)}


def encode_frame(message: Any) -> bytes:
    """A Content-Length framed message (LSP base protocol; the node's ``rpc``)."""
    body = msgspec.json.encode(message)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode_line(message: Any) -> bytes:
    """One newline-terminated JSON message (ACP)."""
    return msgspec.json.encode(message) + b"\n"


def error_frame(msg_id: Any, code: int, message: str, kind: str, details: dict[str, Any] | None = None) -> bytes:
    return encode_frame(_error_message(msg_id, code, message, kind, details))


def error_line(msg_id: Any, code: int, message: str, kind: str, details: dict[str, Any] | None = None) -> bytes:
    return encode_line(_error_message(msg_id, code, message, kind, details))


def content_length(headers: list[bytes]) -> int:
    """The body length a frame's header lines give; FrameError when there is none usable."""
    lengths = []
    for line in headers:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                lengths.append(int(value.strip()))
            except ValueError as exc:
                raise FrameError(f"bad Content-Length {value.strip()!r}") from exc
    if not lengths:
        raise FrameError("missing Content-Length header")
    if len(set(lengths)) > 1:
        error = FrameError(f"conflicting Content-Length headers {lengths}; the first was used to skip the body")
        error.skip = lengths[0] if lengths[0] >= 0 else 0
        raise error
    if lengths[0] < 0:
        raise FrameError(f"negative Content-Length {lengths[0]}")
    return lengths[0]


async def _discard(reader: asyncio.StreamReader, length: int) -> None:
    remaining = length
    while remaining:
        chunk = await reader.read(min(remaining, _DISCARD_CHUNK))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", remaining)
        remaining -= len(chunk)


async def read_frame(reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES) -> bytes | None:
    """The next frame's body, or None at a clean end of stream.

    Raises FrameError (bad headers; with conflicting Content-Length headers the body is skipped by the
    first, otherwise it is not consumed), FrameTooLarge (body
    discarded) or asyncio.IncompleteReadError / LimitOverrunError when the stream breaks mid-frame or
    a header block is beyond any sane size.
    """
    headers: list[bytes] = []
    total = 0
    while True:
        try:
            line = await reader.readline()
        except ValueError as exc:  # one header line beyond the stream's limit
            raise asyncio.LimitOverrunError("header line too long", 0) from exc
        if not line:
            if headers:
                raise asyncio.IncompleteReadError(b"", None)
            return None
        total += len(line)
        if total > MAX_HEADER_BYTES:
            raise asyncio.LimitOverrunError("header block too large", total)
        stripped = line.rstrip(b"\r\n")
        if not stripped:
            if not headers:
                continue  # tolerate stray blank lines between frames
            break
        headers.append(stripped)
    try:
        length = content_length(headers)
    except FrameError as exc:  # conflicting lengths: skip a body by the first, so the next frame still parses
        if exc.skip:
            await _discard(reader, min(exc.skip, max_bytes))
        raise
    if length > max_bytes:
        await _discard(reader, length)
        raise FrameTooLarge(length)
    return await reader.readexactly(length)


async def read_line(reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES) -> bytes | None:
    """The next line (without its newline; a last line without one counts), None at end of stream.

    A line over ``max_bytes`` is consumed in pieces and raises FrameTooLarge.
    """
    size = 0
    parts: list[bytes] = []
    while True:
        try:
            chunk = await reader.readuntil(b"\n")
            done = True
        except asyncio.LimitOverrunError as exc:
            chunk, done = await reader.readexactly(exc.consumed), False
        except asyncio.IncompleteReadError as exc:
            chunk, done = exc.partial, True
        size += len(chunk)
        if size <= max_bytes + 1:  # +1: the newline itself
            parts.append(chunk)
        if done:
            if size == 0:
                return None
            if size > max_bytes + 1:
                raise FrameTooLarge(size)
            return b"".join(parts).rstrip(b"\r\n")


class SocketFrames:
    """Blocking frames over a connected socket (what the CLI client uses)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._file = sock.makefile("rb")

    def send(self, message: Any) -> None:
        self.sock.sendall(encode_frame(message))

    def receive(self) -> Any:
        """The next decoded message; raises ConnectionError at end of stream."""
        headers: list[bytes] = []
        while True:
            line = self._file.readline(MAX_HEADER_BYTES)
            if not line:
                raise ConnectionError("the node closed the connection")
            stripped = line.rstrip(b"\r\n")
            if not stripped:
                if headers:
                    break
                continue
            headers.append(stripped)
        length = content_length(headers)
        body = self._file.read(length)
        if len(body) != length:
            raise ConnectionError("the node closed the connection mid-message")
        return msgspec.json.decode(body)

    def close(self) -> None:
        self._file.close()
        self.sock.close()
