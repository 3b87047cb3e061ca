"""What the planner is handed for one turn, and how a turn's inputs are gathered from a workspace.

:func:`build_inputs` and :func:`change_reasons` are the one way a turn is assembled: the node calls
them for every turn and the benchmark's replay calls them to build turns the node's way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from contenox.config import PlannerConfig

if TYPE_CHECKING:
    from contenox.workspace import ChangeEvent, Workspace

__all__ = ["Pin", "PlannerInputs", "as_pin", "build_inputs", "change_reasons"]


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
    prompt: str = ""
    """The user's own words, as a replayed thread shows them (empty: ``user``)."""
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


def change_reasons(events: Sequence[ChangeEvent]) -> dict[str, str]:
    """Why each planner segment changed since the last turn, in words, from the workspace's events."""
    paths: dict[str, list[str]] = {}
    for event in events:
        for kind in event.segments:
            paths.setdefault(str(kind), []).append(f"{event.kind} {event.path}".strip())
    reasons: dict[str, str] = {}
    for segment, items in paths.items():
        shown = ", ".join(items[:3]) + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
        reasons[segment] = f"{segment.replace('_', ' ')} changed: {shown}"
    return reasons


def build_inputs(config: PlannerConfig, workspace: Workspace, count: Callable[[str], int], *, root: Path,
                 prompt: str, selection: str | None, pins: Sequence[str], terminal: str, thread: str,
                 reasons: dict[str, str]) -> PlannerInputs:
    """The planner's inputs for one turn (blocking: reads files and git state).

    The repo map is ranked by the pinned files only, never by the prompt's words: it must stay
    byte-identical from turn to turn so the prefix cache keeps it. ``count`` is the model's token counter.
    """
    user = prompt if not selection else f"{prompt}\n\n```\n{selection}\n```"
    pinned = tuple(pins)

    def repo_map_at(budget: int) -> str:
        return workspace.repo_map(budget, count, pinned=pinned)

    return PlannerInputs(
        user=user,
        prompt=prompt,
        workspace=str(root),
        instructions=workspace.instructions(),
        repo_map=repo_map_at(config.repo_map_tokens),
        repo_map_at=repo_map_at,
        pins=[(path, workspace.read_text(path)) for path in pinned],
        diff=workspace.diff_text(),
        terminal=terminal,
        thread=thread,
        change_reasons=reasons,
    )
