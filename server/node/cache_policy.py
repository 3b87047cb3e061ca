"""Which stable prefixes stay hot, above the engine's LRU prefix cache.

The engine evicts the least recently used 32-token blocks when its pool runs out, so a flood of
low-class material (large logs, exploratory turns in another workspace) pushes out the stable
prefix (system .. pins) of a workspace that merely sat idle for a few turns. The policy reads the
engine's own mirror of its cache (:class:`~contenox.runtime_ov.block_model.BlockModel`, committed by the
engine thread after every request, warm-ups included) and, before a request, asks it which blocks that
request will evict; a kept prefix at risk is re-warmed first (a 1-token background request makes its
blocks most recently used), so the flood evicts older low-class blocks instead. Prefixes of higher class
and more recent use win when not all fit.

Measured on the real default model in tests/planner/test_planner_engine.py. It lives with the node's warmer
(:mod:`contenox.node.warming`), its one user: it manages the engine's cache, not the prompt the planner assembles.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import msgspec

from contenox.runtime_ov.block_model import BlockModel, block_keys

__all__ = ["CLASS_RANK", "CachePolicy", "WarmOrder"]

CLASS_RANK = {"highest": 0, "high": 1, "medium": 2, "low": 3}


class WarmOrder(msgspec.Struct, frozen=True, kw_only=True):
    """Ask the engine to re-touch ``token_ids`` (``await engine.warm(session_id, token_ids)``)."""

    session_id: str
    token_ids: list[int]
    reason: str


class _Kept(msgspec.Struct, kw_only=True):
    session_id: str
    token_ids: list[int]
    keys: list[bytes]
    cache_class: str
    last_used: int


class CachePolicy:
    """Keeps registered stable prefixes warm in the prefix cache that ``blocks`` mirrors.

    ``blocks`` is the engine's block model (``engine.blocks``): the policy keeps no mirror of its own.
    """

    def __init__(self, blocks: BlockModel, *, max_kept_fraction: float = 0.5) -> None:
        self.blocks = blocks
        self.block_size = blocks.block_size
        self.capacity_blocks = blocks.capacity_blocks
        self.max_kept_blocks = int(self.capacity_blocks * max_kept_fraction)
        """Kept prefixes together never claim more than this share of the cache."""
        self._kept: dict[str, _Kept] = {}
        self._clock = 0
        self._lock = threading.Lock()

    # -- what the node tells the policy ------------------------------------------------------
    def keep(self, session_id: str, token_ids: Sequence[int], cache_class: str = "high") -> None:
        """Register (or refresh) the stable prefix of an active workspace session."""
        ids = [int(t) for t in token_ids]
        with self._lock:
            self._clock += 1
            self._kept[session_id] = _Kept(session_id=session_id, token_ids=ids,
                                           keys=block_keys(ids, self.block_size), cache_class=cache_class,
                                           last_used=self._clock)

    def release(self, session_id: str) -> None:
        """The workspace went idle or closed: its prefix competes like any other blocks."""
        with self._lock:
            self._kept.pop(session_id, None)

    # -- decisions -----------------------------------------------------------------------------
    def before_request(self, session_id: str, token_ids: Sequence[int], max_new_tokens: int = 0) -> list[WarmOrder]:
        """Kept prefixes this request would evict, to re-warm before it runs (most valuable first)."""
        request_set = set(block_keys(token_ids, self.block_size))
        new_blocks, victims = self.blocks.pressure(token_ids, max_new_tokens)
        if not victims:
            return []
        with self._lock:
            at_risk = [kept for kept in self._kept.values()
                       if kept.session_id != session_id and kept.keys and not request_set.issuperset(kept.keys)
                       and any(key in victims for key in kept.keys)]
        at_risk.sort(key=lambda k: (CLASS_RANK.get(k.cache_class, 9), -k.last_used))
        room = min(self.max_kept_blocks, self.capacity_blocks - new_blocks)
        orders = []
        for kept in at_risk:
            if len(kept.keys) > room:
                continue
            room -= len(kept.keys)
            orders.append(WarmOrder(session_id=kept.session_id, token_ids=list(kept.token_ids),
                                    reason=f"{kept.cache_class} prefix of {kept.session_id} "
                                           f"({len(kept.keys) * self.block_size} tokens) would be evicted"))
        return orders

    def after_request(self) -> list[WarmOrder]:
        """Kept prefixes already (partly) evicted: re-prefill them in the background while idle."""
        with self._lock:
            kept = list(self._kept.values())
        lost = [k for k in kept if self.blocks.missing(k.keys)]
        lost.sort(key=lambda k: (CLASS_RANK.get(k.cache_class, 9), -k.last_used))
        return [WarmOrder(session_id=k.session_id, token_ids=list(k.token_ids),
                          reason=f"{k.cache_class} prefix of {k.session_id} was evicted") for k in lost]
