"""Explain-context says where its cache figures come from: the engine's prefill steps, the serving engine's own
cached-token count (measured), or the block model's prediction alone (a server that reports none)."""

from __future__ import annotations

from contenox.planner import render_explain, render_markdown
from contenox.runtime_ov import RequestMetrics
from support.planner_samples import sample_inputs


def _metrics(prompt: int, recomputed: int, evidence: str, server_cached: int | None) -> RequestMetrics:
    return RequestMetrics(prompt_tokens=prompt, predicted_cached_tokens=0, measured_recomputed_tokens=recomputed,
                          prefill_steps=0, chunk_tokens=256, ttft_ms=120.0, prefill_tps=0.0, decode_tps=0.0,
                          generated_tokens=3, total_ms=200.0, cache_used_tokens=0, cache_capacity_tokens=0,
                          peak_rss_bytes=0, cache_evidence=evidence, server_cached_tokens=server_cached)


def test_a_server_reported_count_is_shown_as_measured(make_planner) -> None:
    planner = make_planner()
    plan = planner.plan(sample_inputs(), predict_cached=lambda ids: 64)
    total = len(plan.token_ids)
    explain = planner.record(plan, _metrics(total, total - 96, "server", 96), answer_text="ok")
    assert explain.cache_evidence == "server" and explain.server_cached_tokens == 96
    assert explain.measured_recomputed_tokens == total - 96
    text = render_explain(explain)
    assert (f"predicted cached 64, server cached 96 (measured by the serving engine), recomputed {total - 96}, "
            "ttft 120.0 ms") in text
    assert "· server cached 96 ·" in render_markdown(explain)
    assert explain.to_json()["server_cached_tokens"] == 96


def test_a_server_that_reports_nothing_leaves_the_prediction_and_says_so(make_planner) -> None:
    planner = make_planner()
    plan = planner.plan(sample_inputs(), predict_cached=lambda ids: 64)
    total = len(plan.token_ids)
    explain = planner.record(plan, _metrics(total, total - 64, "predicted", None), answer_text="ok")
    assert explain.cache_evidence == "predicted" and explain.measured_recomputed_tokens is None
    assert "predicted cached 64, measured -: the serving engine reports no cached tokens (predicted only)" \
        in render_explain(explain)
    assert "predicted (the server reports no cached tokens)" in render_markdown(explain)


def test_the_local_engine_keeps_its_step_measurement(make_planner) -> None:
    planner = make_planner()
    plan = planner.plan(sample_inputs(), predict_cached=lambda ids: 64)
    explain = planner.record(plan, _metrics(len(plan.token_ids), 40, "steps", None), answer_text="ok")
    assert "predicted cached 64, measured recomputed 40" in render_explain(explain)
    assert explain.cache_evidence == "steps"
