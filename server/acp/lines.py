"""Newline-delimited JSON in front of the ACP SDK: bad lines get a JSON-RPC error instead of silence.

The SDK logs and drops a line that is not JSON, and a peer waiting for an answer hangs. This filter
answers such a line with ``-32700``, an over-long line with ``-32600`` (after discarding it in pieces),
and passes every other line through unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging

__all__ = ["MAX_LINE_BYTES", "filtered"]

log = logging.getLogger(__name__)
MAX_LINE_BYTES = 16 * 1024 * 1024


def _reply_error(writer: asyncio.StreamWriter, code: int, message: str) -> None:
    if not writer.is_closing():
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
        writer.write(json.dumps(error).encode() + b"\n")


async def _read_line(reader: asyncio.StreamReader) -> tuple[bytes, int]:
    """The next line (with its newline, or the tail at EOF) and its full length; over-long lines are
    consumed but returned empty."""
    size = 0
    parts: list[bytes] = []
    while True:
        try:
            chunk = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            chunk = await reader.readexactly(exc.consumed)
            done = False
        except asyncio.IncompleteReadError as exc:
            chunk, done = exc.partial, True
        else:
            done = True
        size += len(chunk)
        if size <= MAX_LINE_BYTES:
            parts.append(chunk)
        if done:
            return (b"".join(parts) if size <= MAX_LINE_BYTES else b""), size


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            line, size = await _read_line(source)
            if size == 0:
                break
            if size > MAX_LINE_BYTES:
                _reply_error(writer, -32600, f"message of {size} bytes exceeds {MAX_LINE_BYTES} bytes")
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                _reply_error(writer, -32700, "Parse error: the line is not JSON")
                continue
            if not isinstance(message, dict):
                _reply_error(writer, -32600, "Invalid Request: expected a JSON object")
                continue
            sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.debug("acp input closed: %s", exc)
    finally:
        sink.feed_eof()


def filtered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader,
                                                                                  asyncio.Task[None]]:
    """A reader of the valid lines of ``reader``, and the task that fills it (cancel it when done)."""
    sink = asyncio.StreamReader(limit=MAX_LINE_BYTES + 1)
    return sink, asyncio.ensure_future(_pump(reader, sink, writer))
