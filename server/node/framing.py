"""Content-Length framing (the LSP base protocol) for the node's ``rpc`` protocol, async and blocking.

A frame whose declared length exceeds the cap is read and discarded in pieces, so the stream stays in
sync and the connection survives; the caller answers it with an error.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import msgspec

__all__ = [
    "MAX_MESSAGE_BYTES",
    "FrameError",
    "FrameTooLarge",
    "SocketFrames",
    "encode_frame",
    "read_frame",
]

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_MAX_HEADER_BYTES = 8192
_DISCARD_CHUNK = 1 << 20


class FrameError(Exception):
    """The header block is malformed (no usable Content-Length); the frame was skipped."""


class FrameTooLarge(Exception):
    """The frame was larger than the cap; its body was read and discarded."""

    def __init__(self, length: int) -> None:
        super().__init__(f"message of {length} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")
        self.length = length


def encode_frame(message: Any) -> bytes:
    body = msgspec.json.encode(message)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _content_length(headers: list[bytes]) -> int:
    for line in headers:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise FrameError(f"bad Content-Length {value.strip()!r}") from exc
            if length < 0:
                raise FrameError(f"negative Content-Length {length}")
            return length
    raise FrameError("missing Content-Length header")


async def read_frame(reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES) -> bytes | None:
    """The next frame's body, or None at a clean end of stream.

    Raises FrameError (bad headers), FrameTooLarge (body discarded) or
    asyncio.IncompleteReadError / LimitOverrunError when the stream breaks mid-frame.
    """
    headers: list[bytes] = []
    total = 0
    while True:
        line = await reader.readline()
        if not line:
            if headers:
                raise asyncio.IncompleteReadError(b"", None)
            return None
        total += len(line)
        if total > _MAX_HEADER_BYTES:
            raise asyncio.LimitOverrunError("header block too large", total)
        stripped = line.rstrip(b"\r\n")
        if not stripped:
            if not headers:
                continue  # tolerate stray blank lines between frames
            break
        headers.append(stripped)
    length = _content_length(headers)
    if length > max_bytes:
        remaining = length
        while remaining:
            chunk = await reader.read(min(remaining, _DISCARD_CHUNK))
            if not chunk:
                raise asyncio.IncompleteReadError(b"", remaining)
            remaining -= len(chunk)
        raise FrameTooLarge(length)
    return await reader.readexactly(length)


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
            line = self._file.readline(_MAX_HEADER_BYTES)
            if not line:
                raise ConnectionError("the node closed the connection")
            stripped = line.rstrip(b"\r\n")
            if not stripped:
                if headers:
                    break
                continue
            headers.append(stripped)
        length = _content_length(headers)
        body = self._file.read(length)
        if len(body) != length:
            raise ConnectionError("the node closed the connection mid-message")
        return msgspec.json.decode(body)

    def close(self) -> None:
        self._file.close()
        self.sock.close()
