"""The engine thread's side: build the pipeline and run one request through add_request/step().

Only the engine thread calls into this module after :func:`load_pipeline` returns.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contenox.errors import OverBatch
from contenox.runtime_ov._ov_errors import translate_ov_error
from contenox.runtime_ov.metrics import RequestMetrics, peak_rss_bytes
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.requests import FinalEvent, PrefillEvent, RequestHandle, TokenEvent, ToolCallGrammar
from contenox.runtime_ov.store import InstalledModel

if TYPE_CHECKING:
    from contenox.runtime_ov.engine import Engine

__all__ = ["Live", "RequestRunner", "choose_device", "load_pipeline"]

log = logging.getLogger(__name__)

_CLEANUP_STEPS = 8


def choose_device(preference: list[str], requested: str, available: list[str]) -> str:
    """``requested`` if OpenVINO has it, else the first preferred device it has, else CPU."""
    def present(name: str) -> bool:
        return any(dev == name or dev.startswith(name + ".") for dev in available)

    for name in ([requested] if requested else []) + list(preference):
        if present(name):
            return name
    return "CPU"


def load_pipeline(model: InstalledModel, weights: Path, options: EngineOptions, num_kv_blocks: int
                  ) -> tuple[Any, str]:
    """A ContinuousBatchingPipeline of ``weights`` (the model's, or the IR converted from them) with prefix caching
    and an exact number of KV blocks."""
    import openvino as ov
    import openvino_genai as ov_genai

    profile = model.profile
    try:
        device = choose_device(list(profile.device_preference), options.device, list(ov.Core().available_devices))
        config = ov_genai.SchedulerConfig()
        config.enable_prefix_caching = profile.prefix_caching
        config.num_kv_blocks = num_kv_blocks
        config.dynamic_split_fuse = True
        config.max_num_batched_tokens = options.chunk_tokens
        config.max_num_seqs = options.max_num_seqs
        if profile.sparse_attention:
            config.use_sparse_attention = True
        # Cache eviction stays off: with prefix caching it leaks blocks, and apply_rotation aborts.
        properties: dict[str, Any] = {}
        if profile.kv_precision != "auto":
            properties["KV_CACHE_PRECISION"] = profile.kv_precision
        if options.threads:
            properties["INFERENCE_NUM_THREADS"] = options.threads
        pipe = ov_genai.ContinuousBatchingPipeline(str(weights), config, device, properties)
    except (RuntimeError, IndexError) as exc:
        raise translate_ov_error(exc, doing=f"loading model {model.name}") from exc
    return pipe, device


class Live:
    """A request in the pipeline: its native handle and what it generated so far."""

    def __init__(self, handle: RequestHandle, native: Any, ids: list[int], predicted: int, started: float,
                 batched: bool) -> None:
        self.handle = handle
        self.native = native
        self.ids = ids
        self.predicted = predicted
        self.started = started
        self.batched = batched
        self.generated: list[int] = []
        self.sent_text = ""
        self.steps = 0
        self.first: float | None = None
        self.reason = ""

    @property
    def in_prefill(self) -> bool:
        return self.first is None


class RequestRunner:
    """Runs requests on the pipeline (one, or a completion beside a turn), delivering events to their handles."""

    def __init__(self, pipe: Any, engine: Engine) -> None:
        import openvino_genai as ov_genai

        self._pipe = pipe
        self._engine = engine
        self._status = ov_genai.GenerationStatus
        self._tags: dict[ToolCallGrammar, Any] = {}
        self._reasons = {ov_genai.GenerationFinishReason.STOP: "stop",
                         ov_genai.GenerationFinishReason.LENGTH: "length"}

    def _config(self, handle: RequestHandle) -> Any:
        import openvino_genai as ov_genai

        request = handle.request
        eos = self._engine.tokenizer.eos_token_id
        config = ov_genai.GenerationConfig()
        config.max_new_tokens = request.max_new_tokens or self._engine.options.max_new_tokens
        config.do_sample = False
        if request.sampling is not None:
            config.do_sample = True
            config.temperature = request.sampling.temperature
            config.top_p = request.sampling.top_p
            config.rng_seed = request.sampling.seed
        if request.grammar:
            structured = ov_genai.StructuredOutputConfig()
            structured.grammar = request.grammar
            config.structured_output_config = structured
        elif request.tool_calls is not None:
            structured = ov_genai.StructuredOutputConfig()
            structured.structural_tags_config = self._triggered_tags(request.tool_calls)
            config.structured_output_config = structured
        if self._engine.options.repetition_penalty != 1.0:
            config.repetition_penalty = self._engine.options.repetition_penalty
        if eos >= 0:
            config.eos_token_id = eos
        stops = {int(t) for t in request.stop_token_ids} | ({eos} if eos >= 0 else set())
        if stops:
            config.stop_token_ids = stops
        return config

    def _triggered_tags(self, grammar: ToolCallGrammar) -> Any:
        """The OpenVINO form of a tool-call grammar (made once per tool set)."""
        import openvino_genai as ov_genai

        made = self._tags.get(grammar)
        if made is None:
            so = ov_genai.StructuredOutputConfig
            made = so.TriggeredTags(triggers=list(grammar.triggers),
                                    tags=[so.Tag(t.begin, so.JSONSchema(t.schema), t.end) for t in grammar.tags],
                                    at_least_one=grammar.required, stop_after_first=grammar.stop_after_first)
            self._tags[grammar] = made
        return made

    def recover(self) -> None:
        """After a failed request: let the pipeline drop whatever is still in flight."""
        try:
            for _ in range(_CLEANUP_STEPS):
                if not self._pipe.has_non_finished_requests():
                    break
                self._pipe.step()
        except RuntimeError:
            log.exception("pipeline cleanup after a failed request")

    def start(self, handle: RequestHandle, *, batched: bool = False) -> Live | FinalEvent:
        """Add ``handle``'s request to the pipeline (a final event at once if it was cancelled before)."""
        import numpy as np
        import openvino as ov

        ids = [int(t) for t in handle.request.token_ids]
        predicted = self._engine.blocks.predict(ids)
        started = time.perf_counter()
        if handle.cancel_requested:
            return self._final(handle, [], "cancelled", predicted, 0, started, None)
        native = self._pipe.add_request(handle.request_id, ov.Tensor(np.array([ids], dtype=np.int64)),
                                        self._config(handle))
        return Live(handle, native, ids, predicted, started, batched)

    def step(self, lives: list[Live]) -> list[tuple[Live, FinalEvent]]:
        """One pipeline step for every live request; the ones that ended, with their final events (they are
        removed from ``lives``)."""
        ended: list[tuple[Live, FinalEvent]] = []
        for live in list(lives):
            if live.handle.cancel_requested:
                live.native.cancel()
                live.reason = "cancelled"
                lives.remove(live)
                ended.append((live, self._end(live, others=lives)))
        if not lives:
            return ended
        if len(lives) > 1:
            for live in lives:
                live.batched = True
        self._pipe.step()
        chunk = self._engine.options.chunk_tokens
        for live in list(lives):
            if live.first is None:
                live.steps += 1
            if live.native.can_read():
                self._read(live)
            elif live.first is None and live.handle.request.report_prefill:
                # an estimate when batched (a shared step computed less of this prompt): never past the prompt
                computed = min(len(live.ids), live.predicted + live.steps * chunk)
                live.handle.emit(PrefillEvent(computed=computed, total=len(live.ids)))
            status = live.native.get_status()
            if status == self._status.RUNNING or live.native.can_read():
                continue
            lives.remove(live)
            if status == self._status.IGNORED:
                self.recover()
                raise OverBatch(f"the engine's KV cache ({self._engine.blocks.capacity_tokens} tokens) cannot "
                                f"hold request {live.handle.request_id} ({len(live.ids)} prompt tokens)")
            ended.append((live, self._end(live, others=lives)))
        return ended

    def pause(self, live: Live, lives: list[Live]) -> None:
        """Stop a request still in prefill so a more urgent one runs first; what it computed stays cached
        and it resumes from there (the caller queues it again)."""
        live.native.cancel()
        lives.remove(live)
        if not lives:
            self.recover()
        chunk = self._engine.options.chunk_tokens
        done = live.predicted if live.batched else live.predicted + live.steps * chunk
        computed = live.ids[:min(len(live.ids), done)]
        self._engine.blocks.commit(computed, occupied_tokens=len(computed))
        live.handle.paused += 1

    def _read(self, live: Live) -> None:
        new: list[int] = []
        for output in live.native.read().values():
            new.extend(int(t) for t in output.generated_ids)
            live.reason = self._reasons.get(output.finish_reason, live.reason)
        if not new:
            return
        if live.first is None:
            live.first = time.perf_counter()
        live.generated.extend(new)
        text = self._engine.tokenizer.decode(live.generated)
        delta = ""
        if not text.endswith("\ufffd") and text.startswith(live.sent_text):
            delta, live.sent_text = text[len(live.sent_text):], text
        live.handle.emit(TokenEvent(token_ids=new, text=delta))

    def _end(self, live: Live, *, others: list[Live]) -> FinalEvent:
        engine = self._engine
        if not others:
            self.recover()
        generated, ids = live.generated, live.ids
        rest = engine.tokenizer.decode(generated)
        if rest.startswith(live.sent_text) and len(rest) > len(live.sent_text):  # held back at an incomplete char
            live.handle.emit(TokenEvent(token_ids=[], text=rest[len(live.sent_text):]))
        engine._measured_kv(self._pipe.get_metrics())
        chunk = engine.options.chunk_tokens
        if live.reason == "cancelled" and live.first is None:  # prefill stopped at a chunk boundary
            computed = ids[:min(len(ids), live.predicted + live.steps * chunk)]
            occupied = len(computed)
        else:
            live.reason = live.reason or "stop"
            computed = ids + generated[:-1]  # the last token's KV is never computed
            occupied = len(ids) + len(generated)
        engine.blocks.commit(computed, occupied_tokens=occupied)
        live.handle.committed = (computed, occupied)
        return self._final(live.handle, generated, live.reason, live.predicted, live.steps, live.started,
                           live.first, batched=live.batched)

    def _final(self, handle: RequestHandle, generated: list[int], reason: str, predicted: int, steps: int,
               started: float, first: float | None, *, batched: bool = False) -> FinalEvent:
        engine = self._engine
        ended = time.perf_counter()
        prompt = len(handle.request.token_ids)
        chunk = engine.options.chunk_tokens
        # Alone in the pipeline, each step before the first token computed one chunk of this prompt; batched
        # with another request a step's chunk was shared, so the block model's figure stands in.
        recomputed = max(0, prompt - predicted) if batched else min(prompt, steps * chunk)
        ttft = (first - started) * 1000.0 if first is not None else 0.0
        decode_s = ended - first if first is not None else 0.0
        metrics = RequestMetrics(
            prompt_tokens=prompt, predicted_cached_tokens=predicted, measured_recomputed_tokens=recomputed,
            prefill_steps=steps, chunk_tokens=chunk, ttft_ms=ttft,
            prefill_tps=recomputed / (ttft / 1000.0) if ttft > 0 else 0.0,
            decode_tps=(len(generated) - 1) / decode_s if decode_s > 0 and len(generated) > 1 else 0.0,
            generated_tokens=len(generated), total_ms=(ended - started) * 1000.0,
            cache_used_tokens=engine.blocks.used_tokens, cache_capacity_tokens=engine.blocks.capacity_tokens,
            peak_rss_bytes=peak_rss_bytes(), queue_ms=max(0.0, (started - handle.submitted_at) * 1000.0),
            batched=batched, paused=handle.paused)
        text = engine.tokenizer.decode(generated)
        return FinalEvent(text=text, token_ids=generated, finish_reason=reason, metrics=metrics)
