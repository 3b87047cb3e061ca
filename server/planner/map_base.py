"""The repo map as a base plus deltas: the map stays byte-identical while the code is edited.

A workspace keeps one base map (rendered once, so the prefix cache keeps it and every turn after it) and
the definition lines it was made from. Each turn reports the definitions added or removed since the base
as a small delta that goes into the thread (the part of the turn that changes), not into the map. The
base is rebuilt deliberately: when the delta outgrows ``planner.repo_map_delta_tokens``, when the pins
(which rank the map) or the map budget change; the rebuild is named in explain-context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

__all__ = ["MapBase", "MapChange", "changes_since", "render_changes"]

Count = Callable[[str], int]


class MapChange(msgspec.Struct, frozen=True, kw_only=True):
    """One file's definition lines added and removed since the base map."""

    path: str
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def symbols(self) -> int:
        return len(self.added) + len(self.removed)


def changes_since(base: dict[str, tuple[str, ...]], now: dict[str, tuple[str, ...]]) -> list[MapChange]:
    """Per file, in path order, the definition lines that differ between ``base`` and ``now``."""
    out = []
    for path in sorted(set(base) | set(now)):
        before, after = base.get(path, ()), now.get(path, ())
        if before == after:
            continue
        old, new = set(before), set(after)
        out.append(MapChange(path=path, added=tuple(x for x in after if x not in old),
                             removed=tuple(x for x in before if x not in new)))
    return [c for c in out if c.symbols]


def render_changes(changes: Sequence[MapChange]) -> str:
    """The delta as the model reads it: per file, ``+`` added and ``-`` removed definition lines."""
    lines = []
    for change in changes:
        gone = not change.added and change.removed
        lines.append(f"{change.path}:" + (" (no definitions left)" if gone else ""))
        lines += [f"+ {line}" for line in change.added] + [f"- {line}" for line in change.removed]
    return "\n".join(lines)


class MapBase:
    """One workspace's base map and what it was made from (mutable; the node keeps one per workspace)."""

    def __init__(self) -> None:
        self.text = ""
        self.signatures: dict[str, tuple[str, ...]] = {}
        self.commit: str | None = None
        self.key: tuple[object, ...] | None = None
        """(pins, budget) the base was rendered for."""
        self.rebuilds = 0

    def current(self, key: tuple[object, ...], head: str | None, signatures: dict[str, tuple[str, ...]],
                render: Callable[[], str], count: Count, delta_budget: int) -> tuple[str, list[MapChange], list[str]]:
        """(base map text, changes since it, notes) for a turn; rebuilds the base when it must."""
        notes: list[str] = []
        changes = changes_since(self.signatures, signatures) if self.key is not None else []
        why = ""
        if self.key is None:
            why = "first map of this workspace"
        elif key != self.key:
            why = "pins or map budget changed"
        elif changes and count(render_changes(changes)) > delta_budget:
            why = (f"{sum(c.symbols for c in changes)} changed symbols outgrew the delta budget "
                   f"({delta_budget} tokens)")
        if why:
            self.text, self.signatures, self.commit, self.key = render(), signatures, head, key
            changes = []
            if self.rebuilds:
                notes.append(f"repo map rebased: {why}")
            self.rebuilds += 1
        return self.text, changes, notes

    def label(self, changes: Sequence[MapChange]) -> str:
        """``base @abc1234 + 3 changed symbols``"""
        at = f"@{self.commit[:7]}" if self.commit else "(no git)"
        n = sum(c.symbols for c in changes)
        return f"base {at}" + (f" + {n} changed symbol{'s' if n != 1 else ''}" if n else "")
