"""The node's turn queue: fair across clients, one turn at a time per workspace.

Each client's turns run in the order it sent them (FIFO per client). When a slot frees, clients are
served round-robin, so one client queueing many turns cannot starve another. A workspace runs one turn
at a time: that is the node's write coordination (turns on one workspace are serialized, never
interleaved and never refused); a turn waiting for a busy workspace does not hold up other workspaces.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["TurnQueue"]


class _Ticket:
    __slots__ = ("client_id", "future", "granted", "seq", "workspace")

    def __init__(self, client_id: str, workspace: str, seq: int, future: asyncio.Future[None]) -> None:
        self.client_id = client_id
        self.workspace = workspace
        self.seq = seq
        self.future = future
        self.granted = False


class TurnQueue:
    def __init__(self, max_active: int = 1) -> None:
        self.max_active = max(1, max_active)
        self._waiting: OrderedDict[str, deque[_Ticket]] = OrderedDict()
        self._active: list[_Ticket] = []
        self._seq = itertools.count(1)

    @asynccontextmanager
    async def slot(self, client_id: str, workspace: str) -> AsyncIterator[None]:
        """Wait for this client's turn on ``workspace``; hold it for the ``async with`` body."""
        ticket = _Ticket(client_id, workspace, next(self._seq), asyncio.get_running_loop().create_future())
        self._waiting.setdefault(client_id, deque()).append(ticket)
        self._dispatch()
        try:
            await ticket.future
        except BaseException:
            if ticket.granted:
                self._release(ticket)
            else:
                self._forget(ticket)
            raise
        try:
            yield
        finally:
            self._release(ticket)

    def _busy(self) -> set[str]:
        return {t.workspace for t in self._active}

    def _dispatch(self) -> None:
        while len(self._active) < self.max_active:
            busy = self._busy()
            chosen = next((cid for cid, q in self._waiting.items() if q and q[0].workspace not in busy), None)
            if chosen is None:
                return
            queue = self._waiting.pop(chosen)  # re-inserted at the end: round-robin
            ticket = queue.popleft()
            if queue:
                self._waiting[chosen] = queue
            ticket.granted = True
            self._active.append(ticket)
            if not ticket.future.done():
                ticket.future.set_result(None)

    def _release(self, ticket: _Ticket) -> None:
        if ticket in self._active:
            self._active.remove(ticket)
        self._dispatch()

    def _forget(self, ticket: _Ticket) -> None:
        queue = self._waiting.get(ticket.client_id)
        if queue is not None and ticket in queue:
            queue.remove(ticket)
            if not queue:
                del self._waiting[ticket.client_id]
        self._dispatch()

    def full(self) -> bool:
        """Whether a new turn would have to wait for a free slot."""
        return len(self._active) >= self.max_active or any(self._waiting.values())

    def snapshot(self) -> dict[str, Any]:
        """What ``node status`` shows: running turns and waiting turns in arrival order."""
        waiting = sorted((t for q in self._waiting.values() for t in q), key=lambda t: t.seq)
        return {
            "max_active": self.max_active,
            "active": [{"client": t.client_id, "workspace": t.workspace} for t in self._active],
            "waiting": [{"client": t.client_id, "workspace": t.workspace} for t in waiting],
        }
