"""Spread of repeated timings, output hashes, and the warm-vs-cold output comparison."""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence

import msgspec

__all__ = ["Comparison", "Spread", "compare_outputs", "output_hash", "spread"]


class Spread(msgspec.Struct, frozen=True, kw_only=True):
    """Every timed figure carries its spread: n runs, median, p10/p90 and min/max."""

    n: int
    median: float
    p10: float
    p90: float
    min: float
    max: float


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    low = int(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def spread(values: Sequence[float]) -> Spread:
    """The spread of ``values`` (linear-interpolated quantiles); an empty list is an error."""
    if not values:
        raise ValueError("spread of no values")
    ordered = sorted(float(v) for v in values)
    return Spread(n=len(ordered), median=round(statistics.median(ordered), 3), p10=round(_quantile(ordered, 0.1), 3),
                  p90=round(_quantile(ordered, 0.9), 3), min=round(ordered[0], 3), max=round(ordered[-1], 3))


def output_hash(token_ids: Sequence[int]) -> str:
    """A short stable hash of generated token ids (catches nondeterminism across runs)."""
    data = b"".join(int(t).to_bytes(4, "little", signed=False) for t in token_ids)
    return hashlib.sha256(data).hexdigest()[:16]


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """A warm output against the cold output of the same token ids, both greedy."""

    equal: bool
    first_divergent_index: int | None
    """Index of the first differing generated token; None when equal."""
    compared_tokens: int
    warm_hash: str
    cold_hash: str


def compare_outputs(warm: Sequence[int], cold: Sequence[int]) -> Comparison:
    n = min(len(warm), len(cold))
    first: int | None = None
    for i in range(n):
        if warm[i] != cold[i]:
            first = i
            break
    if first is None and len(warm) != len(cold):
        first = n
    return Comparison(equal=first is None, first_divergent_index=first, compared_tokens=n,
                      warm_hash=output_hash(warm), cold_hash=output_hash(cold))
