"""Turn manifests: determinism, what an edit invalidates, identity misses, persistence, explain JSON."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from contenox.planner import SEGMENT_KINDS, Pin, render_explain
from contenox.planner.prompts import load_prompts
from support.planner_samples import PIN_A, PIN_B, sample_inputs

REPO = Path(__file__).resolve().parents[2]


def _fingerprint(plan) -> dict:
    return {"ids": plan.token_ids, "token_hash": plan.manifest.token_hash,
            "segments": [[s.kind, s.byte_hash, s.token_hash, s.token_start, s.token_end]
                         for s in plan.manifest.segments]}


@pytest.mark.slow
def test_same_inputs_give_identical_ids_and_hashes_across_processes(make_planner, default_model, tmp_path):
    here = _fingerprint(make_planner().plan(sample_inputs()))
    script = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})  # tests/: the support package
        from support.planner_samples import sample_inputs
        from contenox.config import PlannerConfig
        from contenox.planner import Planner
        from contenox.runtime_ov.store import ModelStore
        from contenox.runtime_ov.tokenizer import load_tokenizer
        model = ModelStore(Path({str(Path(default_model.path).parent)!r})).ensure({default_model.name!r})
        planner = Planner(load_tokenizer(model.weights), model.profile, PlannerConfig(), Path({str(tmp_path / 'sub')!r}),
                          backend_version="test")
        plan = planner.plan(sample_inputs(), lambda ids: 0)
        print(json.dumps({{"ids": plan.token_ids, "token_hash": plan.manifest.token_hash,
                          "segments": [[s.kind, s.byte_hash, s.token_hash, s.token_start, s.token_end]
                                       for s in plan.manifest.segments]}}))
    """)
    env_hash_seed = {"PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=REPO,
                         env={**__import__("os").environ, **env_hash_seed}, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    there = json.loads(out.stdout.strip().splitlines()[-1])
    assert there == json.loads(json.dumps(here))


def test_segments_come_in_contract_order_and_tile_the_ids(make_planner):
    plan = make_planner().plan(sample_inputs())
    segs = plan.manifest.segments
    assert tuple(s.kind for s in segs) == SEGMENT_KINDS
    assert segs[0].token_start == 0
    for before, after in itertools.pairwise(segs):
        assert before.token_end == after.token_start
    assert {s.cache_class for s in segs[:4]} == {"highest"}
    assert segs[4].cache_class == segs[5].cache_class == "high"
    assert all(s.invalidation for s in segs)


def test_editing_one_pin_makes_only_it_and_later_segments_new(make_planner):
    planner = make_planner()
    first = planner.plan(sample_inputs())
    planner.record(first, None, answer_text="Because transfer() never checks the balance.")
    edited = (Pin(path="bank/accounts.py", text=PIN_A),
              Pin(path="bank/transfer.py", text=PIN_B.replace("amount: int", "amount: int = 0")))
    second = planner.plan(sample_inputs(pins=edited))
    old = {s.kind: s for s in first.manifest.segments}
    new = {s.kind: s for s in second.manifest.segments}
    pins_at = SEGMENT_KINDS.index("pins")
    for kind in SEGMENT_KINDS[:pins_at]:
        assert new[kind].token_hash == old[kind].token_hash
        assert new[kind].invalidated_by is None
        assert new[kind].predicted_cached == new[kind].tokens, kind  # served from the cache
    assert new["pins"].token_hash != old["pins"].token_hash
    assert new["pins"].invalidated_by == "pins changed (edited: bank/transfer.py)"
    assert new["pins"].predicted_new > 0
    for kind in SEGMENT_KINDS[pins_at + 1:]:
        if new[kind].tokens:  # an empty segment (no retrieved code here) has nothing to recompute
            assert new[kind].invalidated_by is not None, kind
        assert new[kind].predicted_cached == 0, kind
    # the cached part ends inside the pins segment, at a block boundary, after the unchanged first pin
    cached = second.manifest.predicted_cached_tokens
    assert cached % 32 == 0
    assert new["pins"].token_start <= cached < new["pins"].token_end


def test_only_user_text_changed_reuses_every_other_segments_ids(make_planner):
    planner = make_planner()
    planner.plan(sample_inputs())
    before = planner.tokens.encoded_chars
    question = "And what about negative amounts?"
    plan = planner.plan(sample_inputs(user=question))
    assert planner.tokens.encoded_chars - before == len(question) + 2  # "\n\n" + the question only
    assert plan.manifest.segment("user").tokens > 0


def test_tokenizer_digest_change_is_a_full_miss_with_the_reason(make_planner, profile):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="ok")
    changed = make_planner(profile_changes={"tokenizer_digest": "0" * 64})
    plan = changed.plan(sample_inputs())
    assert {s.invalidated_by for s in plan.manifest.segments} == {"tokenizer digest changed"}
    assert plan.manifest.predicted_cached_tokens == 0
    assert all(s.predicted_cached == 0 for s in plan.manifest.segments)


def test_chat_template_digest_change_is_a_full_miss_with_the_reason(make_planner):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="ok")
    changed = make_planner(profile_changes={"chat_template_digest": "1" * 64})
    plan = changed.plan(sample_inputs())
    assert {s.invalidated_by for s in plan.manifest.segments} == {"chat template digest changed"}
    assert plan.manifest.predicted_cached_tokens == 0


def test_engine_prediction_is_spread_over_segments_in_order(make_planner):
    plan = make_planner().plan(sample_inputs(), predict_cached=lambda ids: 320)
    assert plan.manifest.predicted_cached_tokens == 320
    assert sum(s.predicted_cached for s in plan.manifest.segments) == 320
    assert sum(s.predicted_new for s in plan.manifest.segments) == len(plan.token_ids) - 320
    seen_new = False
    for seg in plan.manifest.segments:
        if seen_new:
            assert seg.predicted_cached == 0
        seen_new = seen_new or seg.predicted_new > 0


class _Metrics(msgspec.Struct, frozen=True):
    measured_recomputed_tokens: int
    ttft_ms: float


def test_record_persists_and_explain_json_has_the_documented_shape(make_planner):
    planner = make_planner()
    assert planner.last_explain() is None
    plan = planner.plan(sample_inputs(), predict_cached=lambda ids: 96)
    explain = planner.record(plan, _Metrics(measured_recomputed_tokens=len(plan.token_ids) - 64, ttft_ms=410.24),
                             answer_text="Because the balance is never checked.")
    data = explain.to_json()
    assert list(data) == ["workspace", "turn", "model", "segments", "totals", "predicted_cached_tokens",
                          "measured_recomputed_tokens", "ttft_ms", "context_size", "cache_evidence",
                          "server_cached_tokens", "notes", "retrieved", "citations", "anticipated"]
    assert data["notes"] == ["tools: not advertised (this model is not certified for tool calls)"]
    assert data["workspace"] == "/work/bank" and data["turn"] == 1 and data["model"] == "smollm2-135m"
    assert [list(s) for s in data["segments"]] == [["kind", "tokens", "cached", "new", "invalidated_by"]] * 12
    assert data["totals"] == {"tokens": len(plan.token_ids), "cached": 96, "new": len(plan.token_ids) - 96,
                              "hit_pct": round(9600 / len(plan.token_ids), 1)}
    assert data["ttft_ms"] == 410.2 and data["context_size"] == 8192
    json.dumps(data)  # JSON-ready

    reopened = make_planner()  # same state dir: a restarted node
    assert reopened.last_explain() == explain
    follow = reopened.plan(sample_inputs(user="Fix it.", diff="", terminal=""))
    assert follow.manifest.turn == 2
    assert follow.messages[1] == {"role": "user", "content": plan.user}
    assert follow.messages[2] == {"role": "assistant", "content": "Because the balance is never checked."}
    assert "history grew by 1 turn(s)" == follow.manifest.segment("history").invalidated_by


def test_torn_journal_line_is_skipped(make_planner, tmp_path):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="one")
    journal = tmp_path / "state" / "turns.jsonl"
    with journal.open("ab") as fh:
        fh.write(b'{"v": 1, "turn": 2, "thr')  # a crash mid-write
    reopened = make_planner()
    assert reopened.last_explain().turn == 1
    reopened.record(reopened.plan(sample_inputs(user="two")), None, answer_text="two")
    assert make_planner().last_explain().turn == 2


def test_thread_rebases_in_one_named_jump_then_stays_append_only(make_planner):
    planner = make_planner(max_history_turns=4)
    lengths = []
    plans = []
    for n in range(7):
        plan = planner.plan(sample_inputs(user=f"question {n}", diff="", terminal=""))
        lengths.append(len(plan.manifest.segment("history").items))
        plans.append(plan)
        planner.record(plan, None, answer_text=f"answer {n}")
    assert lengths == [0, 1, 2, 3, 4, 2, 3]  # at 5 turns the thread rebases to its newest 2, then grows again
    rebased = plans[5]
    assert "thread rebased: turns 1-3 summarised (2 kept in full)" in rebased.manifest.notes
    assert rebased.manifest.segment("history").invalidated_by == "thread rebased (older turns summarised)"
    system = rebased.messages[0]["content"]
    assert "# Earlier in this thread (summarised)\n- turn 1: question 0 -> answer 0" in system
    assert [m["content"] for m in rebased.messages[1:]][-1] == "question 5\n\n" + load_prompts().answer
    # after the rebase the thread is append-only again: turn 7 starts with turn 6's ids
    history_end = plans[5].manifest.segment("history").token_end
    assert plans[6].token_ids[:history_end] == plans[5].token_ids[:history_end]
    assert plans[6].manifest.notes == plans[5].manifest.notes[1:]


def test_render_explain_of_a_second_turn_names_reasons(make_planner):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs()), None, answer_text="first")
    plan = planner.plan(sample_inputs(user="second", repo_map="bank/accounts.py:\n  class Account\n",
                                      change_reasons={"repo_map": "repo map changed: 1 file"}))
    table = render_explain(planner.preview(plan))
    assert "repo map changed: 1 file" in table
    assert "follows changed repo_map" in table
    assert table.splitlines()[0].startswith("workspace /work/bank  turn 2")


def test_threads_have_their_own_history_and_compare_with_their_own_last_turn(make_planner):
    planner = make_planner()
    planner.record(planner.plan(sample_inputs(user="chat panel question", thread="panel")), None, "panel answer")
    planner.record(planner.plan(sample_inputs(user="acp question", thread="acp-1")), None, "acp answer")
    plan = planner.plan(sample_inputs(user="follow-up", thread="panel"))
    entry, answer = (m["content"] for m in plan.messages[1:3])
    assert entry.startswith("# Current diff")
    assert entry.endswith("\n\nchat panel question\n\n" + load_prompts().answer)  # as it was sent
    assert answer == "panel answer"
    assert plan.manifest.segment("history").invalidated_by == "history grew by 1 turn(s)"
    assert plan.manifest.segment("pins").invalidated_by is None
    assert plan.manifest.turn == 3


def test_the_plan_says_where_each_laid_out_chunk_ends(make_planner, tokenizer):
    from contenox.planner.inputs import Chunk
    from contenox.planner.segments import chunk_part

    chunks = [Chunk(id=f"src/m{i}.py:1-3", path=f"src/m{i}.py", start_line=1, end_line=3, name=f"f{i}",
                    text=f"def f{i}():\n    return {i}\n") for i in range(3)]
    plan = make_planner().plan(sample_inputs(retrieved=chunks))
    seg = plan.manifest.segment("retrieved")
    assert [cid for cid, _ in plan.chunk_ends] == [c.id for c in chunks]
    ends = [end for _, end in plan.chunk_ends]
    assert ends[-1] == seg.token_end and all(seg.token_start < e <= seg.token_end for e in ends)
    for (cid, end), c in zip(plan.chunk_ends, chunks, strict=True):  # each chunk's ids end exactly there
        part = tokenizer.encode(chunk_part(c))
        assert plan.token_ids[end - len(part):end] == list(part), cid
