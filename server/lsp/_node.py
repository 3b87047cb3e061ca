"""The slice of the node core the LSP adapter calls (structural, so a fake node can stand in for tests)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

from contenox.node.turns import EventCallback, TurnOutcome, TurnRequest

__all__ = ["NodePort", "resolve"]

T = TypeVar("T")
JsonDict = dict[str, Any]


class NodePort(Protocol):
    async def turn(self, request: TurnRequest, on_event: EventCallback) -> TurnOutcome: ...

    def explain(self, root: str) -> JsonDict | Awaitable[JsonDict | None] | None: ...

    def pin(self, root: str, path: str) -> Any: ...

    def unpin(self, root: str, path: str) -> Any: ...

    def related(self, root: str, text: str) -> list[JsonDict] | Awaitable[list[JsonDict]]: ...

    def symbol_info(self, root: str, name: str) -> JsonDict | Awaitable[JsonDict | None] | None: ...

    def workspace_overlay(self, root: str, path: str, text: str | None) -> Any: ...


async def resolve(value: T | Awaitable[T]) -> T:
    """Node methods may be plain or coroutine functions; adapters accept both."""
    if inspect.isawaitable(value):
        return await value
    return value
