"""The quick benchmark end to end on the real default model, a tiny context and a real git history.

Runs ``contenox bench`` as a subprocess (the real entry point) once per module and checks the report's
schema and the things the report claims to have done, one section per test; it asserts no timing.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from contenox.bench.report import Report, decode_report
from contenox.host import cpu
from contenox.runtime_ov.store import InstalledModel
from support.gitrepo import git, write

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
FAILURES = {"over_context", "over_batch", "cancel_prefill", "cancel_decode", "missing_model",
            "incompatible_snapshot", "profile_mismatch"}
CANCEL_PREFILL_MAX_NEW = 8
"""``max_new_tokens`` of the cancel_prefill case (server/bench/failures.py)."""


class QuickRun(NamedTuple):
    report: Report
    json_path: Path
    repo: Path
    status_before: str
    status_after: str


def _history(root: Path) -> Path:
    """A small real repository: four commits touching Python files."""
    root.mkdir()
    git(root, "init", "-q")
    for i in range(4):
        with (root / "lib.py").open("a") as fh:
            fh.write(f"def step_{i}(x: int) -> int:\n    return x * {i + 2}\n\n")
        write(root, f"use_{i}.py", f"from lib import step_{i}\n\nprint(step_{i}(3))\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"step {i}")
    return root


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory, default_model: InstalledModel) -> QuickRun:
    """``contenox bench --quick`` run once for the whole module, in its own CONTENOX_HOME."""
    tmp = tmp_path_factory.mktemp("bench-quick")
    home = tmp / "contenox-home"
    (home / "models").mkdir(parents=True)
    (home / "models" / default_model.name).symlink_to(default_model.path, target_is_directory=True)
    shared_cache = Path(os.environ.get("CONTENOX_TEST_HOME", REPO_ROOT / ".cache" / "test-home")) / "cache"
    shared_cache.mkdir(parents=True, exist_ok=True)
    (home / "cache").symlink_to(shared_cache, target_is_directory=True)  # the stateful IR is converted once
    repo = _history(tmp / "history")
    before = git(repo, "status", "--porcelain")
    out = tmp / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "contenox", "bench", "--quick", "--points", "0,32,96", "--prefix-tokens", "64",
         "--repeats", "2", "--max-new-tokens", "4", "--max-context", "1400", "--no-peer", "--out", str(out),
         "--replay", str(repo), "--commits", "HEAD~3..HEAD", "--max-turns", "2"],
        capture_output=True, text=True, timeout=600, env=os.environ | {"CONTENOX_HOME": str(home)}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [json_path] = out.glob("*-smollm2-135m-quick.json")
    return QuickRun(decode_report(json_path.read_bytes()), json_path, repo, before,
                    git(repo, "status", "--porcelain"))


@pytest.fixture(scope="module")
def rep(quick: QuickRun) -> Report:
    return quick.report


def test_identity(rep: Report) -> None:
    assert rep.identity.model == "smollm2-135m" and rep.identity.mode == "quick"
    assert rep.identity.digests["model"] == rep.identity.profile["model_digest"]
    assert rep.identity.openvino_genai_version.startswith("2026.4")
    assert rep.peer is None  # --no-peer
    assert (rep.identity.cpu, rep.identity.cpu_features) == cpu()  # the machine's, as its timings depend on it


def test_cold_full_prefill(rep: Report) -> None:
    cold = rep.cold_full_prefill
    assert cold.tokens > 64
    assert cold.ttft_ms.n == 2 and cold.ttft_ms.min <= cold.ttft_ms.median <= cold.ttft_ms.max
    assert len(cold.output_hashes) == 2 and cold.memory_high_water > 0


def test_warm_same_prefix(rep: Report) -> None:
    same = rep.warm_same_prefix
    assert same.cached_tokens > 0 and same.new_tokens > 0
    assert 0.0 < same.measured_hit_rate_min <= same.hit_rate < 1.0
    assert abs(same.measured_recomputed_tokens - same.new_tokens) <= rep.identity.chunk_tokens
    assert same.vs_cold.compared_tokens > 0
    assert same.vs_cold.equal == (same.vs_cold.first_divergent_index is None)


def test_warm_changed_suffix_curve(rep: Report) -> None:
    curve = rep.warm_changed_suffix
    assert [p.changed_tokens for p in curve.points] == [0, 32, 96] and curve.skipped_points == []
    for point in curve.points:
        assert point.cached_tokens > 0 and point.suffix_tokens >= point.changed_tokens
        assert point.floor_ttft_ms.n == point.ttft_ms.n == 2 and point.overhead_ratio > 0
        assert point.output_equals_cold == point.vs_cold.equal
        # the block model's prediction agrees with the step count within one chunk
        assert abs(point.measured_recomputed_tokens - point.suffix_tokens) <= rep.identity.chunk_tokens


def test_edited_stable_segment(rep: Report) -> None:
    edited = rep.edited_stable_segment
    assert 0 < edited.edit_at_token < edited.prompt_tokens
    assert edited.expected_cache_miss == edited.predicted_cache_miss
    assert abs(edited.actual_cache_miss - edited.expected_cache_miss) <= rep.identity.chunk_tokens


def test_snapshot_save_and_restore(rep: Report) -> None:
    assert rep.snapshot_save.available and rep.snapshot_restore.available, rep.snapshot_save.reason
    assert rep.snapshot_save.bytes > 0 and rep.snapshot_restore.output_equals_original is True


def test_decode(rep: Report) -> None:
    assert rep.decode.output_tokens > 0 and rep.decode.tokens_per_sec.median > 0


def test_every_failure_case_provoked_and_recovered(rep: Report) -> None:
    assert {case.name for case in rep.failure_cases} == FAILURES
    for case in rep.failure_cases:
        assert case.provoked and case.error is not None, case
        assert case.recovery_ms is not None and case.recovery_ms > 0, case


@pytest.mark.parametrize(("name", "kind"), [("over_context", "over_context"), ("over_batch", "over_batch"),
                                            ("missing_model", "model_not_found"),
                                            ("incompatible_snapshot", "incompatible_snapshot")])
def test_failure_case_error_kind(rep: Report, name: str, kind: str) -> None:
    [case] = [c for c in rep.failure_cases if c.name == name]
    assert case.error is not None and case.error["kind"] == kind, case


def test_cancel_in_prefill_stops_the_request(rep: Report) -> None:
    """A cancel sent 0.3 s into an uncached prefill stops the request before its 8 tokens.

    Where the cancel lands is timing: on a loaded machine the prefill can finish and the first token(s)
    come out before the engine sees it. What is deterministic: the request ends ``cancelled`` with fewer
    tokens than requested, and when no token came out, the prefill stopped at a chunk boundary short of
    the prompt (the engine saw the cancel in prefill).
    """
    [case] = [c for c in rep.failure_cases if c.name == "cancel_prefill"]
    err = case.error
    assert case.provoked and err is not None, case
    assert err["finish_reason"] == "cancelled" and err["kind"] == "cancelled", err
    chunk = rep.identity.chunk_tokens
    assert err["prompt_tokens"] > chunk, err  # several chunks: there is a prefill to cancel into
    assert err["generated_tokens"] < CANCEL_PREFILL_MAX_NEW, err
    if err["generated_tokens"] == 0:
        assert err["prefill_steps"] < math.ceil(err["prompt_tokens"] / chunk), err


def test_cancel_in_decode(rep: Report) -> None:
    [case] = [c for c in rep.failure_cases if c.name == "cancel_decode"]
    assert case.error is not None and case.error["finish_reason"] == "cancelled", case
    assert 3 <= case.error["generated_tokens"] < 200, case  # cancelled after the 3rd of 200 tokens


def test_residency(rep: Report) -> None:
    assert rep.residency.resident_models == ["smollm2-135m"] and rep.residency.host_memory_peak > 0


def test_replay_orders_and_caches(rep: Report) -> None:
    replay = rep.replay
    assert replay is not None and replay.summary is not None
    assert len(replay.contenox) == len(replay.naive) == 2
    assert {t.ordering for t in replay.contenox} == {"contenox"} and {t.ordering for t in replay.naive} == {"naive"}
    assert all(t.commit for t in replay.contenox) and replay.summary.turns == 2
    assert replay.summary.contenox_cached_share > replay.summary.naive_cached_share


def test_replay_leaves_the_working_tree_alone(quick: QuickRun) -> None:
    assert quick.status_after == quick.status_before, "the replay touched the user's working tree"


def test_chart_png(quick: QuickRun) -> None:
    pytest.importorskip("matplotlib")
    png = quick.json_path.with_suffix(".png")
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
