"""Golden files: the rendered segments of a sample turn and its explain-context table and JSON.

Regenerate after an intended change with ``CONTENOX_UPDATE_GOLDEN=1 pytest tests/planner`` and
review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
from planner_samples import GOLDEN, sample_inputs

from contenox.planner import render_explain
from contenox.planner.segments import render_segments


def _check(name: str, text: str) -> None:
    path: Path = GOLDEN / name
    if os.environ.get("CONTENOX_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; run with CONTENOX_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def _turn_two(make_planner):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="transfer() never checks the balance.")
    return planner


def test_rendered_segments_golden(make_planner):
    planner = _turn_two(make_planner)
    plan = planner.plan(sample_inputs(user="Show the fix as a diff."))
    draft, *_ = planner._draft(sample_inputs(user="Show the fix as a diff."), planner._records)
    out = []
    rendered = render_segments(planner.frame, planner.prompts, draft, tools=planner.tools)
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
