"""Frames between the node and its engine process: a 4-byte big-endian length, then one msgpack message.

Each message is a typed struct, tagged by ``op`` (node -> engine: :data:`ToEngine`) or ``ev`` (engine -> node:
:data:`FromEngine`), holding the engine's own structs (requests, events, metrics). Blocking reads and writes: each
side runs them on a thread of its own, never on an event loop.
"""

from __future__ import annotations

import struct
import threading
from typing import IO, Any

import msgspec

from contenox.errors import ContenoxError, EngineError
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.requests import FinalEvent, GenerateRequest, PrefillEvent, TokenEvent

__all__ = ["Beat", "Cancel", "Close", "Fail", "Failed", "Final", "FrameWriter", "FromEngine", "Prefill", "Ready",
           "Refused", "RequestStarted", "Start", "Submit", "ToEngine", "Token", "WireError", "error_from", "error_to",
           "read_frame"]


class WireError(msgspec.Struct, frozen=True, kw_only=True):
    """A :class:`ContenoxError` on the pipe (its ``to_dict``)."""

    code: int = -32000
    kind: str = ""
    message: str = ""
    details: dict[str, Any] = msgspec.field(default_factory=dict)


# -- node -> engine -------------------------------------------------------------------------------
class Start(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="start"):
    models_dir: str
    model: str
    options: EngineOptions


class Submit(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="submit"):
    id: int
    request: GenerateRequest


class Cancel(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="cancel"):
    id: int


class Close(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="close"):
    pass


ToEngine = Start | Submit | Cancel | Close


# -- engine -> node -------------------------------------------------------------------------------
class Ready(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="ready"):
    pid: int
    device: str
    num_kv_blocks: int
    kv_bytes_per_token: int


class Failed(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="failed"):
    """The engine could not start."""

    error: WireError


class Refused(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="refused"):
    """The weights failed their background check: every request is refused from now on."""

    error: WireError


class RequestStarted(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="started"):
    id: int
    run_index: int


class Token(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="token"):
    id: int
    event: TokenEvent


class Prefill(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="prefill"):
    id: int
    event: PrefillEvent


class Final(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="final"):
    id: int
    event: FinalEvent
    committed: tuple[list[int], int] | None = None
    """The ids the engine's cache now holds and how many tokens it occupied (the node's block model mirrors it)."""
    run_index: int | None = None


class Fail(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="fail"):
    id: int
    error: WireError


class Beat(msgspec.Struct, frozen=True, kw_only=True, tag_field="ev", tag="beat"):
    """Once a second: the engine process is alive (the node's hang detector)."""


FromEngine = Ready | Failed | Refused | RequestStarted | Token | Prefill | Final | Fail | Beat

_HEADER = struct.Struct(">I")
_MAX_FRAME = 256 << 20
_encoder = msgspec.msgpack.Encoder()
_decoders: dict[Any, msgspec.msgpack.Decoder[Any]] = {}


def read_frame(stream: IO[bytes], kind: Any) -> Any:
    """The next message, decoded as ``kind`` (:data:`ToEngine` or :data:`FromEngine`), or None at the end of the
    stream (the other side is gone); a frame that is not one: :class:`EngineError`."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME:
        raise EngineError(f"engine pipe frame of {size} bytes is over the {_MAX_FRAME}-byte limit")
    body = stream.read(size)
    if len(body) < size:
        return None
    decoder = _decoders.get(kind) or _decoders.setdefault(kind, msgspec.msgpack.Decoder(kind))
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise EngineError(f"engine pipe frame is not a message: {exc}") from exc


class FrameWriter:
    """Writes whole frames from any thread."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: msgspec.Struct) -> None:
        body = _encoder.encode(message)
        with self._lock:
            self._stream.write(_HEADER.pack(len(body)) + body)
            self._stream.flush()


def error_to(exc: ContenoxError) -> WireError:
    return WireError(code=exc.code, kind=exc.kind, message=exc.message, details=msgspec.to_builtins(exc.details))


def error_from(error: WireError) -> ContenoxError:
    """The error the engine process raised, as the same ContenoxError class (EngineError if unknown)."""
    known = ContenoxError.from_wire(msgspec.structs.asdict(error))
    return known if known is not None else EngineError(error.message or "engine error", **error.details)
