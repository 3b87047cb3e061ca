"""Drive one LanguageServer over one accepted node connection (Content-Length framed JSON-RPC)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from pygls.exceptions import JsonRpcException

from ._node import NodePort
from .features import register
from .server import ContenoxLanguageServer

__all__ = ["MAX_MESSAGE_BYTES", "serve_connection"]

log = logging.getLogger(__name__)
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_DISCARD_CHUNK = 1 << 20


class _StreamWriter:
    """pygls' writer interface over an asyncio StreamWriter."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def close(self) -> None:
        self._writer.close()


def _error(writer: _StreamWriter, msg_id: Any, code: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body.encode()) + body.encode())


async def _read_frame(reader: asyncio.StreamReader, writer: _StreamWriter) -> bytes | None:
    """The next message body; None at end of stream. Bad or huge frames are answered and skipped."""
    while True:
        length: int | None = None
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # a header line longer than the stream's limit: skipped
                line = b"X-Skipped: header line too long\r\n"
            if not line:
                return None
            if not line.strip():
                break
            name, sep, value = line.partition(b":")
            if sep and name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or length < 0:
            _error(writer, None, -32700, "Parse error: missing or invalid Content-Length header")
            continue
        if length > MAX_MESSAGE_BYTES:
            remaining = length
            while remaining:
                chunk = await reader.read(min(remaining, _DISCARD_CHUNK))
                if not chunk:
                    return None
                remaining -= len(chunk)
            _error(writer, None, -32600, f"message of {length} bytes exceeds {MAX_MESSAGE_BYTES} bytes")
            continue
        try:
            return await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return None


def _dispatch(ls: ContenoxLanguageServer, writer: _StreamWriter, body: bytes) -> None:
    try:
        raw = json.loads(body)
    except ValueError:
        _error(writer, None, -32700, "Parse error: body is not JSON")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        _error(writer, raw.get("id") if isinstance(raw, dict) else None, -32600, "Invalid Request")
        return
    msg_id = raw.get("id")
    try:
        message = json.loads(body, object_hook=ls.protocol.structure_message)
    except JsonRpcException as exc:
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, exc.code, f"Invalid params for {raw['method']}")
        return
    except Exception:
        log.exception("%s: undecodable message", ls.client_id)
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, -32602, f"Invalid params for {raw['method']}")
        return
    try:
        ls.protocol.handle_message(message)
    except Exception:
        log.exception("%s: failed to handle a message", ls.client_id)
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, -32603, "Internal error")


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, node: NodePort) -> None:
    """Serve LSP on this connection until the client exits or disconnects; its running turns are cancelled."""
    ls = ContenoxLanguageServer(node)
    register(ls)
    out = _StreamWriter(writer)
    ls.protocol.set_writer(out)
    log.info("%s: connected", ls.client_id)
    closed = asyncio.ensure_future(ls.closed.wait())
    try:
        while not ls.closed.is_set():
            read = asyncio.ensure_future(_read_frame(reader, out))
            await asyncio.wait({read, closed}, return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()
                break
            body = read.result()
            if body is None:
                break
            _dispatch(ls, out, body)
    finally:
        closed.cancel()
        ls.cancel_all()
        await asyncio.sleep(0)  # let the cancelled handlers run their cleanup
        try:
            await writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        writer.close()
        log.info("%s: disconnected", ls.client_id)
