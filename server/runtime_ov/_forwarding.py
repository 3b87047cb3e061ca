"""What the engines that forward requests elsewhere (the engine process, a serving engine) share: a request is
submitted and answered through its handle; the prefix cache is predicted by the node's own block model."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from contenox.runtime_ov.block_model import BlockModel
from contenox.runtime_ov.metrics import EngineStats
from contenox.runtime_ov.requests import FinalEvent, Forward, GenerateRequest, Priority, RequestHandle

__all__ = ["ForwardingEngine"]


class ForwardingEngine:
    """Mixed into an engine that sets the attributes below and implements :meth:`submit`."""

    model: Any
    options: Any
    device: str
    blocks: BlockModel
    kv_bytes_per_token: int
    _lock: threading.Lock
    _inflight: dict[int, RequestHandle]
    _sessions: set[str]
    _done: int

    def submit(self, request: GenerateRequest, forward: Forward | None = None) -> RequestHandle:
        raise NotImplementedError

    def generate(self, request: GenerateRequest, timeout: float | None = None) -> FinalEvent:
        return self.submit(request).wait(timeout)

    async def warm(self, session_id: str, token_ids: Sequence[int]) -> FinalEvent:
        """A 1-token request that computes (or re-touches) the prefix in the cache."""
        return await self.submit(GenerateRequest(session_id=session_id, token_ids=list(token_ids), max_new_tokens=1,
                                                 priority=Priority.BACKGROUND)).result()

    def predict_cached(self, token_ids: Sequence[int]) -> int:
        return self.blocks.predict(token_ids)

    def stats(self) -> EngineStats:
        with self._lock:
            depth = len(self._inflight)
            sessions = len(self._sessions)
        return EngineStats(model=self.model.name, device=self.device, cache_capacity_tokens=self.blocks.capacity_tokens,
                           cache_used_tokens=self.blocks.used_tokens, kv_bytes_per_token=self.kv_bytes_per_token,
                           chunk_tokens=self.options.chunk_tokens, queue_depth=max(0, depth - 1), running=depth > 0,
                           requests_done=self._done, sessions=sessions)
