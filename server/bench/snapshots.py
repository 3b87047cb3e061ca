"""snapshot_save / snapshot_restore through ``contenox.runtime_ov.snapshot`` (stateful KV files), and the
incompatible_snapshot failure (a corrupted snapshot restored)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from contenox.bench.report import FailureCase, SnapshotCase
from contenox.bench.stats import spread
from contenox.errors import ContenoxError
from contenox.runtime_ov import InstalledModel

__all__ = ["SnapshotRun", "incompatible_snapshot_case", "snapshot_cases"]


def _unavailable(reason: str) -> SnapshotCase:
    return SnapshotCase(available=False, reason=reason, tokens=0, bytes=0, ms=None, throughput_MBps=0.0,
                        output_equals_original=None)


class SnapshotRun:
    """Result of :func:`snapshot_cases`; keeps what the incompatible-snapshot probe needs."""

    def __init__(self, save: SnapshotCase, restore: SnapshotCase, failure: FailureCase) -> None:
        self.save = save
        self.restore = restore
        self.failure = failure


def incompatible_snapshot_case(reason: str) -> FailureCase:
    return FailureCase(name="incompatible_snapshot", provoked=False, how="restore a corrupted snapshot file",
                       error=None, outcome=f"not provoked: {reason}", recovery_ms=None)


def _mbps(nbytes: int, ms: float) -> float:
    return round(nbytes / 1e6 / (ms / 1000.0), 1) if ms > 0 else 0.0


def snapshot_cases(model: InstalledModel, prefix_ids: list[int], *, repeats: int, max_new: int,
                   eos: int) -> SnapshotRun:
    """Save the KV of ``prefix_ids`` ``repeats`` times, restore it into a fresh request ``repeats`` times,
    check the greedy continuation after restore equals the original, then restore a corrupted copy."""
    try:
        from contenox.runtime_ov.converted import convert
        from contenox.runtime_ov.snapshot import StatefulKV
    except ImportError as exc:
        reason = f"contenox.runtime_ov has no snapshot API in this build ({exc})"
        return SnapshotRun(_unavailable(reason), _unavailable(reason), incompatible_snapshot_case(reason))
    stops = [eos] if eos >= 0 else []
    try:
        ir = convert(model)
        kv = StatefulKV(model, ir)
    except ContenoxError as exc:
        reason = f"stateful model unavailable: {exc.kind}: {exc.message}"
        return SnapshotRun(_unavailable(reason), _unavailable(reason), incompatible_snapshot_case(reason))
    with tempfile.TemporaryDirectory(prefix="contenox-bench-kv-") as scratch:
        path = Path(scratch) / "prefix.kv"
        first = kv.feed(prefix_ids)
        save_ms: list[float] = []
        size = 0
        for _ in range(max(1, repeats)):
            info = kv.save(path)
            save_ms.append(info.ms)
            size = info.bytes
        original = [first]
        while len(original) < max_new and original[-1] not in stops:
            original.append(kv.feed([original[-1]]))
        del kv
        fresh = StatefulKV(model, ir)
        restore_ms: list[float] = []
        for _ in range(max(1, repeats)):
            fresh.reset()
            restore_ms.append(fresh.restore(path).ms)
        again = [first]
        while len(again) < max_new and again[-1] not in stops:
            again.append(fresh.feed([again[-1]]))
        equal = again == original
        tokens = len(prefix_ids)
        save = SnapshotCase(available=True, reason="stateful IR compile of the same model; query_state/set_state",
                            tokens=tokens, bytes=size, ms=spread(save_ms),
                            throughput_MBps=_mbps(size, spread(save_ms).median), output_equals_original=None)
        restore = SnapshotCase(available=True, reason="restored into a fresh infer request, then greedy decode",
                               tokens=tokens, bytes=size, ms=spread(restore_ms),
                               throughput_MBps=_mbps(size, spread(restore_ms).median), output_equals_original=equal)
        failure = _corrupt_restore(fresh, path)
    return SnapshotRun(save, restore, failure)


def _corrupt_restore(kv: object, path: Path) -> FailureCase:
    bad = path.with_name("corrupt.kv")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    bad.write_bytes(bytes(data))
    how = "restore a snapshot whose last payload byte was flipped"
    try:
        kv.restore(bad)  # type: ignore[attr-defined]
    except ContenoxError as exc:
        started = time.perf_counter()
        kv.restore(path)  # type: ignore[attr-defined]
        recovery = (time.perf_counter() - started) * 1000.0
        return FailureCase(name="incompatible_snapshot", provoked=True, how=how,
                           error=exc.to_dict() | {"type": type(exc).__name__},
                           outcome="raised; the intact snapshot then restored", recovery_ms=round(recovery, 1))
    return FailureCase(name="incompatible_snapshot", provoked=False, how=how, error=None,
                       outcome="no error raised", recovery_ms=None)
