"""The ACP SDK's message transport over one node connection, which never waits on a client that is gone.

The SDK's own newline transport queues every write behind one sender task that drains the socket; when a client
dropped mid-turn, closing the SDK connection waited for that drain to reach a peer that no longer read (the
node's 5 s close timeout, then an abandoned close task). Here each message is written and drained by its
sender; once the client is gone (``drop()``, or a write that failed) writes are discarded and drains return at
once, so the turn and the connection end without waiting on it. Incoming lines come from
:func:`contenox.acp.lines.filtered`, which already answered what is not a JSON object.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

__all__ = ["PeerTransport"]

log = logging.getLogger(__name__)


class PeerTransport:
    """An ``acp`` ``Transport``: JSON-RPC messages as lines on ``writer``, read from ``lines``."""

    def __init__(self, lines: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._lines = lines
        self._writer = writer
        self.gone = False
        """The client is gone: what is sent now is dropped."""

    async def send(self, message: dict[str, Any]) -> None:
        if self.gone:
            log.debug("dropped a message to a client that is gone: %s", message.get("method") or message.get("id"))
            return
        self._writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        try:
            await self._writer.drain()  # returns when drop() aborts the transport under a blocked drain
        except ConnectionError as exc:
            log.debug("the client stopped reading: %s", exc)
            self.drop()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._lines.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:  # the filter passes only JSON objects; anything else is not for us
                continue
            if isinstance(message, dict):
                return message

    async def close(self) -> None:
        self.gone = True

    def drop(self) -> None:
        """The client is gone: discard what is still buffered for it and end the socket now."""
        self.gone = True
        self._writer.transport.abort()
