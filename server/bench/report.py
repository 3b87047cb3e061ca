"""The benchmark report's schema: one msgspec Struct per section, exactly the issue's sections.

Timed figures are :class:`Spread` (n, median, p10/p90, min/max) in milliseconds unless the name says
otherwise. ``ms`` is what the caller sees end to end (planning + submit + first token through the
engine's asyncio API); ``ttft_ms`` is the engine's own time to first token; ``floor_ttft_ms`` is the
bare pipeline's TTFT for the same ids (see :mod:`contenox.runtime_ov.reference`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from contenox.bench.stats import Comparison, Spread

__all__ = [
    "ColdFullPrefill", "Decode", "EditedStableSegment", "FailureCase", "Identity", "PeerSection", "ReplaySection",
    "ReplaySummary", "ReplayTurn", "Report", "Residency", "SnapshotCase", "SuffixPoint", "WarmChangedSuffix",
    "WarmSamePrefix", "decode_report", "encode_report",
]

SCHEMA_VERSION = 1


class ColdFullPrefill(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    tokens: int
    ms: Spread
    prompt_tps: Spread
    ttft_ms: Spread
    memory_high_water: int
    """Peak RSS of the benchmark process after the cold runs (bytes)."""
    floor_ttft_ms: Spread
    overhead_ratio: float
    output_hashes: list[str]
    engine_vs_bare_cold: Comparison | None = None
    """Control: the engine's cold output against the bare cold pipeline's for the same ids (both
    cold). Unequal means warm-vs-cold differences may come from the pipelines' settings, not the cache."""


class WarmSamePrefix(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    cached_tokens: int
    """Predicted by the engine's block model."""
    new_tokens: int
    measured_recomputed_tokens: int
    ms: Spread
    ttft_ms: Spread
    hit_rate: float
    """cached_tokens / prompt tokens (block model)."""
    measured_hit_rate_min: float
    """1 - measured recomputed / prompt: the measured lower bound (recomputed is exact to one chunk)."""
    floor_ttft_ms: Spread
    overhead_ratio: float
    vs_cold: Comparison


class SuffixPoint(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    changed_tokens: int
    """The curve's nominal point (0, 256, 1k, ...)."""
    cached_tokens: int
    suffix_tokens: int
    """Tokens of the prompt after the cached prefix (the changed segment plus the fixed tail)."""
    measured_recomputed_tokens: int
    ms: Spread
    ttft_ms: Spread
    floor_ttft_ms: Spread
    overhead_ratio: float
    cold_ttft_ms: Spread
    output_equals_cold: bool
    vs_cold: Comparison


class WarmChangedSuffix(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    prefix_tokens: int
    points: list[SuffixPoint]
    requested_points: list[int]
    skipped_points: list[str]
    """Points not measured, each with why (over the tested context, out of time)."""


class EditedStableSegment(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    prompt_tokens: int
    edit_at_token: int
    expected_cache_miss: int
    """Recomputed tokens implied by the edit: everything from the edited 32-token block on."""
    predicted_cache_miss: int
    """What the engine's block model predicted (prompt - predicted cached)."""
    actual_cache_miss: int
    """Recomputed tokens measured from prefill steps (within one chunk)."""
    ttft_ms: Spread
    floor_ttft_ms: Spread
    output_equals_cold: bool
    vs_cold: Comparison


class SnapshotCase(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    available: bool
    reason: str
    tokens: int
    bytes: int
    ms: Spread | None
    throughput_MBps: float
    output_equals_original: bool | None


class Decode(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    output_tokens: int
    tokens_per_sec: Spread
    floor_tokens_per_sec: Spread
    output_hashes: list[str]


class FailureCase(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str
    provoked: bool
    how: str
    error: dict[str, Any] | None
    """The structured error (code, kind, message, details) or outcome the caller saw."""
    outcome: str
    recovery_ms: float | None
    """Time from the failure to the next request's first token (or the next successful call)."""


class Residency(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    resident_models: list[str]
    on_demand_models: list[str]
    load_ms: float
    unload_ms: float
    host_memory_peak: int
    swap_events: int
    """Major page faults of this process during the run plus pages swapped in/out system-wide."""


class Identity(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    model: str
    profile: dict[str, Any]
    digests: dict[str, str]
    openvino_version: str
    openvino_genai_version: str
    contenox_version: str
    cpu: str
    cores: int
    threads: int
    date: str
    mode: str
    chunk_tokens: int
    cache_size_gb: float
    max_new_tokens: int
    repetition_penalty: float = 1.0
    load_average: list[float]
    path: str
    """What the warm cases ran through, e.g. "planner+engine"."""
    cpu_features: list[str] = msgspec.field(default_factory=list)
    """The CPU's instruction sets OpenVINO's kernels depend on (``contenox.host.CPU_FEATURES``): timings are
    read beside them (empty in reports written before they were recorded)."""


class ReplayTurn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    commit: str
    subject: str
    ordering: str
    """"contenox" (stable segments first) or "naive" (volatile first, timestamped system prompt)."""
    prompt_tokens: int
    segments_cached: int
    segments_new: int
    predicted_cached_tokens: int
    predicted_recomputed_tokens: int
    measured_recomputed_tokens: int
    cached_share: float
    ttft_ms: float
    changed_segments: list[str]
    segment_tokens: dict[str, int]
    """contenox: tokens per planner segment; naive: the number of chat messages."""
    reusable_tokens: int = 0
    """contenox: material earlier turns of the thread already sent (everything before this turn's entry)."""
    reuse_efficiency: float | None = None
    """contenox: measured cached tokens / reusable tokens (capped at 1)."""
    floor_ttft_ms: float | None = None
    """contenox: the turn's new tokens alone, prefilled with nothing cached (the suffix-only floor)."""
    cache_evidence: str = "steps"
    """Where ``measured_recomputed_tokens`` comes from (:class:`~contenox.runtime_ov.RequestMetrics`): the engine's
    prefill steps, or a serving engine's own cached count ("server")."""
    server_cached_tokens: int | None = None
    """The cached prompt tokens a serving engine reported for this turn (None: not a serving engine, or none)."""


class ReplaySummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    turns: int
    contenox_ttft_ms: Spread
    naive_ttft_ms: Spread
    mean_ttft_ratio: float
    """naive mean TTFT / contenox mean TTFT (above 1: contenox is faster)."""
    median_ttft_ratio: float
    contenox_cached_share: float
    naive_cached_share: float
    cached_share_ratio: float
    prediction_max_error_tokens: int
    reuse_efficiency: Spread | None = None
    """Per-turn cached / reusable tokens of the contenox ordering (median and p10 are the gate)."""
    ttft_vs_floor: Spread | None = None
    """Per-turn contenox TTFT / suffix-only floor TTFT (target: median <= 1.2)."""
    ttft_ratio_naive: Spread | None = None
    """Per-turn naive TTFT / contenox TTFT."""


class ReplaySection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    repo: str
    commits: str
    model: str
    contenox: list[ReplayTurn]
    naive: list[ReplayTurn]
    summary: ReplaySummary | None


class PeerSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str
    version: str
    available: bool
    reason: str
    prompt_tokens: int
    suffix_tokens: int
    cold_ttft_ms: Spread | None
    warm_ttft_ms: Spread | None
    decode_tps: Spread | None
    ours_cold_ttft_ms: Spread | None
    ours_warm_ttft_ms: Spread | None
    ours_decode_tps: Spread | None
    peer_output_hash: str
    ours_output_hash: str


class Report(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    schema_version: int = SCHEMA_VERSION
    identity: Identity
    cold_full_prefill: ColdFullPrefill
    warm_same_prefix: WarmSamePrefix
    warm_changed_suffix: WarmChangedSuffix
    edited_stable_segment: EditedStableSegment
    snapshot_save: SnapshotCase
    snapshot_restore: SnapshotCase
    decode: Decode
    failure_cases: list[FailureCase]
    residency: Residency
    replay: ReplaySection | None
    peer: PeerSection | None
    notes: list[str]
    wall_s: float


def encode_report(obj: msgspec.Struct) -> bytes:
    return msgspec.json.format(msgspec.json.encode(obj), indent=2) + b"\n"


def decode_report(data: bytes) -> Report:
    return msgspec.json.decode(data, type=Report)
