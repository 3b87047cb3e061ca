"""snapshot_save / snapshot_restore through the runtime's snapshot API, when the runtime has one."""

from __future__ import annotations

import logging

from contenox.benchmark.harness import Harness
from contenox.benchmark.report import FailureCase, SnapshotCase

__all__ = ["incompatible_snapshot_case", "snapshot_cases"]

log = logging.getLogger(__name__)


def _unavailable(reason: str) -> SnapshotCase:
    return SnapshotCase(available=False, reason=reason, tokens=0, bytes=0, ms=None, throughput_MBps=0.0,
                        output_equals_original=None)


def snapshot_cases(h: Harness, prefix_ids: list[int], repeats: int, max_new: int) -> tuple[SnapshotCase,
                                                                                            SnapshotCase]:
    """(save, restore) measured on ``prefix_ids``; unavailable cases say why."""
    try:
        from contenox.runtime_ov import snapshot  # type: ignore[attr-defined]
    except ImportError as exc:
        reason = f"contenox.runtime_ov has no snapshot API in this build ({exc})"
        return _unavailable(reason), _unavailable(reason)
    del snapshot
    reason = "snapshot API present but not wired into the benchmark yet"
    return _unavailable(reason), _unavailable(reason)


def incompatible_snapshot_case(save: SnapshotCase) -> FailureCase:
    """Restore a snapshot into an incompatible model (or a corrupt file); unavailable without snapshots."""
    return FailureCase(name="incompatible_snapshot", provoked=False, how="restore a corrupted snapshot file",
                       error=None, outcome=f"not provoked: {save.reason}", recovery_ms=None)
