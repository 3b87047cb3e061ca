"""Per-request metrics and engine statistics (what explain-context and the benchmarks read)."""

from __future__ import annotations

import resource
import sys

import msgspec

__all__ = ["EngineStats", "RequestMetrics", "peak_rss_bytes"]


class RequestMetrics(msgspec.Struct, frozen=True, kw_only=True):
    prompt_tokens: int
    predicted_cached_tokens: int
    """Block-model prediction made when the request started."""
    measured_recomputed_tokens: int
    """min(prompt_tokens, prefill_steps * chunk_tokens): an upper bound within one chunk."""
    prefill_steps: int
    """Engine steps until the first token (one request in flight: ceil(recomputed / chunk))."""
    chunk_tokens: int
    ttft_ms: float
    prefill_tps: float
    decode_tps: float
    generated_tokens: int
    total_ms: float
    cache_used_tokens: int
    cache_capacity_tokens: int
    peak_rss_bytes: int
    queue_ms: float = 0.0
    batched: bool = False
    """Another request shared the pipeline's steps (an inline completion beside a chat turn)."""
    paused: int = 0
    """Times a more urgent request paused this one in prefill (what it had computed stayed cached)."""
    cache_evidence: str = "steps"
    """Where ``measured_recomputed_tokens`` comes from: "steps" (the engine's prefill step count), "server" (a
    serving engine reported its cached tokens: ``server_cached_tokens``) or "predicted" (a serving engine that
    reports none: the block model's prediction stands, nothing was measured)."""
    server_cached_tokens: int | None = None
    """Prompt tokens the serving engine said it served from its prefix cache (None: not reported)."""


class EngineStats(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    device: str
    cache_capacity_tokens: int
    cache_used_tokens: int
    kv_bytes_per_token: int
    """Measured from the pipeline once it allocated its cache; the estimate before that."""
    chunk_tokens: int
    queue_depth: int
    running: bool
    requests_done: int
    sessions: int
    """Distinct session ids among finished requests."""


def peak_rss_bytes() -> int:
    """Peak resident set size of this process."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)
