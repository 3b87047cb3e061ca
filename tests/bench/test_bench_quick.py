"""The quick benchmark end to end on the real default model, a tiny context and a real git history.

Runs ``contenox bench`` as a subprocess (the real entry point) and validates the report's schema
and the things the report claims to have done; it asserts no timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contenox.bench.report import Report, decode_report

REPO_ROOT = Path(__file__).resolve().parents[2]
FAILURES = {"over_context", "over_batch", "cancel_prefill", "cancel_decode", "missing_model",
            "incompatible_snapshot", "profile_mismatch"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


def _history(root: Path) -> Path:
    """A small real repository: four commits touching Python files."""
    root.mkdir()
    _git(root, "init", "-q")
    for i in range(4):
        with (root / "lib.py").open("a") as fh:
            fh.write(f"def step_{i}(x: int) -> int:\n    return x * {i + 2}\n\n")
        (root / f"use_{i}.py").write_text(f"from lib import step_{i}\n\nprint(step_{i}(3))\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"step {i}")
    return root


@pytest.fixture
def report(home: Path, tmp_path: Path) -> tuple[Report, Path, Path]:
    shared_cache = Path(os.environ.get("CONTENOX_TEST_HOME", REPO_ROOT / ".cache" / "test-home")) / "cache"
    shared_cache.mkdir(parents=True, exist_ok=True)
    (home / "cache").symlink_to(shared_cache, target_is_directory=True)  # the stateful IR is converted once
    repo = _history(tmp_path / "history")
    head_before = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True,
                                 text=True, check=True).stdout
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "contenox", "bench", "--quick", "--points", "0,32,96", "--prefix-tokens", "64",
         "--repeats", "2", "--max-new-tokens", "4", "--max-context", "1400", "--no-peer", "--out", str(out),
         "--replay", str(repo), "--commits", "HEAD~3..HEAD", "--max-turns", "2"],
        capture_output=True, text=True, timeout=600, env=os.environ | {"CONTENOX_HOME": str(home)}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                          check=True).stdout == head_before, "the replay touched the user's working tree"
    [json_path] = out.glob("*-smollm2-135m-quick.json")
    return decode_report(json_path.read_bytes()), json_path, repo


def test_quick_report_schema_and_contents(report: tuple[Report, Path, Path]) -> None:
    rep, json_path, _repo = report
    assert rep.identity.model == "smollm2-135m" and rep.identity.mode == "quick"
    assert rep.identity.digests["model"] == rep.identity.profile["model_digest"]
    assert rep.identity.openvino_genai_version.startswith("2026.4")

    cold = rep.cold_full_prefill
    assert cold.tokens > 64 and cold.ttft_ms.n == 2 and cold.ttft_ms.min <= cold.ttft_ms.median <= cold.ttft_ms.max
    assert len(cold.output_hashes) == 2 and cold.memory_high_water > 0

    same = rep.warm_same_prefix
    assert same.cached_tokens > 0 and same.new_tokens > 0 and 0.0 < same.measured_hit_rate_min <= same.hit_rate < 1.0
    assert abs(same.measured_recomputed_tokens - same.new_tokens) <= rep.identity.chunk_tokens
    assert same.vs_cold.compared_tokens > 0 and same.vs_cold.equal == (same.vs_cold.first_divergent_index is None)

    curve = rep.warm_changed_suffix
    assert [p.changed_tokens for p in curve.points] == [0, 32, 96] and curve.skipped_points == []
    for point in curve.points:
        assert point.cached_tokens > 0 and point.suffix_tokens >= point.changed_tokens
        assert point.floor_ttft_ms.n == point.ttft_ms.n == 2 and point.overhead_ratio > 0
        assert point.output_equals_cold == point.vs_cold.equal
        # the block model's prediction agrees with the step count within one chunk
        assert abs(point.measured_recomputed_tokens - point.suffix_tokens) <= rep.identity.chunk_tokens

    edited = rep.edited_stable_segment
    assert 0 < edited.edit_at_token < edited.prompt_tokens
    assert edited.expected_cache_miss == edited.predicted_cache_miss
    assert abs(edited.actual_cache_miss - edited.expected_cache_miss) <= rep.identity.chunk_tokens

    assert rep.snapshot_save.available and rep.snapshot_restore.available, rep.snapshot_save.reason
    assert rep.snapshot_save.bytes > 0 and rep.snapshot_restore.output_equals_original is True

    assert rep.decode.output_tokens > 0 and rep.decode.tokens_per_sec.median > 0

    by_name = {case.name: case for case in rep.failure_cases}
    assert set(by_name) == FAILURES
    for case in rep.failure_cases:
        assert case.provoked and case.error is not None, case
        assert case.recovery_ms is not None and case.recovery_ms > 0
    assert by_name["over_context"].error["kind"] == "over_context"
    assert by_name["over_batch"].error["kind"] == "over_batch"
    assert by_name["missing_model"].error["kind"] == "model_not_found"
    assert by_name["incompatible_snapshot"].error["kind"] == "incompatible_snapshot"
    assert by_name["cancel_prefill"].error["generated_tokens"] == 0
    assert by_name["cancel_decode"].error["finish_reason"] == "cancelled"

    assert rep.residency.resident_models == ["smollm2-135m"] and rep.residency.host_memory_peak > 0

    replay = rep.replay
    assert replay is not None and replay.summary is not None
    assert len(replay.contenox) == len(replay.naive) == 2
    assert {t.ordering for t in replay.contenox} == {"contenox"} and {t.ordering for t in replay.naive} == {"naive"}
    assert all(t.commit for t in replay.contenox) and replay.summary.turns == 2
    assert replay.summary.contenox_cached_share > replay.summary.naive_cached_share
    assert rep.peer is None  # --no-peer

    png = json_path.with_suffix(".png")
    pytest.importorskip("matplotlib")
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
