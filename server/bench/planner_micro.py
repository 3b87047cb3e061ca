"""Planner bench: planning cost of a ~64k-token turn, cold and when only the user text changed.

    contenox bench planner [--tokens 65536] [--repeat 30]

Uses SmolLM2-135M's tokenizer (pulled when not installed) with
its profile's tested context raised to fit the bench turn. Prints a table of cases with median,
p90 and spread, and the sha256 of the planned ids (equal across runs = deterministic).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from contenox.bench.micro import MODEL
from contenox.config import Config, PlannerConfig
from contenox.planner import Pin, Planner, PlannerInputs
from contenox.runtime_ov.store import ModelStore
from contenox.runtime_ov.tokenizer import load_tokenizer


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


CPU: dict[str, list[float]] = {}


def _timed(case: str, fn):  # type: ignore[no-untyped-def]
    """Run ``fn``; returns (result, wall seconds) and records the process CPU time under ``case``."""
    c0, t0 = time.process_time(), time.perf_counter()
    result = fn()
    wall = time.perf_counter() - t0
    CPU.setdefault(case, []).append(time.process_time() - c0)
    return result, wall


def _stats(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    spread = statistics.pstdev(ms) if len(ms) > 1 else 0.0
    return f"{statistics.median(ms):9.2f} {p90:9.2f} {spread:8.2f} {len(ms):4d}"



def _nothing_cached(ids: Sequence[int]) -> int:
    """The cache prediction of a planner timed alone: no engine, so nothing is cached."""
    return 0


def main(config: Config, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="contenox bench planner", description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=65536)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    model = ModelStore(config.models_dir).ensure(MODEL)
    tokenizer = load_tokenizer(model.weights)
    context = args.tokens + 8192
    profile = msgspec.structs.replace(model.profile, max_tested_context=context)
    with tempfile.TemporaryDirectory() as state:
        planner = Planner(tokenizer, profile, PlannerConfig(), Path(state))
        t0 = time.perf_counter()
        cold = planner.plan(_inputs(args.tokens, "question 0"), _nothing_cached)
        cold_s = time.perf_counter() - t0
        planner.record(cold, None, "answer 0")
        warm: list[float] = []
        for n in range(1, args.repeat + 1):
            inputs = _inputs(args.tokens, f"question {n}: why does handler_{n}_1 retry?")
            plan, wall = _timed("history", lambda inputs=inputs: planner.plan(inputs, _nothing_cached))
            warm.append(wall)
        user_only: list[float] = []
        for n in range(args.repeat):
            inputs = _inputs(args.tokens, f"variant {n}")
            _, wall = _timed("user", lambda inputs=inputs: planner.plan(inputs, _nothing_cached))
            user_only.append(wall)
        edit: list[float] = []
        for n in range(min(args.repeat, 10)):
            inputs = _inputs(args.tokens, "after an edit", edited=n)
            edited, wall = _timed("edit", lambda inputs=inputs: planner.plan(inputs, _nothing_cached))
            edit.append(wall)
        print(f"planner bench: {cold.manifest.total_tokens} tokens, {len(_inputs(args.tokens, 'x').pins)} pins, "
              f"python {sys.version.split()[0]}")
        print(f"{'case':34} {'median_ms':>9} {'p90_ms':>9} {'sd_ms':>8} {'n':>4} {'cpu_median_ms':>13}")
        print(f"{'cold (everything tokenized)':34} {cold_s * 1000:9.2f} {'':>9} {'':>8} {1:4d}")
        for label, samples, case in (("only user text changed", user_only, "user"),
                                     ("user text + history grew by 1", warm, "history"),
                                     ("one pin edited (retokenize one)", edit, "edit")):
            print(f"{label:34} {_stats(samples)} {statistics.median(CPU[case]) * 1000:13.2f}")
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

