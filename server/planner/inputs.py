"""What the node hands the planner for one turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

__all__ = ["Pin", "PlannerInputs", "as_pin"]


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    """A pinned file: its text, and optionally its outline (used when the budget is short)."""

    path: str
    """Relative to the workspace root."""
    text: str
    outline: str = ""
    """Signatures only (from the workspace's symbol index); empty: the planner derives a rough one."""


class PlannerInputs(msgspec.Struct, frozen=True, kw_only=True):
    user: str
    """This turn's request (the prompt, with any selection the node folded in)."""
    workspace: str = ""
    """Absolute workspace root (shown by explain-context)."""
    instructions: Sequence[tuple[str, str]] = ()
    """(relative path, text) of AGENTS.md, CLAUDE.md, ... as ``Workspace.instructions()`` returns them."""
    repo_map: str = ""
    repo_map_at: Callable[[int], str] | None = None
    """Rebuilds the repo map for a smaller token budget (``lambda n: ws.repo_map(n, count)``); None:
    the planner cuts ``repo_map`` at line ends, keeping its top (the highest-ranked entries)."""
    pins: Sequence[Pin | tuple[str, str]] = ()
    """Pinned files, as :class:`Pin` or ``(path, text)``."""
    history: Sequence[tuple[str, str]] | None = None
    """(user, answer) of earlier turns of this thread, oldest first, when the caller keeps them; None:
    the planner's own record of the thread (what ``record()`` persisted). Either way the planner
    windows it (at most ``max_history_turns``, moving in jumps so the history stays append-only)."""
    diff: str = ""
    """Working tree + index vs HEAD, unified diff."""
    terminal: str = ""
    """Terminal or test output the user attached; when short of budget its tail is kept."""
    thread: str = "main"
    """Conversation thread inside the workspace (an ACP session, the chat panel, the CLI)."""
    change_reasons: dict[str, str] = msgspec.field(default_factory=dict)
    """Optional words for why a segment changed, by segment kind (``{"repo_map": "repo map changed: 3
    files"}`` from ``ChangeEvent``); without them the planner names the change itself."""


def as_pin(pin: Pin | tuple[str, str]) -> Pin:
    return pin if isinstance(pin, Pin) else Pin(path=pin[0], text=pin[1])
