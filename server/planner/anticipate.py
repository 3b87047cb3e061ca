"""Anticipated context: the code around the user's place, laid out so a later question finds it computed.

While the user looks at code, the node retrieves what a question about that place would need and the
engine prefills it after the thread's current prefix (the turn's retrieved segment with no question after
it). A question's turn then lays out its retrieved segment with the anticipated chunks first, in the order
and bytes they were prefilled, so the prefix cache serves them; only what the question adds, and the
question, are new. :func:`layout_retrieved` is that rule; the turn's manifest keeps an
:class:`~contenox.planner.manifest.AnticipationRecord` of it, and explain-context says it in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from contenox.planner.inputs import Chunk
from contenox.planner.manifest import AnticipationRecord

__all__ = ["carried_over", "layout_retrieved"]


def _key(chunk: Chunk) -> tuple[str, str]:
    return chunk.id, chunk.text


def layout_retrieved(question: Sequence[Chunk], anticipated: Sequence[Chunk], *, place: str = "",
                     state: str = "warm", age_s: float = 0.0, count: Callable[[Chunk], int] | None = None,
                     new_tokens: int = 0, pointed: Callable[[Chunk], bool] | None = None,
                     computed: int | None = None) -> tuple[list[Chunk], AnticipationRecord | None]:
    """The turn's retrieved chunks: the anticipated ones first, then the question's others, best first.

    ``computed``: how many of the anticipated chunks, from the first, the prefix cache held when the question came
    (None: all of them). Only those count as anticipated. Of the others (the anticipation was cut short), the ones
    the question chose follow them, in their order and beyond ``new_tokens`` and ``pointed`` (those rules trust the
    anticipation to hold the code near the place: it does not hold these, and a question that lost them lost the
    place's code, measured); the ones it did not choose would cost it their prefill for nothing: left out, named.

    A question that chose none of the anticipated chunks (byte for byte the same) is not about the place: its
    own chunks come as they came, and the anticipation is named unused. One that chose some is about the place:

    - with ``new_tokens`` (and ``count``, a chunk's prompt tokens), every anticipated chunk is laid out (they are
      cached: they cost context, not prefill) and the question adds its own chunks, best first, up to
      ``new_tokens`` tokens of code that was not anticipated; the rest is left out and named; with ``pointed``
      too, only the chunks the question points at (it names them, their file, their frames; ``pointed`` says
      which) are added: the anticipated code already holds what merely ranks near the place, and every added
      token is one the question waits for; the others are named;
    - without (0), anticipated chunks are laid out only while a chunk the question chose follows them, and all
      of the question's own chunks follow.
    """
    if not anticipated:
        return list(question), None
    late: list[Chunk] = []
    if computed is not None and computed < len(anticipated):
        late = list(anticipated[max(0, computed):])
        anticipated = anticipated[: max(0, computed)]
    uncomputed = tuple(c.id for c in late)
    chosen = {_key(c) for c in question}
    last = max((i for i, c in enumerate(anticipated) if _key(c) in chosen), default=-1)
    if last < 0:
        return list(question), AnticipationRecord(place=place, state=state, chunks=(),
                                                  dropped=tuple(c.id for c in anticipated), age_s=age_s,
                                                  uncomputed=uncomputed)
    capped = new_tokens > 0 and count is not None
    first = list(anticipated if capped else anticipated[: last + 1])
    theirs = {_key(c): c for c in question}
    late_chosen = [theirs[_key(c)] for c in late if _key(c) in chosen]
    laid = {_key(c) for c in (*first, *late_chosen)}
    rest = [c for c in question if _key(c) not in laid]
    left_out: list[str] = []
    unpointed: list[str] = []
    if capped and pointed is not None:
        unpointed = [c.id for c in rest if not pointed(c)]
        rest = [c for c in rest if pointed(c)]
    if capped:
        assert count is not None
        kept_rest: list[Chunk] = []
        used = 0
        for chunk in rest:
            size = count(chunk)
            if used + size <= new_tokens:
                kept_rest.append(chunk)
                used += size
            else:
                left_out.append(chunk.id)
        rest = kept_rest
    kept_why = "anticipated (the question did not choose it; kept: it is cached)"
    shown = [msgspec.structs.replace(theirs[_key(c)], reasons=(*theirs[_key(c)].reasons, "anticipated"))
             if _key(c) in theirs else
             msgspec.structs.replace(c, reasons=(*(r for r in c.reasons if r != kept_why), kept_why))
             for c in first]  # (a chunk carried over from an earlier anticipation may say it already)
    record = AnticipationRecord(
        place=place, state=state, chunks=tuple(c.id for c in first),
        used=tuple(c.id for c in first if _key(c) in chosen),
        kept=tuple(c.id for c in first if _key(c) not in chosen),
        dropped=tuple(c.id for c in anticipated[len(first):]), age_s=round(age_s, 1),
        left_out=tuple(left_out), unpointed=tuple(unpointed), new_tokens=new_tokens if capped else 0,
        uncomputed=uncomputed, uncomputed_kept=tuple(c.id for c in late_chosen))
    return shown + late_chosen + rest, record


def carried_over(question: Sequence[Chunk], previous: Sequence[Chunk], count: Callable[[Chunk], int]) -> list[Chunk]:
    """The chunks a new anticipation keeps first, in their order, from the previous one (its chunks the cache
    holds): the run of them, from the first, that saves the new one the most prefill. A chunk the new retrieval
    chose saves its tokens; one it did not choose costs them (context no one asked for, kept only so the cached
    ones after it stay cached). The run ends at its best balance, so it never keeps more unchosen tokens than
    chosen ones; the new anticipation lays it out first (:func:`layout_retrieved`), then its own chunks.

    The user moved within the code, or began typing a question: what was prefilled for the place stays prefilled
    instead of being recomputed in the new ranking's order."""
    chosen = {_key(c) for c in question}
    best, gain, end = 0, 0, 0
    for index, chunk in enumerate(previous, 1):
        gain += count(chunk) if _key(chunk) in chosen else -count(chunk)
        if gain > best:
            best, end = gain, index
    return list(previous[:end])
