"""The turn manifest: what was sent, segment by segment, and whether the cache can serve it.

A segment is a cache hit only if every identity field matches the previous turn's manifest and
the segment and all segments before it kept their token hash and position. Any identity mismatch
is a full miss with the reason named ("tokenizer digest changed").
"""

from __future__ import annotations

import msgspec

__all__ = ["AnticipationRecord", "ChunkRecord", "Identity", "Manifest", "SegmentRecord", "invalidation_reasons"]

PLANNER_VERSION = 2
"""Bump when the rendering of segments changes (it changes every segment's bytes)."""


class Identity(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that makes cached KV of one turn reusable by another."""

    profile_id: str
    backend: str
    backend_version: str
    model_digest: str
    tokenizer_digest: str
    chat_template_digest: str
    context_size: int
    kv_precision: str
    sparse_attention: bool
    cache_block_size: int
    planner_version: int = PLANNER_VERSION


class SegmentRecord(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    byte_hash: str
    token_hash: str
    token_start: int
    token_end: int
    cache_class: str
    invalidation: str
    """The rule: what makes this segment change."""
    predicted_cached: int
    predicted_new: int
    invalidated_by: str | None = None
    """Why it is not served from the cache this turn (None: it is)."""
    items: tuple[tuple[str, str], ...] = ()
    """(name, byte hash) of the things inside: pinned files, instruction files, history turns."""
    note: str = ""
    """What budget fitting did to it."""

    @property
    def tokens(self) -> int:
        return self.token_end - self.token_start


class ChunkRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One retrieved chunk of a turn: where, how big, whether this turn entered it, and why it was chosen."""

    id: str
    """``path:start-end``"""
    name: str
    tokens: int
    status: str
    """``new`` (entered into the thread by this turn) or ``in thread`` (entered by an earlier turn, cached)."""
    reasons: tuple[str, ...] = ()


class AnticipationRecord(msgspec.Struct, frozen=True, kw_only=True):
    """How a turn used the context anticipated for it (kept in its manifest)."""

    place: str
    """Where the user was: ``path:line`` (and ``, draft`` when the prompt box's text was used)."""
    state: str
    """The anticipation when the question came: ``warm`` (prefilled), ``computing`` (cut short by the
    question: what was computed is cached), ``planned`` (not prefilled yet)."""
    chunks: tuple[str, ...]
    """Ids of the chunks laid out first because they were anticipated, in their anticipated order."""
    used: tuple[str, ...] = ()
    """Those the question's own retrieval also chose."""
    kept: tuple[str, ...] = ()
    """Those the question did not choose, kept because a used one follows them (they are cached; leaving
    them out would make every later chunk new)."""
    dropped: tuple[str, ...] = ()
    """Anticipated chunks left out: none of the question's chunks follows them."""
    age_s: float = 0.0
    """Seconds from the anticipation's plan to the question."""
    left_out: tuple[str, ...] = ()
    """The question's own chunks left out: over ``new_tokens`` of code that was not anticipated."""
    unpointed: tuple[str, ...] = ()
    """The question's own chunks left out because it does not point at them (only the ranking found them near
    what it names or the place; ``[anticipate] pointed_only``)."""
    new_tokens: int = 0
    """The cap on the question's own code beside the anticipated (``[anticipate] question_tokens``; 0: none)."""
    uncomputed: tuple[str, ...] = ()
    """Anticipated chunks the prefix cache did not hold yet when the question came (the anticipation was cut
    short): not laid out as anticipated."""
    uncomputed_kept: tuple[str, ...] = ()
    """Of those, the ones the question chose: laid out after the computed ones (the rest were left out)."""


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    identity: Identity
    workspace: str
    thread: str
    turn: int
    segments: tuple[SegmentRecord, ...]
    total_tokens: int
    predicted_cached_tokens: int
    token_hash: str
    """sha256 of all the turn's ids."""
    chunks: tuple[ChunkRecord, ...] = ()
    """The retrieved chunks relevant to this turn, best first."""
    notes: tuple[str, ...] = ()
    """Turn-level facts for explain-context (what retrieval left out, thread rebases, tools off)."""
    anticipation: AnticipationRecord | None = None
    """How the turn used the context anticipated at the user's place (None: nothing was anticipated)."""

    def segment(self, kind: str) -> SegmentRecord:
        for seg in self.segments:
            if seg.kind == kind:
                return seg
        raise KeyError(kind)


def identity_changes(old: Identity, new: Identity) -> list[str]:
    """Names of identity fields that differ, as phrases: ``["tokenizer digest changed"]``."""
    if old == new:
        return []
    changed = []
    for field in Identity.__struct_fields__:
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            name = field.replace("_", " ")
            if isinstance(before, (bool, int)) and not isinstance(before, str):
                changed.append(f"{name} changed ({before} -> {after})")
            else:
                changed.append(f"{name} changed")
    return changed


def _items_diff(kind: str, old: SegmentRecord, new: SegmentRecord) -> str:
    before, after = dict(old.items), dict(new.items)
    added = [n for n in after if n not in before]
    removed = [n for n in before if n not in after]
    edited = [n for n in after if n in before and before[n] != after[n]]
    words = {"pins": ("pinned", "unpinned", "edited"), "instructions": ("added", "removed", "edited")}[kind]
    parts = [f"{w}: {', '.join(names)}" for w, names in zip(words, (added, removed, edited), strict=True) if names]
    label = "pins" if kind == "pins" else "instructions"
    return f"{label} changed ({'; '.join(parts)})" if parts else f"{label} changed"


_LABEL = {"system": "system prompt changed", "tools": "tool schemas changed", "policy": "policy changed",
          "repo_map": "repo map changed", "diff": "diff changed", "terminal": "terminal output changed",
          "retrieved": "new code for this question", "user": "new user turn"}


def _own_reason(old: SegmentRecord, new: SegmentRecord, given: dict[str, str]) -> str:
    if new.kind in given:
        return given[new.kind]
    if new.kind in ("pins", "instructions"):
        return _items_diff(new.kind, old, new)
    if new.kind == "history":
        grown = len(new.items) - len(old.items)
        if grown > 0 and new.items[: len(old.items)] == old.items:
            return f"history grew by {grown} turn(s)"
        return "thread rebased (older turns summarised)"
    return _LABEL.get(new.kind, f"{new.kind} changed")


def invalidation_reasons(old: Manifest | None, new_identity: Identity,
                         segments: list[SegmentRecord], given: dict[str, str]) -> list[str | None]:
    """Per segment: None if the cache can serve it under the manifest rule, else the reason."""
    if old is None:
        return ["first turn of this workspace session"] * len(segments)
    changes = identity_changes(old.identity, new_identity)
    if changes:
        reason = ", ".join(changes)
        return [reason] * len(segments)
    reasons: list[str | None] = []
    first_miss: str | None = None
    for index, seg in enumerate(segments):
        prev = old.segments[index] if index < len(old.segments) else None
        same = (prev is not None and prev.kind == seg.kind and prev.token_hash == seg.token_hash
                and prev.token_start == seg.token_start and prev.token_end == seg.token_end)
        empty = seg.token_end == seg.token_start
        if (first_miss is None and same) or (empty and (prev is None or prev.token_end == prev.token_start)):
            reasons.append(None)
            continue
        moved = prev is not None and prev.kind == seg.kind and prev.token_hash == seg.token_hash
        if not same and not (moved and first_miss is not None):
            own = _own_reason(prev, seg, given) if prev is not None else f"{seg.kind} is new"
            reasons.append(own)
            if first_miss is None:
                first_miss = seg.kind
        else:
            reasons.append(f"follows changed {first_miss}")
    return reasons
