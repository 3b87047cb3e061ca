"""Hover markdown and the ``$/contenox/cacheStatus`` payload, from the node's typed results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contenox.planner import Explain

if TYPE_CHECKING:
    from contenox.workspace import SymbolInfo

__all__ = ["cache_status", "hover_markdown", "last_turn_markdown", "symbol_markdown"]


def symbol_markdown(info: SymbolInfo) -> str:
    """The symbol's place in the repo graph: definitions, referencing files, rank."""
    lines = [f"**`{info.name}`** in the repo graph",
             f"- rank: {info.rank_position} of {info.files_ranked} files"]
    if info.definitions:
        lines.append("- defined in: " + ", ".join(f"`{d.path}:{d.line}`" for d in info.definitions[:5]))
    refs = info.referenced_by
    if refs:
        more = f" (+{len(refs) - 8} more)" if len(refs) > 8 else ""
        lines.append("- referenced from: " + ", ".join(f"`{r}`" for r in refs[:8]) + more)
    return "\n".join(lines)


def last_turn_markdown(explain: Explain, word: str | None) -> str:
    """One line on the last turn (cache share, retrieved code, citations) and, when the hovered name was
    part of its retrieved code, why it was chosen; the full table is the panel's (``contenox/explainContext``)."""
    t = explain.totals
    facts = [f"last turn {explain.turn}: {t.cached}/{t.tokens} tokens cached ({t.hit_pct:.0f}%)"]
    if explain.retrieved:
        facts.append(f"{len(explain.retrieved)} retrieved chunk(s)")
    if explain.citations is not None:
        facts.append(explain.citations.summary())
    lines = ["_" + " · ".join(facts) + "_"]
    if word:
        for chunk in explain.retrieved:
            if chunk.name.rsplit(".", 1)[-1] == word:
                lines.append(f"`{chunk.id}` ({chunk.name}) was in that turn's context: {'; '.join(chunk.reasons)}")
    return "\n\n".join(lines)


def hover_markdown(explain: Explain | None, info: SymbolInfo | None, word: str | None = None) -> str | None:
    """The hovered symbol's place in the repo graph, then a line on the last turn (not the whole table)."""
    parts = []
    if info is not None:
        parts.append(symbol_markdown(info))
    if explain is not None:
        parts.append(last_turn_markdown(explain, word))
    return "\n\n---\n\n".join(parts) if parts else None


def cache_status(workspace: str, explain: Explain | None, state: str) -> dict[str, Any]:
    """The ``$/contenox/cacheStatus`` payload (docs/internal-api.md)."""
    if explain is None:
        return {"workspace": workspace, "cachedTokens": 0, "newTokens": 0, "promptTokens": 0, "hitPct": 0.0,
                "ttftMs": None, "state": state}
    totals = explain.totals
    return {"workspace": explain.workspace, "cachedTokens": totals.cached, "newTokens": totals.new,
            "promptTokens": totals.tokens, "hitPct": totals.hit_pct, "ttftMs": explain.ttft_ms, "state": state}
