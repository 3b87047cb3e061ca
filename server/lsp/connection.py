"""Drive one LanguageServer over one accepted node connection (Content-Length framed JSON-RPC)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from pygls.exceptions import JsonRpcException

from contenox.jsonrpc import ErrorCode, FrameError, FrameTooLarge, error_frame, read_frame
from contenox.node.contract import NodePort

from .features import register
from .server import ContenoxLanguageServer

__all__ = ["serve_connection"]

log = logging.getLogger(__name__)


class _StreamWriter:
    """pygls' writer interface over an asyncio StreamWriter."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def close(self) -> None:
        self._writer.close()


def _error(writer: _StreamWriter, msg_id: Any, code: int, message: str, kind: str) -> None:
    writer.write(error_frame(msg_id, code, message, kind))


async def _next_body(reader: asyncio.StreamReader, writer: _StreamWriter) -> bytes | None:
    """The next message body; None at end of stream (or a broken one). Bad or huge frames are
    answered and skipped; a header block beyond any sane size is answered and ends the connection."""
    while True:
        try:
            return await read_frame(reader)
        except FrameError as exc:
            _error(writer, None, ErrorCode.PARSE_ERROR, f"Parse error: {exc}", "parse_error")
        except FrameTooLarge as exc:
            _error(writer, None, ErrorCode.INVALID_REQUEST, str(exc), "message_too_large")
        except asyncio.LimitOverrunError:
            _error(writer, None, ErrorCode.INVALID_REQUEST, "header too large; closing", "message_too_large")
            return None
        except asyncio.IncompleteReadError:
            return None


def _dispatch(ls: ContenoxLanguageServer, writer: _StreamWriter, body: bytes) -> None:
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than any real message
        _error(writer, None, ErrorCode.PARSE_ERROR, "Parse error: body is not JSON (or nested too deeply)",
               "parse_error")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        _error(writer, raw.get("id") if isinstance(raw, dict) else None, ErrorCode.INVALID_REQUEST, "Invalid Request",
               "invalid_request")
        return
    msg_id = raw.get("id")
    if ls.protocol._shutdown and raw.get("method") not in ("exit", None) and msg_id is not None:
        # LSP: requests after shutdown are answered with InvalidRequest (pygls drops them: the client would hang)
        _error(writer, msg_id, ErrorCode.INVALID_REQUEST, f"the server is shut down; {raw['method']} refused",
               "invalid_request")
        return
    try:
        message = json.loads(body, object_hook=ls.protocol.structure_message)
    except JsonRpcException as exc:
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, exc.code, f"Invalid params for {raw['method']}", "invalid_request")
        return
    except Exception:
        log.exception("%s: undecodable message", ls.client_id)
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, ErrorCode.INVALID_PARAMS, f"Invalid params for {raw['method']}",
                   "invalid_request")
        return
    try:
        ls.protocol.handle_message(message)
    except Exception:
        log.exception("%s: failed to handle a message", ls.client_id)
        if "method" in raw and msg_id is not None:
            _error(writer, msg_id, ErrorCode.INTERNAL_ERROR, "Internal error", "internal_error")


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
            read = asyncio.ensure_future(_next_body(reader, out))
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
        ls.unwatch()
        ls.cancel_all()
        await asyncio.sleep(0)  # let the cancelled handlers run their cleanup
        try:  # a window that went away without closing its files: its unsaved buffers no longer count
            await node.release_overlays(ls.client_id)
        except Exception:
            log.exception("%s: releasing its buffers", ls.client_id)
        try:
            await writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        writer.close()
        log.info("%s: disconnected", ls.client_id)
