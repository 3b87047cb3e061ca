"""The planner against the real engine (SmolLM2-135M): predictions checked by step counts, and the
cache policy keeping an idle workspace's stable prefix warm through a flood of large log turns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import PlannerConfig
from contenox.node.cache_policy import CachePolicy
from contenox.planner import Pin, Planner, TurnPlan
from contenox.runtime_ov import Engine, EngineOptions, GenerateRequest, InstalledModel, Priority
from contenox.runtime_ov.kv_layout import read_kv_layout
from support.planner_samples import sample_inputs

pytestmark = pytest.mark.slow

CHUNK = 64
BLOCKS = 64
"""A small KV cache (64 blocks of 32 tokens) so a few log turns fill it."""
NEW = 4


@pytest.fixture(scope="module")
def engine(default_model: InstalledModel) -> Iterator[Engine]:
    layout = read_kv_layout(default_model.weights)
    assert layout is not None
    per_token = layout.bytes_per_token(default_model.profile.kv_precision)
    gb = (BLOCKS + 0.5) * 32 * per_token / (1 << 30)
    eng = Engine.start(default_model, EngineOptions(cache_size_gb=gb, chunk_tokens=CHUNK, max_new_tokens=NEW))
    assert eng.stats().cache_capacity_tokens == BLOCKS * 32
    yield eng
    eng.close()


def _planner(engine: Engine, tmp_path: Path, name: str, **config: int) -> Planner:
    return Planner(engine.tokenizer, engine.profile, PlannerConfig(**config), tmp_path / name, backend_version="test")


async def _run(engine: Engine, session: str, plan: TurnPlan, policy: CachePolicy | None = None,
               act: bool = False):
    """One turn on the engine; the policy (reading the engine's block model) acts only when ``act``."""
    if policy is not None and act:
        for order in policy.before_request(session, plan.token_ids, max_new_tokens=NEW):
            await engine.warm(order.session_id, order.token_ids)
    return await engine.submit(GenerateRequest(session_id=session, token_ids=plan.token_ids, max_new_tokens=NEW,
                                               priority=Priority.INTERACTIVE)).result()


async def test_predicted_cached_tokens_match_measured_recomputed_within_one_chunk(engine, tmp_path):
    planner = _planner(engine, tmp_path, "predict")
    seed = "prediction test: "
    turns = [
        sample_inputs(user=seed + "why does test_transfer fail?"),
        sample_inputs(user=seed + "and with a negative amount?"),  # only the user text changed
        sample_inputs(user=seed + "and now?", pins=(sample_inputs().pins[0], Pin(
            path="bank/transfer.py", text="def transfer(src, dst, amount):\n    raise NotImplementedError\n"))),
        sample_inputs(user=seed + "and now?", terminal="", diff=""),
    ]
    seen = []
    plans = []
    for inputs in turns:
        plan = planner.plan(inputs, predict_cached=engine.predict_cached)
        plans.append(plan)
        final = await _run(engine, "ws-predict", plan)
        explain = planner.record(plan, final.metrics, answer_text=final.text)
        predicted_new = len(plan.token_ids) - plan.manifest.predicted_cached_tokens
        measured = final.metrics.measured_recomputed_tokens
        assert final.metrics.predicted_cached_tokens == plan.manifest.predicted_cached_tokens
        assert abs(measured - predicted_new) < CHUNK, (predicted_new, measured, final.metrics.prefill_steps)
        assert explain.totals.new == predicted_new and explain.measured_recomputed_tokens == measured
        seen.append((plan.manifest.predicted_cached_tokens, predicted_new))
    assert seen[0][0] == 0  # cold
    # only the user text changed: everything before the last user message was served from the cache
    # (less the answer's last token, which the engine never computed, and the partial block after it)
    assert seen[1][0] >= plans[1].manifest.segment("history").token_end - 64 > 0
    pins = planner.last_manifest().segment("pins")
    assert pins.token_start - 32 < seen[2][0] < pins.token_end  # the edit cut the cache inside the pins


async def test_policy_keeps_an_idle_workspace_prefix_warm_through_a_log_flood(engine, tmp_path):
    policy = CachePolicy(engine.blocks)
    results = {}
    for act in (False, True):
        tag = "policy" if act else "plain"
        ws_a = _planner(engine, tmp_path, f"a-{tag}")
        ws_b = _planner(engine, tmp_path, f"b-{tag}", max_history_turns=0)  # each log turn stands alone
        a_inputs = sample_inputs(workspace=f"/ws/a-{tag}", instructions=(("AGENTS.md", f"Scenario {tag}."),))
        plan = ws_a.plan(a_inputs, predict_cached=engine.predict_cached)
        ws_a.record(plan, (await _run(engine, f"a-{tag}", plan, policy, act)).metrics, "ok")
        policy.keep(f"a-{tag}", plan.stable_prefix(), "high")
        for turn in range(3):  # workspace B: the same question over fresh large logs
            log = "\n".join(f"[{tag} {turn}] step {i}: retry {i * 7 % 13} of worker {i % 5} timed out"
                            for i in range(40))
            b_plan = ws_b.plan(sample_inputs(workspace=f"/ws/b-{tag}", instructions=(("AGENTS.md", "B."),),
                                             pins=(), repo_map="", terminal=log, user=f"why? ({turn})"),
                                predict_cached=engine.predict_cached)
            final = await _run(engine, f"b-{tag}", b_plan, policy, act)
            ws_b.record(b_plan, final.metrics, final.text)
        again = ws_a.plan(sample_inputs(workspace=f"/ws/a-{tag}", instructions=(("AGENTS.md", f"Scenario {tag}."),),
                                        user="One more question."), predict_cached=engine.predict_cached)
        final = await _run(engine, f"a-{tag}", again, policy, act)
        stable_end = again.manifest.segment("pins").token_end
        results[tag] = (final.metrics.measured_recomputed_tokens, len(again.token_ids) - stable_end,
                        final.metrics.prefill_steps)
    plain_recomputed, tail, _ = results["plain"]
    policy_recomputed, tail_p, _ = results["policy"]
    # plain LRU: the flood evicted A's stable prefix, so more than the tail after it was recomputed
    assert plain_recomputed > tail + CHUNK, results
    # with the policy: only the turn's tail after the stable prefix (within one chunk)
    assert policy_recomputed <= tail_p + CHUNK, results
    assert policy_recomputed < plain_recomputed
    print('policy scenario (recomputed, tail, steps):', results)

