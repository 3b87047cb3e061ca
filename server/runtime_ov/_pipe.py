"""Frames between the node and its engine process: a 4-byte big-endian length, then one msgpack message.

Messages are plain dicts (``op`` from the node, ``ev`` from the engine) holding msgspec structs
(requests, events, metrics) encoded as their builtins. Blocking reads and writes: each side runs them on
a thread of its own, never on an event loop.
"""

from __future__ import annotations

import struct
import threading
from typing import IO, Any

import msgspec

from contenox.errors import ContenoxError, EngineError

__all__ = ["FrameWriter", "error_from", "error_to", "read_frame"]

_HEADER = struct.Struct(">I")
_MAX_FRAME = 256 << 20
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder()


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream (the other side is gone)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME:
        raise EngineError(f"engine pipe frame of {size} bytes is over the {_MAX_FRAME}-byte limit")
    body = stream.read(size)
    if len(body) < size:
        return None
    message = _decoder.decode(body)
    if not isinstance(message, dict):
        raise EngineError("engine pipe frame is not a message")
    return message


class FrameWriter:
    """Writes whole frames from any thread."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        body = _encoder.encode(message)
        with self._lock:
            self._stream.write(_HEADER.pack(len(body)) + body)
            self._stream.flush()


def error_to(exc: ContenoxError) -> dict[str, Any]:
    return {**exc.to_dict(), "details": msgspec.to_builtins(exc.details)}


def error_from(data: dict[str, Any]) -> ContenoxError:
    """The error the engine process raised, as the same ContenoxError class (EngineError if unknown)."""
    known = ContenoxError.from_wire(data)
    if known is not None:
        return known
    raw = data.get("details")
    return EngineError(str(data.get("message", "engine error")), **(raw if isinstance(raw, dict) else {}))
