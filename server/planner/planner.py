"""The planner: assemble a turn's token ids from cached segments, and account for the cache.

``plan()`` renders the segments, fits the budget, joins each segment's cached ids and writes the
manifest with the predicted cache outcome; ``record()`` adds the engine's measurement and
persists the turn. Unchanged segments cost a hash and a dict lookup, not a tokenizer call.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from itertools import chain
from pathlib import Path
from typing import Protocol

import msgspec

from contenox.answer.questions import explains_only
from contenox.config import PlannerConfig
from contenox.errors import OverContext
from contenox.planner.budget import fit_budget
from contenox.planner.chat_frame import ChatFrame, ToolFrame, derive_chat_frame, derive_tool_frame
from contenox.planner.explain import Citations, Explain, explain_from_manifest
from contenox.planner.inputs import Chunk, PlannerInputs, as_pin, split_pin
from contenox.planner.journal import Journal, ThreadEntry, ToolStep, TurnRecord, slim
from contenox.planner.manifest import ChunkRecord, Identity, Manifest, SegmentRecord, invalidation_reasons
from contenox.planner.prompts import PromptTexts, load_prompts, tool_definitions
from contenox.planner.segments import (
    CACHE_CLASS,
    INVALIDATION,
    Draft,
    RenderedSegment,
    chunk_part,
    entry_of,
    entry_parts,
    history_parts,
    messages_of,
    render_segments,
)
from contenox.planner.thread import diff_delta, map_delta, partition_chunks, thread_view
from contenox.planner.token_cache import TokenCache, TokenizerLike, byte_hash, token_hash
from contenox.runtime_ov.profile import Profile

__all__ = ["MetricsLike", "Planner", "TurnPlan"]


PredictCached = Callable[[Sequence[int]], int]
STABLE_KINDS = ("system", "tools", "policy", "instructions", "repo_map", "pins")
_Built = tuple[tuple[int, ...], str, str, tuple[tuple[str, str], ...], tuple[int, ...]]
"""A segment's ids, token hash, byte hash, item hashes and the token count of each of its parts."""


class MetricsLike(Protocol):
    """The parts of ``contenox.runtime_ov.RequestMetrics`` the planner records."""

    @property
    def measured_recomputed_tokens(self) -> int: ...

    @property
    def ttft_ms(self) -> float: ...


class TurnPlan(msgspec.Struct, frozen=True, kw_only=True):
    token_ids: list[int]
    manifest: Manifest
    messages: list[dict[str, str]]
    """The chat messages these ids are the template rendering of (for checks and debugging)."""
    user: str
    """This turn's entry: the last user message as sent, which enters the thread once recorded."""
    prompt: str = ""
    """The user's own words (what a replayed thread shows)."""
    entry: ThreadEntry = msgspec.field(default_factory=lambda: ThreadEntry())
    """What the turn enters into its thread (recorded as is)."""
    retrieved: tuple[Chunk, ...] = ()
    """The code retrieval chose for the turn, best first, before budget fitting (``manifest.chunks``: what went
    in)."""
    chunk_ends: tuple[tuple[str, int], ...] = ()
    """(id, end) of each chunk laid out in the retrieved segment, in its order: the index in ``token_ids`` just
    after the chunk's last token (a prefix cache holding that many tokens holds the chunk)."""

    def stable_prefix(self) -> list[int]:
        """Ids of the stable segments (system .. pins): what the cache policy keeps warm."""
        return self.token_ids[: self.manifest.segment("pins").token_end]

    def resume_prefix(self) -> list[int]:
        """Ids a restarted node re-warms for this thread: the stable segments plus the history."""
        return self.token_ids[: self.manifest.segment("history").token_end]

    def files_in_prompt(self) -> tuple[str, ...]:
        """Paths whose code (not only a repo-map signature) is in this turn: retrieved chunks (new or
        already in the thread) and pinned files."""
        paths = [c.id.rsplit(":", 1)[0] for c in self.manifest.chunks]
        paths += [split_pin(name)[0] for name, _ in self.manifest.segment("pins").items]
        return tuple(dict.fromkeys(paths))


def _backend_version() -> str:
    try:
        return metadata.version("openvino-genai")
    except metadata.PackageNotFoundError:
        return "unknown"


def _base(records: list[TurnRecord], thread: str, history: int) -> int:
    """How many of the thread's turns the next turn finds summarised: those not in the ``history`` exchanges
    this turn holds in full (an agent turn is several exchanges: its tool steps, then its answer)."""
    turns = [r for r in records if r.thread == thread]
    kept = held = 0
    for record in reversed(turns):
        held += len(record.exchanges())
        if held > history:
            break
        kept += 1
    return len(turns) - kept


class Planner:
    """Plans the turns of one workspace session; its state lives under ``state_dir``."""

    def __init__(self, tokenizer: TokenizerLike, profile: Profile, config: PlannerConfig, state_dir: Path, *,
                 backend: str = "openvino-genai", backend_version: str | None = None, tools: bool = False,
                 tools_note: str = "this model is not certified for tool calls") -> None:
        self.tokenizer = tokenizer
        self.profile = profile
        self.config = config
        self.state_dir = Path(state_dir)
        self.frame: ChatFrame = derive_chat_frame(tokenizer)
        self.prompts: PromptTexts = load_prompts()
        self.tool_frame: ToolFrame | None = None
        """The template's tool rendering, when turns advertise the tools (a certified model, the node runs the
        calls); None otherwise, and ``tools_note`` says why."""
        self.tools_note = tools_note
        """Why tools are not advertised (named in explain-context)."""
        if tools:
            self.tool_frame, why = derive_tool_frame(tokenizer, self.frame, tool_definitions(self.prompts))
            if self.tool_frame is None:
                self.tools_note = why
        self.tokens = TokenCache(tokenizer)
        self.identity = Identity(
            profile_id=profile.id, backend=backend, backend_version=backend_version or _backend_version(),
            model_digest=profile.model_digest, tokenizer_digest=profile.tokenizer_digest,
            chat_template_digest=profile.chat_template_digest or self.frame.template_digest,
            context_size=profile.max_tested_context, kv_precision=profile.kv_precision,
            sparse_attention=profile.sparse_attention, cache_block_size=profile.cache_block_size)
        self._lock = threading.Lock()
        """Guards the recorded turns."""
        self._plan_lock = threading.Lock()
        """One plan at a time: the token and segment caches are not thread-safe."""
        self._journal = Journal(self.state_dir)
        self._records: list[TurnRecord] = slim(self._journal.load())
        self._segment_cache: dict[tuple[str, ...], tuple[tuple[int, ...], str, str]] = {}

    # -- public --------------------------------------------------------------------------------
    @property
    def context_limit(self) -> int:
        """Prompt tokens a turn may use: the tested context minus the output reserve."""
        return self.identity.context_size - self.config.output_reserve

    def plan(self, inputs: PlannerInputs, predict_cached: PredictCached) -> TurnPlan:
        """Assemble the turn; raises OverContext when even the shrunk turn does not fit. ``predict_cached``: the
        prompt tokens the engine's prefix cache would serve (its own block model: the planner keeps no mirror)."""
        with self._plan_lock:
            return self._plan(inputs, predict_cached)

    def _plan(self, inputs: PlannerInputs, predict_cached: PredictCached) -> TurnPlan:
        with self._lock:
            records = list(self._records)
        draft, turn_notes, diff_files, map_files = self._draft(inputs, records)
        rendered, built = self._assemble(draft)
        if sum(len(b[0]) for b in built) > self.context_limit:
            self._fit(draft, inputs)
            rendered, built = self._assemble(draft)
            if "diff" in draft.notes:  # cut: the next turn shows these files again
                diff_files = tuple((path, "") for path, _ in diff_files)
        if draft.referenced:
            draft.note("retrieved", f"{len(draft.referenced)} chunk(s) already in the thread, referenced "
                                    "(not repeated)")
        ids_by_segment: list[tuple[int, ...]] = []
        records_out: list[SegmentRecord] = []
        start = 0
        for seg, (ids, thash, bhash, items, _) in zip(rendered, built, strict=True):
            ids_by_segment.append(ids)
            records_out.append(SegmentRecord(
                kind=seg.kind, byte_hash=bhash, token_hash=thash, token_start=start, token_end=start + len(ids),
                cache_class=CACHE_CLASS[seg.kind], invalidation=INVALIDATION[seg.kind], predicted_cached=0,
                predicted_new=len(ids), items=items, note="; ".join(draft.notes.get(seg.kind, []))))
            start += len(ids)
        token_ids = list(chain.from_iterable(ids_by_segment))
        if len(token_ids) > self.context_limit:  # budget fitting guarantees this; keep the invariant loud
            raise OverContext(f"planned {len(token_ids)} tokens exceed {self.context_limit}",
                              needed=len(token_ids), limit=self.context_limit)
        previous = self._previous(records, inputs.thread)
        reasons = invalidation_reasons(previous, self.identity, records_out, dict(inputs.change_reasons))
        predicted = max(0, min(len(token_ids), int(predict_cached(token_ids))))
        segments = tuple(
            msgspec.structs.replace(
                rec, predicted_cached=(c := max(0, min(rec.tokens, predicted - rec.token_start))),
                predicted_new=rec.tokens - c, invalidated_by=reason)
            for rec, reason in zip(records_out, reasons, strict=True))
        manifest = Manifest(identity=self.identity, workspace=inputs.workspace, thread=inputs.thread,
                            turn=len(records) + 1, segments=segments, total_tokens=len(token_ids),
                            predicted_cached_tokens=predicted,
                            token_hash=hashlib.sha256("".join(r.token_hash for r in records_out).encode()).hexdigest(),
                            chunks=self._chunk_records(draft, inputs), notes=tuple(turn_notes),
                            anticipation=inputs.anticipation)
        entry = ThreadEntry(parts=entry_parts(rendered), chunks=tuple((c.id, byte_hash(c.text)) for c in draft.retrieved),
                            diff_files=diff_files, map_base=byte_hash(inputs.repo_map),
                            map_files=map_files if draft.repo_map == inputs.repo_map else (),
                            base=_base(records, inputs.thread, len(draft.history)))
        return TurnPlan(token_ids=token_ids, manifest=manifest, user=entry_of(rendered),
                        prompt=(inputs.prompt or inputs.user).strip(), entry=entry,
                        messages=messages_of(self.prompts, draft, rendered), retrieved=tuple(inputs.retrieved),
                        chunk_ends=self._chunk_ends(rendered, built, records_out, draft))

    @staticmethod
    def _chunk_ends(rendered: list[RenderedSegment], built: list[_Built], records: list[SegmentRecord],
                    draft: Draft) -> tuple[tuple[str, int], ...]:
        """Where each laid-out chunk ends in the turn's ids: the retrieved segment's parts are its heading, then
        one part per chunk (each tokenized on its own, so the lengths add up)."""
        for seg, segment, record in zip(rendered, built, records, strict=True):
            if seg.kind != "retrieved" or not draft.retrieved:
                continue
            lengths = segment[4]
            end = record.token_start + lengths[0]
            ends: list[tuple[str, int]] = []
            for chunk, length in zip(draft.retrieved, lengths[1:], strict=False):
                end += length
                ends.append((chunk.id, end))
            return tuple(ends)
        return ()

    def _fit(self, draft: Draft, inputs: PlannerInputs) -> None:
        """Budget fitting, keeping every referenced chunk in the prompt: a chunk whose holding turn was
        summarised to fit is entered again (and the fit redone, which may summarise more or drop the
        lowest-ranked chunks, each named), never referenced while out of the prompt."""
        pins = tuple(map(as_pin, inputs.pins))
        fit_budget(draft, self.identity.context_size, self.config.output_reserve, self._total, self.tokens.count,
                   repo_map_at=inputs.repo_map_at, pins=pins)
        while draft.referenced:
            held = {cid for ids in draft.history_chunks for cid in ids}
            lost = {c.id for c in draft.referenced if c.id not in held}
            if not lost:
                return
            entered = {c.id for c in draft.retrieved} | lost
            draft.retrieved = [c for c in inputs.retrieved if c.id in entered]
            draft.referenced = [c for c in draft.referenced if c.id not in lost]
            draft.note("retrieved", f"{len(lost)} chunk(s) entered again: the turns that held them were "
                                    "summarised to fit the context")
            fit_budget(draft, self.identity.context_size, self.config.output_reserve, self._total,
                       self.tokens.count, repo_map_at=inputs.repo_map_at, pins=pins)

    def _chunk_records(self, draft: Draft, inputs: PlannerInputs) -> tuple[ChunkRecord, ...]:
        """Every retrieved chunk relevant to the turn, best first: entered now, or already in the thread."""
        new = {c.id for c in draft.retrieved}
        held = {c.id for c in draft.referenced}
        return tuple(ChunkRecord(id=c.id, name=c.name, tokens=self.tokens.count(chunk_part(c)) if c.id in new else 0,
                                 status="new" if c.id in new else "in thread", reasons=c.reasons)
                     for c in inputs.retrieved if c.id in new or c.id in held)

    @property
    def turns(self) -> int:
        """Turns in this workspace's journal."""
        with self._lock:
            return len(self._records)

    def preview(self, plan: TurnPlan) -> Explain:
        """The explain of a planned turn before the engine ran it (no measurement yet)."""
        return explain_from_manifest(plan.manifest)

    @property
    def tools(self) -> bool:
        """Whether turns advertise the tool schemas."""
        return self.tool_frame is not None

    def step_ids(self, plan: TurnPlan, steps: Sequence[ToolStep]) -> list[int]:
        """The prompt of an agent turn's next step: the turn's ids, then each step's call (an assistant message)
        and results (the next user message), then the opening of the next answer. The same parts as the
        thread's next turn renders them in its history, so every step's prefill is only its new results."""
        parts: list[str] = []
        for step in steps:
            parts += [step.call.strip(), self.frame.assistant_to_user, step.result, self.frame.generation]
        with self._plan_lock:
            return plan.token_ids + list(chain.from_iterable(self.tokens.lookup(part).ids for part in parts))

    def chat_ids(self, system: str, user: str) -> list[int]:
        """A fresh chat of one system and one user message, opened for the answer, as the model's template renders
        it (a verified fix's focused repair prompt: nothing of the workspace's turns)."""
        parts = [self.frame.open_system, system, self.frame.system_to_user, user, self.frame.generation]
        with self._plan_lock:
            return list(chain.from_iterable(self.tokens.lookup(part).ids for part in parts))

    def tool_result(self, text: str) -> str:
        """A tool's result framed as the model's template frames a tool message."""
        return self.tool_frame.result(text) if self.tool_frame else text

    def record(self, plan: TurnPlan, metrics: MetricsLike | None, answer_text: str,
               citations: Citations | None = None, steps: Sequence[ToolStep] = (), finish_reason: str = "",
               notes: Sequence[str] = ()) -> Explain:
        """Persist the turn (manifest, measurement, answer, its tool steps, what it cites, how it ended, and
        ``notes``: what the turn's later steps found, appended to its explain's); its explain."""
        measured = getattr(metrics, "measured_recomputed_tokens", None) if metrics is not None else None
        ttft = getattr(metrics, "ttft_ms", None) if metrics is not None else None
        explain = explain_from_manifest(plan.manifest, measured_recomputed_tokens=measured, ttft_ms=ttft,
                                        cache_evidence=getattr(metrics, "cache_evidence", "steps"),
                                        server_cached_tokens=getattr(metrics, "server_cached_tokens", None))
        explain = msgspec.structs.replace(explain, citations=citations,
                                          notes=(*explain.notes, *notes) if notes else explain.notes)
        with self._lock:
            turn = len(self._records) + 1
            manifest = plan.manifest if plan.manifest.turn == turn else msgspec.structs.replace(plan.manifest,
                                                                                                turn=turn)
            explain = msgspec.structs.replace(explain, turn=turn)
            record = TurnRecord(turn=turn, thread=manifest.thread, user=plan.user, prompt=plan.prompt,
                                answer=answer_text.strip(), entry=plan.entry, steps=tuple(steps),
                                manifest=manifest, explain=explain, recorded_at=time.time(),
                                finish_reason=finish_reason)
            self._journal.append(record)
            self._records = slim([*self._records, record])
        return explain

    def next_prefix(self, plan: TurnPlan) -> list[int] | None:
        """When the thread's next turn will rebase it (``plan`` was just recorded), the ids that turn starts
        with: this turn's stable prefix, then the rebased history. The node warms them in the background,
        so the rebase costs no prefill when the user asks next. None when the next turn will not rebase."""
        thread = plan.manifest.thread
        with self._lock:
            records = [r for r in self._records if r.thread == thread]
        with self._plan_lock:
            view = thread_view(records, max_turns=self.config.max_history_turns,
                               max_tokens=self.config.thread_tokens, count=self.tokens.count)
            if not any(note.startswith("thread rebased") for note in view.notes):
                return None
            parts = history_parts(self.frame, view.summary, view.history)
            history = list(chain.from_iterable(self.tokens.lookup(part).ids for part in parts))
        return plan.stable_prefix() + history

    def last_explain(self) -> Explain | None:
        with self._lock:
            return self._records[-1].explain if self._records else None

    def last_manifest(self) -> Manifest | None:
        with self._lock:
            return self._records[-1].manifest if self._records else None

    # -- internals -----------------------------------------------------------------------------
    def _draft(self, inputs: PlannerInputs, records: list[TurnRecord]
               ) -> tuple[Draft, list[str], tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """The turn's contents before budget fitting, turn-level notes, and the diff files and repo-map
        changes it shows."""
        notes: list[str] = []
        history: list[tuple[tuple[str, ...], str]]
        if inputs.history is not None:  # the caller keeps the thread: take it as given
            limit = self.config.max_history_turns
            given: list[tuple[tuple[str, ...], str]] = [((str(u),), str(a)) for u, a in inputs.history]
            history = given[-limit:] if limit > 0 else []
            view = None
        else:
            view = thread_view([r for r in records if r.thread == inputs.thread],
                               max_turns=self.config.max_history_turns, max_tokens=self.config.thread_tokens,
                               count=self.tokens.count)
            history = view.history
            notes += view.notes
        new, held = partition_chunks(inputs.retrieved, view.chunks_seen if view else {})
        diff, diff_files, diff_notes = diff_delta(inputs.diff, view.diff_seen if view else {})
        map_text, map_files = map_delta(inputs.map_changes,
                                        view.map_seen.get(byte_hash(inputs.repo_map), {}) if view else {})
        notes += list(inputs.notes)
        if self.tool_frame is None:
            notes.append(f"tools: not advertised ({self.tools_note})")
        elif inputs.text_only:
            notes.append(f"tools: {inputs.text_only_why or 'the tool check answered no'}: this turn is answered in "
                         "text (the text-only line follows the question; no call in the answer is run)")
        explain = self.tool_frame is None and explains_only(inputs.prompt or inputs.user, inputs.terminal)
        if explain:
            notes.append("answer format: how the code works, step by step by name, and no edit block (the question "
                         "asks how code works, where it is, or yes or no, for no change)")
        draft = Draft(instructions=[(str(p), str(t)) for p, t in inputs.instructions], repo_map=inputs.repo_map,
                      pins=[(pin.path, pin.text) for pin in map(as_pin, inputs.pins)], history=history,
                      summary=list(view.summary) if view else [],
                      history_lines=list(view.lines) if view else [f"turn {i + 1}" for i in range(len(history))],
                      history_chunks=list(view.history_chunks) if view else [],
                      map_delta=map_text, retrieved=new, referenced=held, diff=diff, terminal=inputs.terminal,
                      selection=inputs.selection, calls=inputs.calls, user=inputs.user,
                      text_only=inputs.text_only and bool(self.tools), explain=explain)
        for note in diff_notes:
            draft.note("diff", note)
        if inputs.map_label:
            draft.note("repo_map", inputs.map_label)
        return draft, notes, diff_files, map_files

    def _assemble(self, draft: Draft) -> tuple[list[RenderedSegment], list[_Built]]:
        rendered = render_segments(self.frame, self.prompts, draft,
                                   tools=self.tool_frame.block if self.tool_frame else "")
        return rendered, [self._segment_ids(seg, draft) for seg in rendered]

    def _segment_ids(self, seg: RenderedSegment, draft: Draft) -> _Built:
        """(ids, token hash, byte hash, items) of a segment; unchanged parts cost a dict lookup."""
        entries = [self.tokens.lookup(part) for part in seg.parts]
        key = tuple(e.byte_hash for e in entries)
        hit = self._segment_cache.get(key)
        if hit is None:
            ids = tuple(chain.from_iterable(e.ids for e in entries))
            bhash = entries[0].byte_hash if len(entries) == 1 else byte_hash("".join(seg.parts))
            hit = (ids, token_hash(ids), bhash)
            if len(self._segment_cache) > 256:
                self._segment_cache.clear()
            self._segment_cache[key] = hit
        if seg.kind == "pins":
            items = tuple((path, e.byte_hash) for (path, _), e in zip(draft.pins, entries[1:], strict=True))
        elif seg.kind == "retrieved":
            items = tuple((c.id, byte_hash(c.text)) for c in draft.retrieved)
        elif seg.kind == "history":
            items = tuple((f"turn {i + 1}", byte_hash(f"{''.join(u)}\0{a}")) for i, (u, a) in enumerate(draft.history))
        else:
            items = tuple((name, byte_hash(text)) for name, text in seg.items)
        return (*hit, items, tuple(len(e.ids) for e in entries))

    def _total(self, draft: Draft) -> int:
        return sum(len(b[0]) for b in self._assemble(draft)[1])

    @staticmethod
    def _previous(records: list[TurnRecord], thread: str) -> Manifest | None:
        """The manifest to compare with: this thread's last turn, else the workspace's last turn."""
        for record in reversed(records):
            if record.thread == thread:
                return record.manifest
        return records[-1].manifest if records else None
