"""Fit a turn into the profile's tested context minus the output reserve.

Lowest value goes first: old turns (summarised to one line each), then the terminal output (its
tail is kept), then the diff and the repo-map delta (their heads are kept), then the lowest-ranked
retrieved chunks, then the
repo map shrinks, then pinned files are summarised to their outlines, largest first. The system prompt, tools, policy and repo instructions are never cut. What still
does not fit is an :class:`OverContext` that says by how many tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from contenox.errors import OverContext
from contenox.planner.inputs import Pin
from contenox.planner.segments import Draft

__all__ = ["fit_budget", "rough_outline", "trim_head", "trim_tail"]

Count = Callable[[str], int]
_MIN_KEEP = 32
"""A trimmed text smaller than this many tokens is dropped instead."""

_OUTLINE_RE = re.compile(
    r"^\s*(?:@|(?:export\s+|pub(?:\(\w+\))?\s+|public\s+|private\s+|protected\s+|static\s+|async\s+)*"
    r"(?:def|class|function|fn|func|struct|enum|trait|impl|interface|type|module|mod|const|let|var)\b)")


def rough_outline(text: str) -> str:
    """Definition lines of ``text`` (used when the workspace gave no outline)."""
    lines = [line.rstrip() for line in text.splitlines() if _OUTLINE_RE.match(line)]
    return "\n".join(lines) if lines else "\n".join(text.splitlines()[:5])


def trim_tail(text: str, budget: int, count: Count) -> str:
    """The last lines of ``text`` that fit ``budget`` tokens, with a marker of what was cut."""
    return _trim(text, budget, count, keep_end=True)


def trim_head(text: str, budget: int, count: Count) -> str:
    """The first lines of ``text`` that fit ``budget`` tokens, with a marker of what was cut."""
    return _trim(text, budget, count, keep_end=False)


def _trim(text: str, budget: int, count: Count, *, keep_end: bool) -> str:
    if count(text) <= budget:
        return text
    lines = text.splitlines()

    def build(k: int) -> str:
        cut = len(lines) - k
        if keep_end:
            return f"[... {cut} earlier lines cut]\n" + "\n".join(lines[len(lines) - k:])
        return "\n".join(lines[:k]) + f"\n[... {cut} more lines cut]"

    lo, hi = 0, len(lines) - 1  # largest k with count(build(k)) <= budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(build(mid)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return build(lo) if lo > 0 else ""


def fit_budget(draft: Draft, context: int, reserve: int, total: Callable[[Draft], int], count: Count, *,
               repo_map_at: Callable[[int], str] | None, pins: tuple[Pin, ...]) -> int:
    """Shrink ``draft`` in place until ``total(draft) <= context - reserve``; returns the final total."""
    limit = context - reserve
    size = total(draft)
    if size <= limit:
        return size
    dropped = 0
    while draft.history and size > limit:
        draft.history.pop(0)
        if draft.history_chunks:
            draft.history_chunks.pop(0)
        draft.summary.append(draft.history_lines.pop(0) if draft.history_lines else "an earlier turn")
        dropped += 1
        size = total(draft)
    if dropped:
        draft.note("history", f"{dropped} older turn(s) summarised to fit the context (thread rebased)")
    for kind, keep_end in (("terminal", True), ("diff", False), ("map_delta", False)):
        if size <= limit:
            return size
        text: str = getattr(draft, kind)
        if not text:
            continue
        own = count(text)
        budget = own - (size - limit)
        new = _trim(text, budget, count, keep_end=keep_end) if budget >= _MIN_KEEP else ""
        setattr(draft, kind, new)
        draft.note(kind, f"cut to {'last' if keep_end else 'first'} {count(new)} of {own} tokens" if new
                   else f"dropped ({own} tokens)")
        size = total(draft)
    cut = 0
    while draft.retrieved and size > limit:
        draft.retrieved.pop()
        cut += 1
        size = total(draft)
    if cut:
        draft.note("retrieved", f"{cut} lowest-ranked chunk(s) dropped to fit the context")
    if size > limit and draft.repo_map:
        own = count(draft.repo_map)
        budget = own - (size - limit)
        if budget < _MIN_KEEP:
            new = ""
        elif repo_map_at is not None:
            new = repo_map_at(budget)
            if count(new) > budget:
                new = trim_head(new, budget, count)
        else:
            new = trim_head(draft.repo_map, budget, count)
        draft.repo_map = new
        draft.note("repo_map", f"shrunk to {count(new)} of {own} tokens" if new else f"dropped ({own} tokens)")
        size = total(draft)
    if size > limit and draft.pins:
        by_path = {pin.path: pin for pin in pins}
        order = sorted(range(len(draft.pins)), key=lambda i: (-count(draft.pins[i][1]), draft.pins[i][0]))
        for index in order:
            if size <= limit:
                break
            path, text = draft.pins[index]
            pin = by_path.get(path)
            outline = (pin.outline if pin and pin.outline else rough_outline(text)).strip() or "(outline empty)"
            draft.pins[index] = (path, f"# outline only (file too large for the context)\n{outline}")
            draft.note("pins", f"{path} summarised to its outline")
            size = total(draft)
    if size > limit:
        raise OverContext(
            f"this turn needs {size} prompt tokens but {limit} fit ({context} context - {reserve} output "
            f"reserve): over by {size - limit} tokens; shorten the request or unpin files",
            needed=size, limit=limit, context=context, output_reserve=reserve, over_by=size - limit)
    return size
