"""The path every warm case takes: planner -> engine, timed from the caller's side.

A :class:`Harness` owns the node's layers for one model (planner and engine) and the two bare
pipelines beside them: ``floor`` (prefix caching on, primed with the same prompts, so its TTFT is
the raw-engine floor of the same suffix) and ``cold`` (prefix caching off: the cold reference whose
greedy output every warm case is compared with).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from contenox.config import Config
from contenox.planner import Pin, Planner, PlannerInputs, TurnPlan
from contenox.planner.turn import finish
from contenox.runtime_ov import Engine, EngineOptions, FinalEvent, GenerateRequest, InstalledModel, TokenEvent
from contenox.runtime_ov.reference import BarePipeline, BareRun

__all__ = ["Harness", "TurnRun"]


class TurnRun(msgspec.Struct, frozen=True, kw_only=True):
    token_ids: list[int]
    ms: float
    """Caller's view: planning + submit + first token event."""
    plan_ms: float
    final: FinalEvent
    predicted_cached: int

    @property
    def output_ids(self) -> list[int]:
        return self.final.token_ids


class Harness:
    def __init__(self, config: Config, model: InstalledModel, state_dir: Path) -> None:
        self.config = config
        self.model = model
        options = EngineOptions.from_config(config.engine)
        started = time.perf_counter()
        self.engine = Engine.start(model, options)
        self.engine_load_ms = (time.perf_counter() - started) * 1000.0
        self.tokenizer = self.engine.tokenizer
        self.planner = Planner(self.tokenizer, model.profile, config.planner, state_dir=state_dir)
        bare = dict(prefix_caching=True, chunk_tokens=options.chunk_tokens, cache_size_gb=1.0,
                    threads=options.threads, repetition_penalty=options.repetition_penalty)
        self.floor = BarePipeline(model.weights, **bare)  # type: ignore[arg-type]
        bare["prefix_caching"] = False
        self.cold = BarePipeline(model.weights, **bare)  # type: ignore[arg-type]
        self.eos = self.tokenizer.eos_token_id
        self._threads = itertools.count()
        self.workspace = str(state_dir / "bench-workspace")

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text))

    def inputs(self, files: Sequence[tuple[str, str]], *, user: str, terminal: str = "", diff: str = "",
               thread: str | None = None) -> PlannerInputs:
        return PlannerInputs(workspace=self.workspace, user=user,
                             instructions=(("AGENTS.md", "Answer briefly. Prefer small diffs."),),
                             pins=tuple(Pin(path=p, text=t) for p, t in files), terminal=terminal, diff=diff,
                             thread=thread or f"bench-{next(self._threads)}")

    def plan(self, inputs: PlannerInputs) -> TurnPlan:
        return self.planner.plan(inputs, predict_cached=self.engine.predict_cached)

    async def _turn(self, inputs: PlannerInputs, max_new: int) -> TurnRun:
        started = time.perf_counter()
        plan = self.plan(inputs)
        plan_ms = (time.perf_counter() - started) * 1000.0
        handle = self.engine.submit(GenerateRequest(session_id="bench", token_ids=plan.token_ids,
                                                    max_new_tokens=max_new))
        first: float | None = None
        final: FinalEvent | None = None
        async for event in handle:
            if isinstance(event, TokenEvent):
                if first is None:
                    first = time.perf_counter()
            elif isinstance(event, FinalEvent):
                final = event
        if final is None:  # pragma: no cover - the handle raises instead
            raise RuntimeError("engine request ended without a final event")
        ms = ((first or time.perf_counter()) - started) * 1000.0
        finish(self.planner, plan, final.text, final.metrics)  # recorded as a node's turn is (no workspace)
        return TurnRun(token_ids=plan.token_ids, ms=ms, plan_ms=plan_ms, final=final,
                       predicted_cached=plan.manifest.predicted_cached_tokens)

    def turn(self, inputs: PlannerInputs, max_new: int) -> TurnRun:
        """One planned turn through the engine (greedy)."""
        return asyncio.run(self._turn(inputs, max_new))

    async def _raw(self, token_ids: list[int], max_new: int) -> tuple[float, FinalEvent]:
        started = time.perf_counter()
        handle = self.engine.submit(GenerateRequest(session_id="bench-raw", token_ids=token_ids,
                                                    max_new_tokens=max_new))
        first: float | None = None
        async for event in handle:
            if isinstance(event, TokenEvent) and first is None:
                first = time.perf_counter()
        final = await handle.result()
        return ((first or time.perf_counter()) - started) * 1000.0, final

    def raw(self, token_ids: list[int], max_new: int) -> tuple[float, FinalEvent]:
        """The same ids straight into the engine, no planner (cold cases); returns (ms to the first token
        event, final)."""
        return asyncio.run(self._raw(token_ids, max_new))

    def floor_run(self, token_ids: Sequence[int], max_new: int) -> BareRun:
        return self.floor.run(token_ids, max_new, eos_token_id=self.eos)

    def cold_run(self, token_ids: Sequence[int], max_new: int) -> BareRun:
        return self.cold.run(token_ids, max_new, eos_token_id=self.eos)

    def floor_close(self) -> None:
        """Drop the bare pipelines (their memory goes with them)."""
        del self.floor, self.cold

    def close(self) -> float:
        """Close the engine; returns the unload time in ms."""
        started = time.perf_counter()
        self.engine.close()
        return (time.perf_counter() - started) * 1000.0
