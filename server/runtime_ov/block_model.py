"""A mirror of the engine's prefix cache that predicts how many prompt tokens it will serve.

OpenVINO GenAI 2026.4.1 does not report cached tokens. Its prefix cache keys each *full*
32-token block by the hash of every token up to the block's end, keeps freed blocks until the
pool runs out and then evicts the least recently used. This model keeps the same thing: an LRU
ordered set of block keys (a key names a block together with its whole prefix), capacity in
blocks, a request's partial last block holding a slot. ``predict(ids)`` walks the prompt's
blocks while they are present. Checked against the engine's step counts under eviction
(tests/runtime_ov/test_engine.py::test_block_model_follows_eviction).

The engine thread commits every finished request; other threads (the planner's prediction, the cache
policy in :mod:`contenox.node.cache_policy`) only read, through methods that take the model's lock.
No openvino here: the planner may import this module.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

__all__ = ["BlockModel", "block_keys"]


def block_keys(ids: Sequence[int], block: int, limit: int | None = None) -> list[bytes]:
    """Chained keys of the full blocks of ``ids`` (at most ``limit`` blocks): a key names a block together
    with its whole prefix."""
    count = len(ids) // block if limit is None else min(limit, len(ids) // block)
    keys: list[bytes] = []
    digest = hashlib.blake2b(digest_size=16)
    for index in range(count):
        chunk = ids[index * block:(index + 1) * block]
        digest.update(b"".join(int(t).to_bytes(4, "little", signed=True) for t in chunk))
        keys.append(digest.copy().digest())
    return keys


class BlockModel:
    """Thread-safe LRU model of the engine's prefix cache, in blocks of ``block_size`` tokens."""

    def __init__(self, capacity_blocks: int, block_size: int = 32) -> None:
        if capacity_blocks <= 0 or block_size <= 0:
            raise ValueError("capacity_blocks and block_size must be > 0")
        self.capacity_blocks = capacity_blocks
        self.block_size = block_size
        self._blocks: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()
        self._partials = 0

    @property
    def capacity_tokens(self) -> int:
        return self.capacity_blocks * self.block_size

    @property
    def used_blocks(self) -> int:
        with self._lock:
            return len(self._blocks)

    @property
    def used_tokens(self) -> int:
        return self.used_blocks * self.block_size

    def predict(self, ids: Sequence[int]) -> int:
        """Prompt tokens the cache would serve now (full blocks; the last token is always computed)."""
        usable = max(0, len(ids) - 1) // self.block_size
        return self.held(block_keys(ids, self.block_size, usable)) * self.block_size

    def held(self, keys: Sequence[bytes]) -> int:
        """How many of ``keys`` (a chain from :func:`block_keys`) are cached as a leading run."""
        count = 0
        with self._lock:
            for key in keys:
                if key not in self._blocks:
                    break
                count += 1
        return count

    def missing(self, keys: Sequence[bytes]) -> bool:
        """Whether any of ``keys`` was evicted (or never computed)."""
        with self._lock:
            return any(key not in self._blocks for key in keys)

    def pressure(self, ids: Sequence[int], max_new_tokens: int = 0) -> tuple[int, set[bytes]]:
        """What running ``ids`` (plus ``max_new_tokens``) now would do to the cache, without doing it.

        Returns the number of blocks the request adds (its prompt blocks not cached, its partial last
        block and the generated tokens' blocks) and the keys it would evict: the least recently used
        first, never the request's own blocks (the request touches those).
        """
        request = block_keys(ids, self.block_size)
        own = set(request)
        slots = -(-(len(ids) + max(0, max_new_tokens)) // self.block_size)
        with self._lock:
            new_blocks = sum(1 for key in request if key not in self._blocks) + slots - len(request)
            overflow = len(self._blocks) + new_blocks - self.capacity_blocks
            victims: set[bytes] = set()
            if overflow > 0:
                for key in self._blocks:  # oldest first
                    if len(victims) >= overflow:
                        break
                    if key not in own:
                        victims.add(key)
        return new_blocks, victims

    def commit(self, ids: Sequence[int], occupied_tokens: int | None = None) -> None:
        """Record that the engine computed KV for ``ids`` (prompt plus generated tokens, in order).

        ``occupied_tokens`` (default ``len(ids)``) is what the request held in the cache: its
        partial last block takes a slot without being reusable. Every block is touched in order,
        head first, so under pressure a chain loses its head first and with it the whole chain:
        measured on OpenVINO 2026.4.1, a prompt whose blocks were partly evicted recomputes fully.
        """
        keys = block_keys(ids, self.block_size)
        occupied = len(ids) if occupied_tokens is None else max(occupied_tokens, len(ids))
        partial = -(-occupied // self.block_size) - len(keys)
        with self._lock:
            for key in keys:
                self._blocks[key] = None
                self._blocks.move_to_end(key)
            for _ in range(partial):
                self._partials += 1
                self._blocks[b"partial-%d" % self._partials] = None
            while len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
