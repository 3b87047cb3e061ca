"""The timed cases of the report: cold prefill, warm same prefix, the changed-suffix curve, an edited
stable segment and decode. Each warm case runs through the planner and the engine, beside the bare
floor, and its output is compared with the cold reference of the same ids.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from contenox.bench.corpus import QUESTIONS, edit_middle, log_text, source_files
from contenox.bench.harness import Harness, TurnRun
from contenox.bench.report import (
    ColdFullPrefill,
    Decode,
    EditedStableSegment,
    SuffixPoint,
    WarmChangedSuffix,
    WarmSamePrefix,
)
from contenox.bench.stats import compare_outputs, output_hash, spread
from contenox.runtime_ov.metrics import peak_rss_bytes

__all__ = ["CaseRunner"]

log = logging.getLogger(__name__)


def _ratio(ours: float, floor: float) -> float:
    return round(ours / floor, 3) if floor > 0 else 0.0


class CaseRunner:
    """Runs the cases in order on one harness; the stable prefix is primed once and stays cached."""

    def __init__(self, h: Harness, *, prefix_tokens: int, repeats: int, max_new: int, max_context: int,
                 say: Callable[[str], None] = log.info) -> None:
        self.h = h
        self.repeats = max(1, repeats)
        self.max_new = max_new
        self.max_context = max_context
        self.say = say
        self.files = source_files(prefix_tokens, h.count)
        self.base = h.plan(h.inputs(self.files, user=QUESTIONS[0]))
        self.prefix_tokens = self.base.manifest.segment("pins").token_end
        self._q = 0
        self.cold_ids: list[int] = []
        self.cold_output: list[int] = []
        self.warm_pairs: list[tuple[list[int], list[int]]] = []
        """(cached prompt, warm prompt) pairs of warm_same_prefix, for the peer."""

    def _question(self) -> str:
        self._q += 1
        return f"{QUESTIONS[self._q % len(QUESTIONS)]} (question {self._q})"

    def warm_up(self) -> None:
        """First inference of each pipeline compiles kernels: done before anything is timed."""
        ids = self.h.tokenizer.encode("def warm_up():\n    return 'first inference compiles kernels'\n") * 2
        self.h.raw(ids, 4)
        self.h.floor_run(ids, 4)
        self.h.cold_run(ids, 4)

    # -- cold -----------------------------------------------------------------------------------
    def cold_full_prefill(self) -> ColdFullPrefill:
        ms, ttft, tps, floor, hashes = [], [], [], [], []
        tokens = 0
        for r in range(self.repeats):
            nonce = self.h.tokenizer.encode(f"# cold run {r} {time.time_ns()}\n")
            ids = nonce + self.base.token_ids
            tokens = len(ids)
            took, final = self.h.raw(ids, self.max_new)
            ms.append(took)
            ttft.append(final.metrics.ttft_ms)
            tps.append(tokens / (final.metrics.ttft_ms / 1000.0))
            hashes.append(output_hash(final.token_ids))
            self.cold_ids, self.cold_output = ids, final.token_ids
            bare = self.h.cold_run(ids, self.max_new)
            floor.append(bare.ttft_ms)
            control = compare_outputs(final.token_ids, bare.output_ids)
            self.say(f"cold {tokens} tokens: {final.metrics.ttft_ms:.0f} ms (floor {floor[-1]:.0f} ms)")
        return ColdFullPrefill(tokens=tokens, ms=spread(ms), prompt_tps=spread(tps), ttft_ms=spread(ttft),
                               memory_high_water=peak_rss_bytes(), floor_ttft_ms=spread(floor),
                               overhead_ratio=_ratio(spread(ms).median, spread(floor).median),
                               output_hashes=hashes, engine_vs_bare_cold=control)

    def prime(self) -> None:
        """Put the stable prefix into the engine's and the floor's caches."""
        self.h.turn(self.h.inputs(self.files, user=QUESTIONS[0]), 1)
        self.h.floor_run(self.base.token_ids, 1)

    # -- warm -----------------------------------------------------------------------------------
    def _warm(self, *, terminal_tokens: int, seed: int) -> tuple[TurnRun, float]:
        terminal = log_text(terminal_tokens, self.h.count, seed=seed)
        run = self.h.turn(self.h.inputs(self.files, user=self._question(), terminal=terminal), self.max_new)
        floor = self.h.floor_run(run.token_ids, self.max_new)
        return run, floor.ttft_ms

    def warm_same_prefix(self) -> WarmSamePrefix:
        runs: list[TurnRun] = []
        floors: list[float] = []
        for r in range(self.repeats):
            run, floor = self._warm(terminal_tokens=0, seed=r)
            runs.append(run)
            floors.append(floor)
            self.warm_pairs.append((self.base.token_ids, run.token_ids))
        first = runs[0]
        cold = self.h.cold_run(first.token_ids, self.max_new)
        m = first.final.metrics
        ms = spread([r.ms for r in runs])
        self.say(f"warm same prefix: {spread([r.final.metrics.ttft_ms for r in runs]).median:.0f} ms "
                 f"(floor {spread(floors).median:.0f} ms)")
        return WarmSamePrefix(
            cached_tokens=first.predicted_cached, new_tokens=m.prompt_tokens - first.predicted_cached,
            measured_recomputed_tokens=m.measured_recomputed_tokens, ms=ms,
            ttft_ms=spread([r.final.metrics.ttft_ms for r in runs]),
            hit_rate=round(first.predicted_cached / m.prompt_tokens, 4),
            measured_hit_rate_min=round(1.0 - m.measured_recomputed_tokens / m.prompt_tokens, 4),
            floor_ttft_ms=spread(floors), overhead_ratio=_ratio(ms.median, spread(floors).median),
            vs_cold=compare_outputs(first.output_ids, cold.output_ids))

    def changed_suffix(self, points: tuple[int, ...], deadline: float) -> WarmChangedSuffix:
        measured: list[SuffixPoint] = []
        skipped: list[str] = []
        limit = self.max_context
        for i, n in enumerate(points):
            need = self.prefix_tokens + n + 200 + self.max_new
            if need > limit:
                skipped.append(f"{n}: prefix {self.prefix_tokens} + {n} + question + output exceeds the context "
                               f"limit {limit}")
                continue
            if deadline and time.monotonic() > deadline:
                skipped.append(f"{n}: not started, the run's time budget was spent")
                continue
            reps = self.repeats if n <= 4096 else 1
            runs: list[TurnRun] = []
            floors: list[float] = []
            for r in range(reps):
                run, floor = self._warm(terminal_tokens=n, seed=1000 * (i + 1) + r)
                runs.append(run)
                floors.append(floor)
            # the cold reference is a full prefill: twice for the small points (a spread), once above 1k
            colds = [self.h.cold_run(runs[0].token_ids, self.max_new) for _ in range(2 if n <= 1024 else 1)]
            cmp = compare_outputs(runs[0].output_ids, colds[0].output_ids)
            m = runs[0].final.metrics
            ms = spread([r.ms for r in runs])
            point = SuffixPoint(
                changed_tokens=n, cached_tokens=runs[0].predicted_cached,
                suffix_tokens=m.prompt_tokens - runs[0].predicted_cached,
                measured_recomputed_tokens=m.measured_recomputed_tokens, ms=ms,
                ttft_ms=spread([r.final.metrics.ttft_ms for r in runs]), floor_ttft_ms=spread(floors),
                overhead_ratio=_ratio(ms.median, spread(floors).median),
                cold_ttft_ms=spread([c.ttft_ms for c in colds]), output_equals_cold=cmp.equal, vs_cold=cmp)
            measured.append(point)
            self.say(f"suffix {n}: warm {point.ttft_ms.median:.0f} ms, floor {point.floor_ttft_ms.median:.0f} ms, "
                     f"cold {point.cold_ttft_ms.median:.0f} ms, equal={cmp.equal}")
        return WarmChangedSuffix(prefix_tokens=self.prefix_tokens, points=measured, requested_points=list(points),
                                 skipped_points=skipped)

    def edited_stable_segment(self) -> EditedStableSegment:
        question = self._question()
        before = self.h.plan(self.h.inputs(self.files, user=question)).token_ids
        edited, _path = edit_middle(self.files)
        run = self.h.turn(self.h.inputs(edited, user=question), self.max_new)
        ids = run.token_ids
        k = next((i for i, (a, b) in enumerate(zip(before, ids, strict=False)) if a != b), min(len(before), len(ids)))
        block = self.h.model.profile.cache_block_size
        expected = len(ids) - (k // block) * block
        floor = self.h.floor_run(ids, self.max_new)
        cold = self.h.cold_run(ids, self.max_new)
        cmp = compare_outputs(run.output_ids, cold.output_ids)
        m = run.final.metrics
        self.say(f"edited stable segment at token {k}: expected miss {expected}, measured "
                 f"{m.measured_recomputed_tokens}")
        return EditedStableSegment(
            prompt_tokens=len(ids), edit_at_token=k, expected_cache_miss=expected,
            predicted_cache_miss=len(ids) - run.predicted_cached, actual_cache_miss=m.measured_recomputed_tokens,
            ttft_ms=spread([m.ttft_ms]), floor_ttft_ms=spread([floor.ttft_ms]), output_equals_cold=cmp.equal,
            vs_cold=cmp)

    def decode(self) -> Decode:
        tps, floor_tps, hashes, counts = [], [], [], []
        new = max(self.max_new, 64)
        for _ in range(self.repeats):
            run = self.h.turn(self.h.inputs(self.files, user=self._question()), new)
            tps.append(run.final.metrics.decode_tps)
            counts.append(run.final.metrics.generated_tokens)
            hashes.append(output_hash(run.output_ids))
            floor_tps.append(self.h.floor_run(run.token_ids, new).decode_tps)
        return Decode(output_tokens=sorted(counts)[len(counts) // 2], tokens_per_sec=spread(tps),
                      floor_tokens_per_sec=spread(floor_tps), output_hashes=hashes)
