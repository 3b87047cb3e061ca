"""A workspace's long-lived session with the engine: what it sent and what is still cached.

A session remembers the token ids of its last request (prompt plus answer). The engine's cache
is shared by all sessions and evicts by LRU; the session asks the block model how much of a
prompt is still cached and can re-touch (warm) its prefix with a 1-token background request.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contenox.runtime_ov.engine import Engine
    from contenox.runtime_ov.requests import FinalEvent

__all__ = ["Session"]


class Session:
    def __init__(self, session_id: str, engine: Engine) -> None:
        self.id = session_id
        self._engine = engine
        self._lock = threading.Lock()
        self._sent: list[int] = []

    @property
    def sent(self) -> list[int]:
        """Token ids of the last finished request of this session (prompt + generated)."""
        with self._lock:
            return list(self._sent)

    def prefix_lookup(self, token_ids: Sequence[int]) -> int:
        """Tokens of ``token_ids`` the engine's cache would serve now."""
        return self._engine.predict_cached(token_ids)

    def common_prefix(self, token_ids: Sequence[int]) -> int:
        """Length of the longest common prefix with what this session last sent."""
        with self._lock:
            sent = self._sent
            n = min(len(sent), len(token_ids))
            i = 0
            while i < n and sent[i] == token_ids[i]:
                i += 1
            return i

    def commit(self, token_ids: Sequence[int]) -> None:
        """Record what this session's request computed (the engine calls it when a request ends)."""
        with self._lock:
            self._sent = [int(t) for t in token_ids]

    def evict(self) -> None:
        """Forget this session. Its blocks stay in the engine's cache until LRU evicts them
        (OpenVINO has no call to drop blocks)."""
        with self._lock:
            self._sent = []
        self._engine._forget_session(self.id)

    async def warm(self, prefix: Sequence[int] | None = None) -> FinalEvent | None:
        """Re-touch ``prefix`` (default: what the session last sent) with a 1-token background request."""
        ids = list(prefix) if prefix is not None else self.sent
        if not ids:
            return None
        return await self._engine.warm(self.id, ids)
