"""The slice of the node core the ACP adapter calls (structural, so a fake node can stand in for tests)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

from contenox.config import Config
from contenox.node.turns import EventCallback, TurnOutcome, TurnRequest

__all__ = ["NodePort", "resolve"]

T = TypeVar("T")


class NodePort(Protocol):
    @property
    def config(self) -> Config: ...

    async def turn(self, request: TurnRequest, on_event: EventCallback) -> TurnOutcome: ...

    def explain(self, root: str) -> dict[str, Any] | Awaitable[dict[str, Any] | None] | None: ...

    def pin(self, root: str, path: str) -> Any: ...

    def unpin(self, root: str, path: str) -> Any: ...


async def resolve(value: T | Awaitable[T]) -> T:
    """Node methods may be plain or coroutine functions; adapters accept both."""
    if inspect.isawaitable(value):
        return await value
    return value
