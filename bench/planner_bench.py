"""Planner bench: planning cost of a ~64k-token turn, cold and when only the user text changed.

    .venv/bin/python bench/planner_bench.py [--tokens 65536] [--repeat 30]

Uses the real default model's tokenizer (SmolLM2-135M from the test cache or $CONTENOX_HOME) with
its profile's tested context raised to fit the bench turn. Prints a table of cases with median,
p90 and spread, and the sha256 of the planned ids (equal across runs = deterministic).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from contenox.config import PlannerConfig
from contenox.planner import Pin, Planner, PlannerInputs
from contenox.runtime_ov.store import ModelStore
from contenox.runtime_ov.tokenizer import load_tokenizer

REPO = Path(__file__).resolve().parents[1]


def _module(i: int, lines: int) -> str:
    out = [f'"""Module {i}."""\n\n', "from __future__ import annotations\n\n"]
    for j in range(lines):
        out.append(f"def handler_{i}_{j}(request, retries={j % 5}):\n"
                   f"    if request.size > {j * 17}:\n        return process(request, level={j})\n"
                   f"    return None\n\n")
    return "".join(out)


def _inputs(target_tokens: int, user: str, edited: int | None = None) -> PlannerInputs:
    # ~14 chars per token for this code; 1/4 repo map, 3/4 pins
    pins = []
    per_pin = 60
    count = max(1, int(target_tokens * 0.75 * 3.6) // len(_module(0, per_pin)))
    for i in range(count):
        text = _module(i, per_pin)
        if edited == i:
            text = text.replace("retries=0", "retries=9", 1)
        pins.append(Pin(path=f"pkg/mod_{i}.py", text=text))
    map_lines = [f"pkg/mod_{i}.py:\n" + "".join(f"  def handler_{i}_{j}(request, retries)\n" for j in range(12))
                 for i in range(int(target_tokens * 0.25) // 150)]
    return PlannerInputs(workspace="/bench/ws", user=user, repo_map="".join(map_lines), pins=tuple(pins),
                         instructions=(("AGENTS.md", "Run `make test`.\nNo new dependencies."),),
                         diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", terminal="1 failed, 10 passed")


def _stats(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    spread = statistics.pstdev(ms) if len(ms) > 1 else 0.0
    return f"{statistics.median(ms):9.2f} {p90:9.2f} {spread:8.2f} {len(ms):4d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=65536)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    home = Path(os.environ.get("CONTENOX_TEST_HOME", REPO / ".cache" / "test-home"))
    model = ModelStore(home / "models").ensure("smollm2-135m")
    tokenizer = load_tokenizer(model.weights)
    context = args.tokens + 8192
    profile = msgspec.structs.replace(model.profile, max_tested_context=context)
    with tempfile.TemporaryDirectory() as state:
        planner = Planner(tokenizer, profile, PlannerConfig(), Path(state))
        t0 = time.perf_counter()
        cold = planner.plan(_inputs(args.tokens, "question 0"))
        cold_s = time.perf_counter() - t0
        planner.record(cold, None, "answer 0")
        warm: list[float] = []
        for n in range(1, args.repeat + 1):
            inputs = _inputs(args.tokens, f"question {n}: why does handler_{n}_1 retry?")
            t0 = time.perf_counter()
            plan = planner.plan(inputs)
            warm.append(time.perf_counter() - t0)
        user_only: list[float] = []
        for n in range(args.repeat):
            inputs = _inputs(args.tokens, f"variant {n}")
            t0 = time.perf_counter()
            planner.plan(inputs)
            user_only.append(time.perf_counter() - t0)
        edit: list[float] = []
        for n in range(min(args.repeat, 10)):
            inputs = _inputs(args.tokens, "after an edit", edited=n)
            t0 = time.perf_counter()
            edited = planner.plan(inputs)
            edit.append(time.perf_counter() - t0)
        print(f"planner bench: {cold.manifest.total_tokens} tokens, {len(_inputs(args.tokens, 'x').pins)} pins, "
              f"python {sys.version.split()[0]}")
        print(f"{'case':34} {'median_ms':>9} {'p90_ms':>9} {'sd_ms':>8} {'n':>4}")
        print(f"{'cold (everything tokenized)':34} {cold_s * 1000:9.2f} {'':>9} {'':>8} {1:4d}")
        print(f"{'only user text changed':34} {_stats(user_only)}")
        print(f"{'user text + history grew by 1':34} {_stats(warm)}")
        print(f"{'one pin edited (retokenize one)':34} {_stats(edit)}")
        print(f"ids sha256 (cold): {cold.manifest.token_hash}")
        print(f"ids sha256 (last edit): {edited.manifest.token_hash}")
        # block alignment: tokens a boundary-aligned layout would save when the first change is at a
        # segment start (the partial block before it is recomputed today): at most block-1 per turn
        block = profile.cache_block_size
        waste = [s.token_start % block for s in plan.manifest.segments if s.token_start]
        print(f"alignment: partial-block tokens recomputed before a changed segment: mean "
              f"{statistics.mean(waste):.1f}, max {max(waste)} of {plan.manifest.total_tokens} "
              f"(one prefill chunk = {256}); padding would cost the same tokens in every prompt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
