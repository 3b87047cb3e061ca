"""Golden files: the rendered segments of a sample turn and its explain-context table and JSON.

Regenerate after an intended change with ``CONTENOX_UPDATE_GOLDEN=1 pytest tests/planner`` and
review the diff (refused when ``CI`` is set: CI never rewrites goldens).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from contenox.planner import render_explain
from contenox.planner.segments import render_segments
from support.golden import check_golden
from support.planner_samples import sample_inputs

GOLDEN = Path(__file__).parent / "golden"


def _check(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


def _turn_two(make_planner):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="transfer() never checks the balance.")
    return planner


def test_rendered_segments_golden(make_planner):
    planner = _turn_two(make_planner)
    plan = planner.plan(sample_inputs(user="Show the fix as a diff."))
    draft, *_ = planner._draft(sample_inputs(user="Show the fix as a diff."), planner._records)
    out = []
    block = planner.tool_frame.block if planner.tool_frame else ""
    rendered = render_segments(planner.frame, planner.prompts, draft, tools=block)
    for seg, rec in zip(rendered, plan.manifest.segments, strict=True):
        out.append(f"===== {rec.kind} [{rec.token_start}:{rec.token_end}] {rec.cache_class} =====")
        out.append("".join(seg.parts))
    _check("segments.txt", "\n".join(out) + "\n")


class _Metrics(msgspec.Struct, frozen=True):
    measured_recomputed_tokens: int
    ttft_ms: float


def test_explain_table_and_json_golden(make_planner):
    planner = _turn_two(make_planner)
    plan = planner.plan(sample_inputs(user="Show the fix as a diff.", pins=sample_inputs().pins[:1]),
                        predict_cached=lambda ids: 544)
    explain = planner.record(plan, _Metrics(measured_recomputed_tokens=len(plan.token_ids) - 512, ttft_ms=812.345),
                             answer_text="Here it is.")
    _check("explain.txt", render_explain(explain))
    _check("explain.json", json.dumps(explain.to_json(), indent=2) + "\n")


def test_update_golden_is_refused_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTENOX_UPDATE_GOLDEN", "1")
    monkeypatch.setenv("CI", "true")
    path = tmp_path / "golden.txt"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="refused when CI is set"):
        check_golden(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"
