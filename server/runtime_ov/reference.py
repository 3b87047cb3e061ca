"""Bare pipelines: no prefix policy, no planner, no engine thread.

A bare OpenVINO GenAI ``ContinuousBatchingPipeline`` driven step by step on the calling thread with
the token ids it is given. ``contenox bench`` uses it as the references its warm cases are measured
against: with ``prefix_caching=True`` it is the floor under the warm cases (the raw pipeline's TTFT for
the same suffix); with ``prefix_caching=False`` it is the cold reference whose greedy output every warm
case is compared with. The product never calls it. It lives here because only ``runtime_ov`` imports
openvino.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import EngineError
from contenox.runtime_ov.gguf_header import check_weights

__all__ = ["BarePipeline", "BareRun", "openvino_versions"]


class BareRun(msgspec.Struct, frozen=True, kw_only=True):
    prompt_tokens: int
    ttft_ms: float
    prefill_steps: int
    """step() calls before the first token: ceil(recomputed prompt tokens / chunk)."""
    total_ms: float
    output_ids: list[int]

    @property
    def decode_tps(self) -> float:
        decode_ms = self.total_ms - self.ttft_ms
        extra = len(self.output_ids) - 1
        return extra / (decode_ms / 1000.0) if extra > 0 and decode_ms > 0 else 0.0


def openvino_versions() -> dict[str, str]:
    import openvino
    import openvino_genai

    return {"openvino": str(openvino.get_version()), "openvino_genai": str(openvino_genai.__version__)}


class BarePipeline:
    """One bare pipeline on the model's weights, driven step by step on the calling thread.

    The weights are checked first (:func:`~contenox.runtime_ov.gguf_header.check_weights`), like
    ``Engine.start`` does: weights OpenVINO would crash on raise ProfileMismatch instead.
    """

    def __init__(self, weights: Path, *, prefix_caching: bool, chunk_tokens: int, cache_size_gb: float,
                 threads: int = 0, device: str = "CPU", repetition_penalty: float = 1.0) -> None:
        import openvino_genai as ov_genai

        check_weights(weights)
        sc = ov_genai.SchedulerConfig()
        sc.enable_prefix_caching = prefix_caching
        sc.cache_size = max(1, round(cache_size_gb)) if cache_size_gb >= 1 else 1
        sc.max_num_batched_tokens = chunk_tokens
        sc.dynamic_split_fuse = True
        sc.max_num_seqs = 4
        props: dict[str, Any] = {}
        if threads:
            props["INFERENCE_NUM_THREADS"] = threads
        self.chunk_tokens = chunk_tokens
        self.prefix_caching = prefix_caching
        self.repetition_penalty = repetition_penalty
        """The engine's; without it the references decode differently from the engine by design."""
        started = time.perf_counter()
        try:
            self._pipe = ov_genai.ContinuousBatchingPipeline(str(weights), sc, device, props)
        except RuntimeError as exc:
            raise EngineError(f"bare pipeline cannot load {weights}: {exc}", path=str(weights)) from exc
        self.load_ms = (time.perf_counter() - started) * 1000.0
        self._ov_genai = ov_genai
        self._next_id = 0

    def run(self, token_ids: Sequence[int], max_new_tokens: int, *, eos_token_id: int = -1) -> BareRun:
        """Greedy generation of ``token_ids``; TTFT is measured at the first generated token."""
        import numpy as np
        import openvino as ov

        cfg = self._ov_genai.GenerationConfig()
        cfg.max_new_tokens = max_new_tokens
        cfg.do_sample = False
        if self.repetition_penalty != 1.0:
            cfg.repetition_penalty = self.repetition_penalty
        if eos_token_id >= 0:  # stop like the engine does, so outputs compare token for token
            cfg.eos_token_id = eos_token_id
            cfg.stop_token_ids = {eos_token_id}
        else:
            cfg.ignore_eos = True
        tensor = ov.Tensor(np.array([list(token_ids)], dtype=np.int64))
        self._next_id += 1
        started = time.perf_counter()
        handle = self._pipe.add_request(self._next_id, tensor, cfg)
        steps = 0
        out: list[int] = []
        ttft_ms = 0.0
        try:
            while self._pipe.has_non_finished_requests():
                self._pipe.step()
                if not out:
                    steps += 1
                if handle.can_read():
                    for output in handle.read().values():
                        if not out:
                            ttft_ms = (time.perf_counter() - started) * 1000.0
                        out.extend(int(t) for t in output.generated_ids)
        except RuntimeError as exc:
            raise EngineError(f"bare pipeline failed: {exc}") from exc
        total_ms = (time.perf_counter() - started) * 1000.0
        return BareRun(prompt_tokens=len(token_ids), ttft_ms=ttft_ms, prefill_steps=steps, total_ms=total_ms,
                       output_ids=out[:max_new_tokens])
