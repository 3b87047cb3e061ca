"""Markdown and notification payloads built from the node's Explain JSON and symbol info."""

from __future__ import annotations

from typing import Any

__all__ = ["cache_status", "explain_markdown", "hover_markdown", "symbol_markdown"]

JsonDict = dict[str, Any]


def explain_markdown(explain: JsonDict) -> str:
    """The explain-context of one turn as a markdown table (segments, tokens, cached/new)."""
    totals = explain.get("totals", {})
    head = (f"**Contenox context** — turn {explain.get('turn', '?')} · {explain.get('model', '?')} · "
            f"{totals.get('cached', 0)}/{totals.get('tokens', 0)} tokens cached "
            f"({float(totals.get('hit_pct', 0.0)):.1f}%)")
    ttft = explain.get("ttft_ms")
    if isinstance(ttft, int | float):
        head += f" · TTFT {ttft:.0f} ms"
    lines = [head, "", "| segment | tokens | cached | new | invalidated by |", "|---|---:|---:|---:|---|"]
    for seg in explain.get("segments", []):
        lines.append(f"| {seg.get('kind', '?')} | {seg.get('tokens', 0)} | {seg.get('cached', 0)} | "
                     f"{seg.get('new', 0)} | {seg.get('invalidated_by') or ''} |")
    return "\n".join(lines)


def _location(item: Any) -> str:
    if isinstance(item, dict):
        path = item.get("path") or item.get("file") or "?"
        line = item.get("line")
        return f"`{path}:{line}`" if line is not None else f"`{path}`"
    return f"`{item}`"


def symbol_markdown(name: str, info: JsonDict) -> str:
    """The symbol's place in the repo graph: definitions, referencing files, rank."""
    lines = [f"**`{name}`** in the repo graph"]
    rank = info.get("rank")
    if rank is not None:
        lines.append(f"- rank: {rank}")
    defs = info.get("definitions") or []
    if defs:
        lines.append("- defined in: " + ", ".join(_location(d) for d in defs[:5]))
    refs = info.get("referencing_files") or info.get("referenced_by") or []
    if refs:
        more = f" (+{len(refs) - 8} more)" if len(refs) > 8 else ""
        lines.append("- referenced from: " + ", ".join(_location(r) for r in refs[:8]) + more)
    return "\n".join(lines)


def hover_markdown(explain: JsonDict | None, name: str | None, info: JsonDict | None) -> str | None:
    parts = []
    if name and info:
        parts.append(symbol_markdown(name, info))
    if explain:
        parts.append(explain_markdown(explain))
    return "\n\n---\n\n".join(parts) if parts else None


def cache_status(workspace: str, explain: JsonDict | None, state: str) -> JsonDict:
    """The ``$/contenox/cacheStatus`` payload (docs/internal-api.md)."""
    totals = (explain or {}).get("totals", {})
    return {
        "workspace": (explain or {}).get("workspace", workspace),
        "cachedTokens": int(totals.get("cached", 0)),
        "newTokens": int(totals.get("new", 0)),
        "promptTokens": int(totals.get("tokens", 0)),
        "hitPct": float(totals.get("hit_pct", 0.0)),
        "ttftMs": (explain or {}).get("ttft_ms"),
        "state": state,
    }
