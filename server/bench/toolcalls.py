"""``contenox bench toolcalls``: what the tool-call constraint costs in decode speed.

Two prompts rendered as a tool-enabled turn renders them (the node's system text and tool policy, the template's
tool block; no workspace context): a
question answered in prose (the lazy grammar is armed and never triggered) and one answered with a call (under the
tool's argument schema once the call opening is written; with ``--required`` as well: the call required from the
first token, as after the tool check's yes). Each arm is decoded greedily from the cached prompt, ``--repeats``
times; reported: decode tokens per second per arm (medians) and each constrained arm's ratio to the same answer
unconstrained (the issue's target: >= 0.9).
"""

from __future__ import annotations

import argparse
import json
import statistics
from datetime import date
from pathlib import Path
from typing import Any

from contenox.config import Config
from contenox.host import host_facts
from contenox.runtime_ov import EngineOptions, GenerateRequest, ModelStore, ToolCallGrammar, start_engine

__all__ = ["main"]

PROSE = "What is the difference between a process and a thread? Answer in three sentences."
CALL = "Read lines 5 to 9 of src/app.py."
"""Answered by both Qwen models with a fenced ``read_file`` call, unconstrained: so the lazy grammar triggers on
it (a question whose free answer names no declared tool, "Show me the contents of src/app.py.", which the 1.5B
answers with ``"name": "src/app.py"``, would never trigger it and measure nothing)."""


def _ids(engine: Any, question: str) -> list[int]:
    from contenox.planner.prompts import load_prompts

    prompts = load_prompts()
    tools = [{"type": "function", "function": json.loads(line)} for line in prompts.tools.splitlines()]
    text = engine.tokenizer.apply_chat_template([
        {"role": "system", "content": f"{prompts.system}\n\n{prompts.tool_policy}"},
        {"role": "user", "content": question}], tools=tools)
    return list(engine.tokenizer.encode(text))


def _tps(engine: Any, ids: list[int], grammar: ToolCallGrammar | None, max_new: int) -> dict[str, Any]:
    final = engine.generate(GenerateRequest(session_id="bench-toolcalls", token_ids=ids, max_new_tokens=max_new,
                                            tool_calls=grammar), timeout=600)
    metrics = final.metrics
    return {"tokens": metrics.generated_tokens, "decode_tps": round(metrics.decode_tps, 2),
            "prompt_tokens": metrics.prompt_tokens, "recomputed_prompt_tokens": metrics.measured_recomputed_tokens,
            "text": final.text[:200]}


def main(config: Config, argv: list[str]) -> int:
    from contenox.node.agent import tool_call_grammar

    p = argparse.ArgumentParser(prog="contenox bench toolcalls", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=config.model.default)
    p.add_argument("--max-new-tokens", type=int, default=96)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="bench/results")
    ns = p.parse_args(argv)
    model = ModelStore(config.models_dir).get(ns.model)
    engine = start_engine(model, EngineOptions.from_config(config.engine, device=config.model.device), process=False)

    def say(line: str) -> None:
        print(f"[bench toolcalls] {line}", flush=True)

    arms: dict[str, list[dict[str, Any]]] = {}
    try:
        prose, call = _ids(engine, PROSE), _ids(engine, CALL)
        for ids in (prose, call):  # prefilled once: every arm decodes from the cached prompt
            engine.generate(GenerateRequest(session_id="bench-toolcalls", token_ids=ids, max_new_tokens=1))
        for repeat in range(ns.repeats):
            for name, ids, grammar in (("prose, free", prose, None), ("prose, grammar armed", prose,
                                                                      tool_call_grammar()),
                                       ("call, free", call, None), ("call, under its schema", call,
                                                                    tool_call_grammar()),
                                       ("call, required", call, tool_call_grammar(required=True))):
                run = _tps(engine, ids, grammar, ns.max_new_tokens)
                arms.setdefault(name, []).append(run)
                say(f"{repeat + 1}/{ns.repeats} {name}: {run['tokens']} tokens, {run['decode_tps']} tok/s")
    finally:
        engine.close()
    median = {name: statistics.median(r["decode_tps"] for r in runs) for name, runs in arms.items()}
    ratios = {"prose, grammar armed": median["prose, grammar armed"] / median["prose, free"],
              "call, under its schema": median["call, under its schema"] / median["call, free"],
              "call, required": median["call, required"] / median["call, free"]}
    report = {"model": model.name, "date": date.today().isoformat(), "max_new_tokens": ns.max_new_tokens,
              "repeats": ns.repeats, "machine": host_facts(),
              "decode_tps_median": median, "ratio_to_free": {k: round(v, 3) for k, v in ratios.items()},
              "target_ratio_min": 0.9, "runs": arms}
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{date.today().isoformat()}-toolcalls-{model.name}.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    say("constrained / free decode rate: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()) + f"; wrote {target}")
    return 0
