"""The report's arithmetic and the bench command line (no model needed)."""

from __future__ import annotations

import msgspec
import pytest

from contenox.bench.options import FULL_POINTS, parse_bench_args
from contenox.bench.report import Report, decode_report
from contenox.bench.stats import compare_outputs, output_hash, spread
from contenox.errors import InvalidRequest


def test_spread_quantiles_and_bounds() -> None:
    s = spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.n, s.median, s.min, s.max) == (5, 3.0, 1.0, 5.0)
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(4.6)
    one = spread([7.5])
    assert one.median == one.p10 == one.p90 == one.min == one.max == 7.5
    with pytest.raises(ValueError):
        spread([])


def test_compare_outputs_names_the_first_divergence() -> None:
    assert compare_outputs([1, 2, 3], [1, 2, 3]).equal
    diff = compare_outputs([1, 2, 9, 4], [1, 2, 3, 4])
    assert not diff.equal and diff.first_divergent_index == 2
    shorter = compare_outputs([1, 2], [1, 2, 3])
    assert not shorter.equal and shorter.first_divergent_index == 2
    assert output_hash([1, 2, 3]) == output_hash([1, 2, 3]) != output_hash([1, 2, 4])


def test_bench_args_modes() -> None:
    quick = parse_bench_args(["--quick", "--points", "0,64,1k", "--out", "/tmp/x"])
    assert quick.model == "smollm2-135m" and quick.points == (0, 64, 1024) and quick.out_dir == "/tmp/x"
    full = parse_bench_args([])
    assert full.model == "qwen2.5-coder-0.5b" and full.points == FULL_POINTS and full.replay is None
    replay = parse_bench_args(["replay", ".", "--commits", "HEAD~3..HEAD", "--model", "m"])
    assert replay.replay_only and replay.replay is not None and replay.replay.commits == "HEAD~3..HEAD"
    assert replay.model == "m"
    with pytest.raises(InvalidRequest):
        parse_bench_args(["--replay", "."])
    with pytest.raises(InvalidRequest):
        parse_bench_args(["--points", "0,lots"])


def test_report_schema_refuses_unknown_and_missing_sections() -> None:
    with pytest.raises(msgspec.ValidationError):
        decode_report(b'{"identity": {}}')
    fields = {f.name for f in msgspec.structs.fields(Report)}
    assert {"cold_full_prefill", "warm_same_prefix", "warm_changed_suffix", "edited_stable_segment",
            "snapshot_save", "snapshot_restore", "decode", "failure_cases", "residency", "identity", "replay",
            "peer"} <= fields
