"""Keeping workspaces' stable prefixes warm in the engine's prefix cache.

Wraps the node's :class:`~contenox.node.cache_policy.CachePolicy`, which reads the engine's block model (the
engine thread records every request there, warm-ups included, so nothing is fed from here): before a
turn, kept prefixes the turn would evict are re-touched first; after it, prefixes already evicted are
re-prefilled in the background; after a restart, persisted sessions' prefixes are warmed again. All
warm-ups are 1-token BACKGROUND requests (``engine.warm``); a failed warm-up is logged, never fatal.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contenox.errors import ContenoxError
from contenox.node.tasks import TaskSet

if TYPE_CHECKING:
    from contenox.node.cache_policy import CachePolicy, WarmOrder
    from contenox.runtime_ov import EngineLike

__all__ = ["Warmer"]

log = logging.getLogger(__name__)


class Warmer:
    def __init__(self, engine: EngineLike) -> None:
        from contenox.node.cache_policy import CachePolicy

        self.engine = engine
        self.policy: CachePolicy = CachePolicy(engine.blocks)
        self._background = TaskSet()
        self.warmed = 0

    async def warm(self, session_id: str, token_ids: Sequence[int], reason: str = "") -> bool:
        ids = list(token_ids)
        if not ids:
            return False
        try:
            await self.engine.warm(session_id, ids)
        except ContenoxError as exc:
            log.warning("warm-up of %s failed: %s", session_id, exc.message)
            return False
        self.warmed += 1
        log.info("warmed %s (%d tokens)%s", session_id, len(ids), f": {reason}" if reason else "")
        return True

    async def before_turn(self, session_id: str, stable_prefix: Sequence[int], token_ids: Sequence[int],
                          max_new_tokens: int) -> None:
        """Keep this session's prefix; re-touch other kept prefixes this turn would evict."""
        self.policy.keep(session_id, stable_prefix)
        for order in self.policy.before_request(session_id, token_ids, max_new_tokens):
            await self.warm(order.session_id, order.token_ids, order.reason)

    def after_turn(self) -> None:
        """A turn ended: re-prefill kept prefixes it evicted, in the background."""
        self.spawn(self.policy.after_request())

    def spawn(self, orders: Sequence[WarmOrder]) -> None:
        if not orders:
            return
        self._background.spawn(self._run(list(orders)), "node-warm")

    async def _run(self, orders: list[WarmOrder]) -> None:
        for order in orders:
            await self.warm(order.session_id, order.token_ids, order.reason)

    async def close(self) -> None:
        await self._background.close()
