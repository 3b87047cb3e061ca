"""explain-context: what the last turn sent, what the cache served, and why the rest was new.

One structure feeds every presentation: the plain table of the CLI (:func:`render_explain`), the
markdown table of LSP hover and ACP (:func:`render_markdown`), and the JSON of ``--json``, the VS Code
panel, the status bar notification and ACP usage updates (:meth:`Explain.to_json`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from contenox.answer.citations import Citations
from contenox.planner.manifest import ChunkRecord, Manifest

__all__ = ["AnticipatedContext", "Citations", "Explain", "ExplainSegment", "ExplainTotals", "cache_facts", "explain_from_manifest",
           "render_explain",
           "render_markdown"]


class ExplainSegment(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    tokens: int
    cached: int
    new: int
    invalidated_by: str | None = None


class ExplainTotals(msgspec.Struct, frozen=True, kw_only=True):
    tokens: int
    cached: int
    new: int
    hit_pct: float


class AnticipatedContext(msgspec.Struct, frozen=True, kw_only=True):
    """explain-context's account of the anticipated part of a turn's retrieved code."""

    place: str
    state: str
    retrieved_tokens: int
    """The turn's retrieved segment."""
    anticipated_tokens: int
    """Of which: the chunks laid out from the anticipation."""
    cached_tokens: int
    """Of the retrieved segment: served by the prefix cache."""
    new_tokens: int
    used: int
    kept: int
    dropped: int
    left_out: int = 0
    """The question's own chunks left out over ``new_cap`` tokens of code not anticipated."""
    new_cap: int = 0
    unpointed: int = 0
    """The question's own chunks left out because it does not point at them."""
    uncomputed: int = 0
    """Anticipated chunks not computed yet when the question came."""
    uncomputed_kept: int = 0
    """Of which: the ones the question chose, laid out after the computed ones (the others left out)."""

    def summary(self) -> str:
        late = (f"{self.uncomputed} anticipated chunk(s) not computed yet when the question came: the "
                f"{self.uncomputed_kept} it chose kept, the rest left out") if self.uncomputed else ""
        if not self.used:
            why = [f"the question chose none of its {self.dropped} chunk(s)"] if self.dropped or not late else []
            why += [late] if late else []
            return (f"anticipated context at {self.place} ({self.state}) not used: {'; '.join(why)}; "
                    f"retrieved: {self.retrieved_tokens:,} tokens, {self.new_tokens:,} new")
        line = (f"retrieved: {self.retrieved_tokens:,} tokens, {self.anticipated_tokens:,} anticipated "
                f"({self.cached_tokens:,} cached), {self.new_tokens:,} new (anticipated at {self.place}, "
                f"{self.state})")
        parts = [f"{self.used} chunk(s) the question also chose"]
        if self.kept:
            parts.append(f"{self.kept} it did not choose kept for the cache")
        if self.dropped:
            parts.append(f"{self.dropped} left out")
        if self.left_out:
            parts.append(f"{self.left_out} of the question's own chunk(s) left out: the question is about the place, "
                         f"so it adds at most {self.new_cap:,} tokens of code not anticipated (anticipate."
                         "question_tokens)")
        if self.unpointed:
            parts.append(f"{self.unpointed} of the question's own chunk(s) it does not point at left out (it names "
                         "neither them nor their file; anticipate.pointed_only)")
        if late:
            parts.append(late)
        return line + "; " + ", ".join(parts)


def _anticipated_context(manifest: Manifest) -> AnticipatedContext | None:
    """The explain line's figures, from the turn's manifest (None: nothing was anticipated)."""
    record = manifest.anticipation
    if record is None:
        return None
    ids = set(record.chunks)
    anticipated = sum(c.tokens for c in manifest.chunks if c.id in ids and c.status == "new")
    try:
        seg = manifest.segment("retrieved")
    except KeyError:  # (a manifest without the segment: nothing retrieved)
        tokens = cached = 0
    else:
        tokens, cached = seg.tokens, seg.predicted_cached
    return AnticipatedContext(place=record.place, state=record.state, retrieved_tokens=tokens,
                              anticipated_tokens=anticipated, cached_tokens=cached, new_tokens=tokens - cached,
                              used=len(record.used), kept=len(record.kept), dropped=len(record.dropped),
                              left_out=len(record.left_out), new_cap=record.new_tokens,
                              unpointed=len(record.unpointed), uncomputed=len(record.uncomputed),
                              uncomputed_kept=len(record.uncomputed_kept))


class Explain(msgspec.Struct, frozen=True, kw_only=True):
    workspace: str
    turn: int
    model: str
    segments: tuple[ExplainSegment, ...]
    totals: ExplainTotals
    predicted_cached_tokens: int
    measured_recomputed_tokens: int | None
    """From the engine's prefill step count (within one chunk), or the serving engine's cached-token count; None
    before the turn ran, or when nothing was measured (a serving engine that reports no cached tokens)."""
    ttft_ms: float | None
    context_size: int
    cache_evidence: str = "steps"
    """What ``measured_recomputed_tokens`` rests on: "steps" (the engine's prefill steps), "server" (the serving
    engine's own cached-token count: ``server_cached_tokens``) or "predicted" (nothing measured)."""
    server_cached_tokens: int | None = None
    """Prompt tokens the serving engine reported it served from its prefix cache."""
    notes: tuple[str, ...] = ()
    """Every budget and layout decision of the turn, in words (what was cut, dropped, summarised, left out)."""
    retrieved: tuple[ChunkRecord, ...] = ()
    """The code retrieved for the question, best first, each with why it was chosen and whether this turn
    entered it into the thread (``new``) or an earlier turn did (``in thread``, cached)."""
    citations: Citations | None = None
    """What the answer names, checked against the workspace (None before an answer exists)."""
    anticipated: AnticipatedContext | None = None
    """The part of the retrieved code prefilled before the question, at the user's place (None: none was)."""

    def to_json(self) -> dict[str, Any]:
        """The Explain JSON of docs/internal-api.md, as a JSON-ready dict."""
        data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(self))
        return data


def explain_from_manifest(manifest: Manifest, *, measured_recomputed_tokens: int | None = None,
                          ttft_ms: float | None = None, cache_evidence: str = "steps",
                          server_cached_tokens: int | None = None) -> Explain:
    segments = tuple(
        ExplainSegment(kind=s.kind, tokens=s.tokens, cached=s.predicted_cached, new=s.predicted_new,
                       invalidated_by=(s.invalidated_by or "partial cache block") if s.predicted_new else None)
        for s in manifest.segments)
    cached = sum(s.cached for s in segments)
    total = manifest.total_tokens
    notes = (*manifest.notes, *(f"{s.kind}: {s.note}" for s in manifest.segments if s.note))
    return Explain(
        workspace=manifest.workspace, turn=manifest.turn, model=manifest.identity.profile_id, segments=segments,
        totals=ExplainTotals(tokens=total, cached=cached, new=total - cached,
                             hit_pct=round(100.0 * cached / total, 1) if total else 0.0),
        predicted_cached_tokens=manifest.predicted_cached_tokens,
        measured_recomputed_tokens=None if cache_evidence == "predicted" else measured_recomputed_tokens,
        ttft_ms=None if ttft_ms is None else round(ttft_ms, 1),
        context_size=manifest.identity.context_size, notes=notes, retrieved=manifest.chunks,
        cache_evidence=cache_evidence, server_cached_tokens=server_cached_tokens,
        anticipated=_anticipated_context(manifest))


def cache_facts(explain: Explain) -> list[str]:
    """The cache figures in words: the block model's prediction, and what was measured (by the engine's steps or
    reported by the serving engine) or that nothing was."""
    facts = [f"predicted cached {explain.predicted_cached_tokens}"]
    measured = explain.measured_recomputed_tokens
    if explain.cache_evidence == "server" and explain.server_cached_tokens is not None:
        facts.append(f"server cached {explain.server_cached_tokens} (measured by the serving engine)")
        facts.append(f"recomputed {measured}" if measured is not None else "recomputed -")
    elif explain.cache_evidence == "predicted":
        facts.append("measured -: the serving engine reports no cached tokens (predicted only)")
    else:
        facts.append(f"measured recomputed {measured}" if measured is not None else "measured recomputed -")
    return facts


def render_explain(explain: Explain) -> str:
    """The explain-context table: segment, tokens, cached, new, invalidated by; totals and hit %."""
    rows = [("segment", "tokens", "cached", "new", "invalidated by")]
    for seg in explain.segments:
        rows.append((seg.kind, str(seg.tokens), str(seg.cached), str(seg.new), seg.invalidated_by or "-"))
    totals = explain.totals
    rows.append(("total", str(totals.tokens), str(totals.cached), str(totals.new), f"hit {totals.hit_pct:.1f}%"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]

    def line(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in (1, 2, 3)] + [row[4]]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths) + "  " + "-" * max(len(r[4]) for r in rows)
    out = [f"workspace {explain.workspace}  turn {explain.turn}  model {explain.model}  "
           f"context {explain.context_size}", "", line(rows[0]), rule]
    out += [line(row) for row in rows[1:-1]]
    out += [rule, line(rows[-1]), ""]
    facts = cache_facts(explain)
    facts.append(f"ttft {explain.ttft_ms:.1f} ms" if explain.ttft_ms is not None else "ttft -")
    out.append(", ".join(facts))
    if explain.anticipated is not None:
        out.append(explain.anticipated.summary())
    if explain.retrieved:
        out += ["", "retrieved (why each chunk was chosen):"]
        out += [f"  {c.id} {c.name}  {c.tokens if c.status == 'new' else 'cached'}"
                f"{' tok' if c.status == 'new' else ''}  [{c.status}]  {'; '.join(c.reasons)}" for c in explain.retrieved]
    if explain.citations is not None:
        out.append(explain.citations.summary())
    out += [f"note: {note}" for note in explain.notes]
    return "\n".join(out) + "\n"


def render_markdown(explain: Explain) -> str:
    """The explain-context of one turn as a markdown table (segments, tokens, cached/new)."""
    totals = explain.totals
    head = (f"**Contenox context** — turn {explain.turn} · {explain.model} · "
            f"{totals.cached}/{totals.tokens} tokens cached ({totals.hit_pct:.1f}%)")
    if explain.cache_evidence == "server" and explain.server_cached_tokens is not None:
        head += f" · server cached {explain.server_cached_tokens}"
    elif explain.cache_evidence == "predicted":
        head += " · predicted (the server reports no cached tokens)"
    if explain.ttft_ms is not None:
        head += f" · TTFT {explain.ttft_ms:.0f} ms"
    lines = [head, "", "| segment | tokens | cached | new | invalidated by |", "|---|---:|---:|---:|---|"]
    for seg in explain.segments:
        lines.append(f"| {seg.kind} | {seg.tokens} | {seg.cached} | {seg.new} | {seg.invalidated_by or ''} |")
    if explain.anticipated is not None:
        lines += ["", explain.anticipated.summary()]
    if explain.retrieved:
        lines += ["", "| retrieved chunk | tokens | status | why |", "|---|---:|---|---|"]
        lines += [f"| `{c.id}` {c.name} | {c.tokens} | {c.status} | {'; '.join(c.reasons)} |"
                  for c in explain.retrieved]
    if explain.citations is not None:
        lines += ["", explain.citations.summary()]
    if explain.notes:
        lines += ["", *(f"- {note}" for note in explain.notes)]
    return "\n".join(lines)
