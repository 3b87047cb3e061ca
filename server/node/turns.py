"""What a protocol adapter hands the node for one turn, and what comes back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import msgspec

__all__ = ["EventCallback", "TurnEvent", "TurnOutcome", "TurnRequest", "TurnState"]

TurnState = Literal["queued", "indexing", "prefill", "decode", "idle", "error"]


class TurnRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One turn for the workspace at ``root`` (any directory inside it; the node resolves the root)."""

    root: str
    prompt: str
    client_id: str = "anonymous"
    selection: str | None = None
    """Selected text (or a file excerpt) the user asked about; goes into the user segment."""
    pins: tuple[str, ...] = ()
    """Extra files pinned for this turn only (paths relative to the root or absolute inside it)."""
    terminal: str = ""
    max_new_tokens: int | None = None
    """None: the config's ``engine.max_new_tokens``."""
    thread: str = "main"
    """Conversation thread inside the workspace (an ACP session, a chat panel); threads share the
    workspace's stable prefix and each keeps its own history."""


class TurnEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A streamed event: a state change (``kind="state"``) or answer text (``kind="chunk"``)."""

    kind: Literal["state", "chunk"]
    text: str = ""
    state: TurnState | None = None


class TurnOutcome(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    finish_reason: str
    """"stop" | "length" (a cancelled turn raises :class:`contenox.errors.Cancelled` instead)."""
    explain: dict[str, Any]
    """The Explain JSON of docs/internal-api.md."""


EventCallback = Callable[[TurnEvent], Awaitable[None] | None]
"""``on_event``: a plain function or a coroutine function; it must not block."""
