"""Engine bench: cold vs warm time to first token at 2k and 8k tokens on the default model.

    .venv/bin/python bench/engine_ttft.py [--sizes 2048 8192] [--reps 3] [--chunk 256] [--model smollm2-135m]
                                          [--out bench/results/engine_ttft.json]

Per size and repetition: a fresh prompt of N tokens runs cold (nothing cached), then the same
prompt plus a 29-token suffix runs warm (the prefix cache serves the first N tokens), then the
exact prompt again. Then a KV snapshot of a 2k prefix is saved and restored through the
stateful API (bytes, ms, continuation equality). Reports the median and spread of each, the cold/warm ratio, prefill steps,
the block model's prediction against the measured recomputation, and a hash of the output ids
(warm output equal to cold output is recorded, not assumed). Uses the model from the test cache
(.cache/test-home) or $CONTENOX_HOME.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import numpy as np

from contenox.runtime_ov import (
    Engine,
    EngineOptions,
    FinalEvent,
    GenerateRequest,
    InstalledModel,
    StatefulKV,
    ensure_ir,
)
from contenox.runtime_ov.store import ModelStore

REPO = Path(__file__).resolve().parents[1]
WORDS = ["alpha", "beta", "gamma", "delta", "kernel", "socket", "buffer", "vector", "matrix", "thread",
         "return", "import", "class", "def", "self", "value", "index", "cache", "block", "token"]


def _store() -> ModelStore:
    test_home = Path(os.environ.get("CONTENOX_TEST_HOME", REPO / ".cache" / "test-home"))
    if (test_home / "models").is_dir():
        return ModelStore(test_home / "models")
    from contenox.config import load_config

    return ModelStore(load_config().models_dir)


def _prompt(engine: Engine, seed: int, tokens: int) -> list[int]:
    rng = np.random.default_rng(seed)
    text = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=tokens * 2))
    ids = engine.tokenizer.encode(f"Benchmark document {seed}:\n{text}")
    return ids[:tokens]


def _run(engine: Engine, ids: list[int], max_new: int) -> FinalEvent:
    return engine.generate(GenerateRequest(session_id="bench", token_ids=ids, max_new_tokens=max_new))


def _digest(ids: list[int]) -> str:
    return hashlib.sha256(np.array(ids, np.int64).tobytes()).hexdigest()[:16]


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _snapshot(model: InstalledModel, engine: Engine, tokens: int) -> dict[str, object]:
    """Save and restore the stateful KV of a ``tokens`` prefix; check the continuation is unchanged."""
    ir = ensure_ir(model, _store().root.parent / "ir-cache")
    ids = _prompt(engine, 7, tokens + 1)
    kv = StatefulKV(model, ir)
    kv.feed(ids[:-1])
    with tempfile.TemporaryDirectory() as tmp:
        saved = kv.save(Path(tmp) / "s.kv")
        original = kv.generate(ids[-1:], 16)
        other = StatefulKV(model, ir, _compiled=kv._compiled)
        restored = other.restore(Path(tmp) / "s.kv")
        same = other.generate(ids[-1:], 16) == original
    print(f"snapshot {tokens} tok: {saved.bytes / 1e6:.1f} MB, save {saved.ms:.0f} ms, restore {restored.ms:.0f} ms, "
          f"continuation identical {same}", flush=True)
    return {"tokens": tokens, "bytes": saved.bytes, "save_ms": saved.ms, "restore_ms": restored.ms,
            "continuation_identical": same}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--max-new", type=int, default=16)
    parser.add_argument("--cache-gb", type=float, default=1.0)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--snapshot-tokens", type=int, default=2048, help="0 skips the snapshot measurement")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "engine_ttft.json")
    args = parser.parse_args()

    model = _store().ensure(args.model)
    started = time.perf_counter()
    engine = Engine.start(model, EngineOptions(cache_size_gb=args.cache_gb, chunk_tokens=args.chunk))
    load_s = time.perf_counter() - started
    suffix = engine.tokenizer.encode(" Now answer the question about the document above: which words repeat most "
                                     "often, in what order, and why would a cache keep them? Answer briefly.")[:29]
    assert len(suffix) == 29
    limit = model.profile.max_tested_context
    _run(engine, _prompt(engine, 999, 64), 2)  # warm-up: first inference allocates the cache
    cases = []
    for size in args.sizes:
        size = min(size, limit - len(suffix) - args.max_new)
        cold_ms, warm_ms, exact_ms, rows = [], [], [], []
        for rep in range(args.reps):
            ids = _prompt(engine, size * 100 + rep, size)
            cold = _run(engine, ids, args.max_new)
            predicted = engine.predict_cached([*ids, *suffix])
            warm = _run(engine, [*ids, *suffix], args.max_new)
            exact = _run(engine, ids, args.max_new)
            cold_ms.append(cold.metrics.ttft_ms)
            warm_ms.append(warm.metrics.ttft_ms)
            exact_ms.append(exact.metrics.ttft_ms)
            rows.append({"cold": msgspec.to_builtins(cold.metrics), "warm": msgspec.to_builtins(warm.metrics),
                         "exact": msgspec.to_builtins(exact.metrics), "predicted_cached_warm": predicted,
                         "cold_output": _digest(cold.token_ids), "exact_output": _digest(exact.token_ids),
                         "exact_equals_cold": exact.token_ids == cold.token_ids})
        case = {"prompt_tokens": size, "cold_ttft_ms": _summary(cold_ms), "warm_ttft_ms": _summary(warm_ms),
                "exact_repeat_ttft_ms": _summary(exact_ms),
                "cold_over_warm": statistics.median(cold_ms) / statistics.median(warm_ms), "runs": rows}
        cases.append(case)
        print(f"{size:>6} tok  cold {case['cold_ttft_ms']['median']:9.1f} ms "
              f"[{min(cold_ms):.0f}-{max(cold_ms):.0f}]  warm(+{len(suffix)}) "
              f"{case['warm_ttft_ms']['median']:7.1f} ms [{min(warm_ms):.0f}-{max(warm_ms):.0f}]  "
              f"exact {case['exact_repeat_ttft_ms']['median']:7.1f} ms  ratio {case['cold_over_warm']:6.1f}x  "
              f"steps cold/warm {rows[0]['cold']['prefill_steps']}/{rows[0]['warm']['prefill_steps']}  "
              f"predicted {rows[0]['predicted_cached_warm']}  exact==cold {all(r['exact_equals_cold'] for r in rows)}",
              flush=True)
    stats = engine.stats()
    engine.close()
    snapshot = _snapshot(model, engine, args.snapshot_tokens) if args.snapshot_tokens else None
    report = {"model": model.name, "device": stats.device, "chunk_tokens": args.chunk, "reps": args.reps,
              "max_new_tokens": args.max_new, "load_s": load_s, "kv_bytes_per_token": stats.kv_bytes_per_token,
              "cache_capacity_tokens": stats.cache_capacity_tokens, "cpu_count": os.cpu_count(),
              "cases": cases, "snapshot": snapshot}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
