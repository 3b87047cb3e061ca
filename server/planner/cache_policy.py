"""Which stable prefixes stay hot, above the engine's LRU prefix cache.

The engine evicts the least recently used 32-token blocks when its pool runs out, so a flood of
low-class material (large logs, exploratory turns in another workspace) pushes out the stable
prefix (system .. pins) of a workspace that merely sat idle for a few turns. The policy keeps a
mirror of the engine's LRU (fed with what the engine computed) and, before a request, predicts
which blocks that request will evict; a kept prefix at risk is re-warmed first (a 1-token
background request makes its blocks most recently used), so the flood evicts older low-class
blocks instead. Prefixes of higher class and more recent use win when not all fit.

Measured on the real default model in tests/planner/test_engine_integration.py.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import msgspec

__all__ = ["CLASS_RANK", "CachePolicy", "WarmOrder", "block_keys"]

CLASS_RANK = {"highest": 0, "high": 1, "medium": 2, "low": 3}


def block_keys(ids: Sequence[int], block: int) -> list[bytes]:
    """Chained keys of the full blocks of ``ids``: a key names a block together with its prefix."""
    digest = hashlib.blake2b(digest_size=16)
    keys = []
    for index in range(len(ids) // block):
        digest.update(b"".join(int(t).to_bytes(4, "little", signed=True) for t in ids[index * block:(index + 1)
                                                                                   * block]))
        keys.append(digest.copy().digest())
    return keys


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
    """Keeps registered stable prefixes warm in an LRU prefix cache of ``capacity_tokens``."""

    def __init__(self, capacity_tokens: int, block_size: int = 32, *, max_kept_fraction: float = 0.5) -> None:
        self.block_size = block_size
        self.capacity_blocks = max(1, capacity_tokens // block_size)
        self.max_kept_blocks = int(self.capacity_blocks * max_kept_fraction)
        """Kept prefixes together never claim more than this share of the cache."""
        self._lru: OrderedDict[bytes, None] = OrderedDict()
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

    def observe(self, token_ids: Sequence[int]) -> None:
        """The engine computed KV for ``token_ids`` (prompt + generated, or a warm-up)."""
        keys = block_keys(token_ids, self.block_size)
        with self._lock:
            for key in reversed(keys):  # like the engine: the head block ends most recent
                self._lru[key] = None
                self._lru.move_to_end(key)
            while len(self._lru) > self.capacity_blocks:
                self._lru.popitem(last=False)
            for kept in self._kept.values():
                if kept.keys and kept.keys[0] in keys:
                    self._clock += 1
                    kept.last_used = self._clock

    # -- decisions -----------------------------------------------------------------------------
    def cached_tokens(self, token_ids: Sequence[int]) -> int:
        """Tokens of ``token_ids`` the mirrored cache holds as a leading run of blocks."""
        with self._lock:
            count = 0
            for key in block_keys(token_ids, self.block_size):
                if key not in self._lru:
                    break
                count += self.block_size
            return count

    def before_request(self, session_id: str, token_ids: Sequence[int], max_new_tokens: int = 0) -> list[WarmOrder]:
        """Kept prefixes this request would evict, to re-warm before it runs (most valuable first)."""
        request = block_keys(token_ids, self.block_size)
        request_set = set(request)
        with self._lock:
            new_blocks = sum(1 for key in request if key not in self._lru)
            new_blocks += -(-max_new_tokens // self.block_size)
            overflow = len(self._lru) + new_blocks - self.capacity_blocks
            if overflow <= 0:
                return []
            victims: set[bytes] = set()
            for key in self._lru:  # oldest first, skipping what the request itself touches
                if len(victims) >= overflow:
                    break
                if key not in request_set:
                    victims.add(key)
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
            lost = [kept for kept in self._kept.values() if any(key not in self._lru for key in kept.keys)]
        lost.sort(key=lambda k: (CLASS_RANK.get(k.cache_class, 9), -k.last_used))
        return [WarmOrder(session_id=k.session_id, token_ids=list(k.token_ids),
                          reason=f"{k.cache_class} prefix of {k.session_id} was evicted") for k in lost]
