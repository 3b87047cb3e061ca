"""``contenox bench candidates``: what a verified turn's extra candidates cost.

One real prompt (a file of the eval's itsdangerous checkout and a fix request, in the node's answer format) is
prefilled once; then, from that cached prompt, the bench decodes one greedy answer alone, then k answers as one
group (the way a verified turn draws them: sampled, side by side), with and without the edit-block grammar.
Reported per arm: decode tokens per second (all sequences together), the prompt tokens each request recomputed
(the prefix cache serves the rest), wall time, and the grammar's per-token cost. Medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import date
from pathlib import Path
from typing import Any

from contenox.config import Config
from contenox.host import host_facts
from contenox.runtime_ov import EngineOptions, GenerateRequest, ModelStore, Sampling, start_engine
from contenox.verify import edit_block_grammar

__all__ = ["main"]

_SYSTEM = ("You are a coding assistant. To change code, write one edit block: the file's path on its own line, "
           "<<<<<<< SEARCH, the exact lines to replace, =======, the new lines, >>>>>>> REPLACE.")


def _prompt(engine: Any, path: str, text: str) -> list[int]:
    question = (f"{path}:\n```python\n{text}\n```\n\nEvery cookie signed with an old key is rejected after a key "
                "rotation. Fix the bug in this file.")
    rendered = (f"<|im_start|>system\n{_SYSTEM}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n"
                "<|im_start|>assistant\n")
    return list(engine.tokenizer.encode(rendered))


def _arm(engine: Any, ids: list[int], *, k: int, grammar: str, max_new: int, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    handles = [engine.submit(GenerateRequest(session_id="bench-candidates", token_ids=ids, max_new_tokens=max_new,
                                             sampling=Sampling(seed=seed + i) if k > 1 else None,
                                             grammar=grammar, group="bench" if k > 1 else ""))
               for i in range(k)]
    finals = [h.wait(600) for h in handles]
    wall = time.perf_counter() - started
    tokens = sum(len(f.token_ids) for f in finals)
    first = min(f.metrics.ttft_ms for f in finals) / 1000.0
    return {"k": k, "grammar": bool(grammar), "tokens": tokens, "wall_s": round(wall, 2),
            "decode_tps": round(tokens / max(1e-6, wall - first), 2),
            "recomputed_prompt_tokens": [f.metrics.measured_recomputed_tokens for f in finals],
            "finish": [f.finish_reason for f in finals]}


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench candidates", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=config.model.default)
    p.add_argument("--k", type=int, default=config.verify.candidates - 1,
                   help="candidates decoded side by side (a verified turn's first round: verify.candidates - 1)")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--file", type=Path, default=Path(".cache/eval-repos/itsdangerous/src/itsdangerous/signer.py"),
                   help="the file the prompt holds and the grammar draws its lines from")
    p.add_argument("--out", default="bench/results")
    ns = p.parse_args(argv)
    model = ModelStore(config.models_dir).get(ns.model)
    text = ns.file.read_text(encoding="utf-8")
    path = "src/itsdangerous/signer.py"
    grammar = edit_block_grammar(path, text)
    options = EngineOptions.from_config(config.engine, device=config.model.device)
    engine = start_engine(model, options, process=False)

    def say(line: str) -> None:
        print(f"[bench candidates] {line}", flush=True)

    try:
        ids = _prompt(engine, path, text)
        warm = engine.generate(GenerateRequest(session_id="bench-candidates", token_ids=ids, max_new_tokens=1))
        say(f"prompt {len(ids)} tokens prefilled once in {warm.metrics.ttft_ms / 1000:.1f} s")
        arms: dict[str, list[dict[str, Any]]] = {}
        for name, k, g in (("one greedy", 1, ""), (f"{ns.k} sampled", ns.k, ""), ("one greedy, grammar", 1, grammar),
                           (f"{ns.k} sampled, grammar", ns.k, grammar)):
            for repeat in range(ns.repeats):
                run = _arm(engine, ids, k=k, grammar=g, max_new=ns.max_new_tokens, seed=100 * repeat + 1)
                arms.setdefault(name, []).append(run)
                say(f"{name}: {run['tokens']} tokens, {run['decode_tps']} tok/s, recomputed "
                    f"{run['recomputed_prompt_tokens']}")
    finally:
        engine.close()
    summary = {name: {"decode_tps_median": statistics.median(r["decode_tps"] for r in runs),
                      "wall_s_median": statistics.median(r["wall_s"] for r in runs),
                      "recomputed_prompt_tokens_max": max(max(r["recomputed_prompt_tokens"]) for r in runs)}
               for name, runs in arms.items()}
    one, many = summary["one greedy"]["decode_tps_median"], summary[f"{ns.k} sampled"]["decode_tps_median"]
    report = {"model": model.name, "date": date.today().isoformat(), "prompt_tokens": len(ids),
              "prefill_ttft_s": round(warm.metrics.ttft_ms / 1000, 2), "k": ns.k, "max_new_tokens": ns.max_new_tokens,
              "machine": host_facts(),
              "summary": summary, "throughput_ratio_k_vs_one": round(many / one, 2) if one else None,
              "grammar_cost": {
                  "one": round(summary["one greedy, grammar"]["decode_tps_median"] / one, 3) if one else None,
                  "k": round(summary[f"{ns.k} sampled, grammar"]["decode_tps_median"] / many, 3) if many else None},
              "runs": arms}
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{date.today().isoformat()}-candidates-{model.name}.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    say(f"k={ns.k} side by side: {report['throughput_ratio_k_vs_one']}x the tokens/s of one; grammar keeps "
        f"{report['grammar_cost']} of the unconstrained rate; wrote {target}")
    return 0
