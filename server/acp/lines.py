"""Newline-delimited JSON in front of the ACP SDK: bad lines get a JSON-RPC error instead of silence.

The SDK logs and drops a line that is not JSON, and a peer waiting for an answer hangs. This filter
answers such a line with a parse error, an over-long line with ``INVALID_REQUEST`` (after discarding
it in pieces), and passes every other line through unchanged. The wire rules are
:mod:`contenox.jsonrpc`'s.
"""

from __future__ import annotations

import asyncio
import json
import logging

from contenox.jsonrpc import MAX_MESSAGE_BYTES, ErrorCode, FrameTooLarge, error_line, read_line

__all__ = ["filtered"]

log = logging.getLogger(__name__)


def _reply_error(writer: asyncio.StreamWriter, code: int, message: str, kind: str) -> None:
    if not writer.is_closing():
        writer.write(error_line(None, code, message, kind))


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            try:
                line = await read_line(source)
            except FrameTooLarge as exc:
                _reply_error(writer, ErrorCode.INVALID_REQUEST, str(exc), "message_too_large")
                continue
            if line is None:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nested deeper than any real message
                _reply_error(writer, ErrorCode.PARSE_ERROR, "Parse error: the line is not JSON (or nested too "
                             "deeply)", "parse_error")
                continue
            if not isinstance(message, dict):
                _reply_error(writer, ErrorCode.INVALID_REQUEST, "Invalid Request: expected a JSON object",
                             "invalid_request")
                continue
            sink.feed_data(line + b"\n")
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.debug("acp input closed: %s", exc)
    finally:
        sink.feed_eof()


def filtered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader,
                                                                                  asyncio.Task[None]]:
    """A reader of the valid lines of ``reader``, and the task that fills it (cancel it when done)."""
    sink = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES + 1)
    return sink, asyncio.ensure_future(_pump(reader, sink, writer))
