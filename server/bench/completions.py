"""``contenox bench completions``: inline completions on a real node (engine in its own process), one run.

- **quality** (acceptance proxy): held-out functions of real repositories (the eval set's Python repos, built
  from their released archives; :mod:`contenox.bench.fim_cases`): each body deleted, completed at its first line,
  with and without the repo-level context, without the time budget (the whole block the model proposes);
  first-line and whole-block exact match and edit similarity. "as served" scores the same request with the
  time budget (what the editor shows).
- **latency** (keystroke to ghost text, the node's ``complete`` as the LSP handler calls it): per case, the first
  request ("cold": the file's window and any new context chunk not yet computed), then two keystrokes (the
  first characters of the expected line typed, each asked of the model: "warm", context and file start
  cached), then a keystroke that types through the suggestion (served from recent results). Each request's
  cached share of the prompt is recorded beside it.
- **beside a chat turn**: completions while a turn prefills a long prompt (how long a completion waits: it
  pauses the prefill at the next step, at most one chunk) and while a turn decodes (the turn's gap between
  tokens with a completion sharing its steps vs without).
Output: ``<out>/<date>-completions-<model>.json`` and a PNG beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from contenox.bench.fim_cases import FimCase, extract_cases, score
from contenox.config import Config
from contenox.node import Node
from contenox.node.contract import CompletionOutcome, CompletionRequest, TurnEvent, TurnRequest

__all__ = ["main"]

DEFAULT_REPOS = ("itsdangerous", "python-dotenv")
"""The eval set's repositories the CLI passes when no ``--repo`` is given."""


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def _request(case: FimCase, root: Path, **changes: Any) -> CompletionRequest:
    return CompletionRequest(root=str(root), path=case.path, text=case.text, line=case.line,
                             character=case.character, client_id="bench", **changes)


def _typed(case: FimCase, root: Path, typed: str, **changes: Any) -> CompletionRequest:
    lines = case.text.split("\n")
    lines[case.line] += typed
    return CompletionRequest(root=str(root), path=case.path, text="\n".join(lines), line=case.line,
                             character=case.character + len(typed), client_id="bench", **changes)


def _timed(outcome: CompletionOutcome, wall_ms: float) -> dict[str, Any]:
    return {"ms": round(wall_ms, 1), "ended": outcome.ended, "prompt_tokens": outcome.prompt_tokens,
            "cached_tokens": outcome.cached_tokens, "context_tokens": outcome.context_tokens,
            "generated_tokens": outcome.generated_tokens, "ttft_ms": round(outcome.ttft_ms, 1)}


async def _ask(node: Node, request: CompletionRequest) -> tuple[CompletionOutcome, float]:
    started = time.perf_counter()
    outcome = await node.complete(request)
    return outcome, (time.perf_counter() - started) * 1000


async def _quality_and_latency(node: Node, cases: list[FimCase], roots: dict[str, Path],
                               say: Callable[[str], None]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for index, case in enumerate(cases, 1):
        root = roots[case.repo]
        cold, cold_ms = await _ask(node, _request(case, root, use_cache=False))
        block, _ = await _ask(node, _request(case, root, use_cache=False, time_budget_ms=0))
        plain, _ = await _ask(node, _request(case, root, use_cache=False, repo_context=False, time_budget_ms=0))
        warm: list[dict[str, Any]] = []
        first_line = case.expected.split("\n")[0]
        for typed in (first_line[:1], first_line[:2]):
            if typed:
                outcome, ms = await _ask(node, _typed(case, root, typed, use_cache=False))
                warm.append(_timed(outcome, ms))
        through: dict[str, Any] | None = None
        if len(cold.text) > 1:  # type the suggestion's first character: the rest comes from recent results
            await _ask(node, _request(case, root))  # the suggestion at the cursor, as an editor would hold it
            outcome, ms = await _ask(node, _typed(case, root, cold.text[0]))
            through = _timed(outcome, ms)
        records.append({
            "repo": case.repo, "path": case.path, "function": case.function, "expected": case.expected,
            "cold": {"text": cold.text, **_timed(cold, cold_ms), "context_files": list(cold.context_files),
                     **msgspec.to_builtins(score(cold.text, case.expected))},
            "with_context": {"text": block.text, "ended": block.ended, "context_files": list(block.context_files),
                             **msgspec.to_builtins(score(block.text, case.expected))},
            "without_context": {"text": plain.text, "ended": plain.ended,
                                **msgspec.to_builtins(score(plain.text, case.expected))},
            "warm": warm, "typed_through": through})
        say(f"{index}/{len(cases)} {case.repo}:{case.path}:{case.function} cold {cold_ms:.0f} ms "
            f"block {score(block.text, case.expected).block_similarity:.2f} "
            f"warm {', '.join(str(w['ms']) for w in warm)} ms")
    return records


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    def arm(key: str) -> dict[str, Any]:
        rows = [r[key] for r in records]
        n = len(rows) or 1
        return {"cases": len(rows), "ended": dict(sorted(Counter(r["ended"] for r in rows).items())),
                "first_line_exact": round(sum(r["first_line_exact"] for r in rows) / n, 3),
                "first_line_similarity": round(sum(r["first_line_similarity"] for r in rows) / n, 3),
                "block_exact": round(sum(r["block_exact"] for r in rows) / n, 3),
                "block_similarity": round(sum(r["block_similarity"] for r in rows) / n, 3),
                "empty": sum(1 for r in rows if not r["text"].strip())}

    cold = [r["cold"]["ms"] for r in records]
    warm = [w["ms"] for r in records for w in r["warm"]]
    through = [r["typed_through"]["ms"] for r in records if r["typed_through"]]
    cold_share = [r["cold"]["cached_tokens"] / max(1, r["cold"]["prompt_tokens"]) for r in records]
    warm_share = [w["cached_tokens"] / max(1, w["prompt_tokens"]) for r in records for w in r["warm"]]
    return {
        "quality": {"with_context": arm("with_context"), "without_context": arm("without_context"),
                    "as_served": arm("cold")},
        "latency_ms": {
            "cold": {"median": _median(cold), "p90": _pct(cold, 0.9), "n": len(cold),
                     "cached_share_median": round(statistics.median(cold_share), 3) if cold_share else None},
            "warm": {"median": _median(warm), "p90": _pct(warm, 0.9), "n": len(warm),
                     "cached_share_median": round(statistics.median(warm_share), 3) if warm_share else None},
            "typed_through": {"median": _median(through), "n": len(through),
                              "served_from_recent": sum(1 for r in records if r["typed_through"]
                                                        and r["typed_through"]["ended"] == "cached")},
            "prompt_tokens_median": _median([float(r["cold"]["prompt_tokens"]) for r in records]),
            "context_tokens_median": _median([float(r["cold"]["context_tokens"]) for r in records]),
            "generated_tokens_median": _median([float(w["generated_tokens"]) for r in records for w in r["warm"]]),
        },
    }


async def _beside_turns(node: Node, case: FimCase, root: Path, say: Callable[[str], None],
                        repeats: int) -> dict[str, Any]:
    """Completions while a turn prefills (their wait) and while it decodes (the turn's token gaps)."""
    idle: list[float] = []
    for i in range(repeats):
        outcome, ms = await _ask(node, _typed(case, root, "x" * (i + 1), use_cache=False))
        idle.append(ms)
    during_prefill: list[dict[str, Any]] = []
    chunk_ms: list[float] = []
    for i in range(repeats + 1):  # the first turn alone: its prefill gives one chunk's time
        prefilling = asyncio.Event()

        async def on_event(event: TurnEvent, flag: asyncio.Event = prefilling) -> None:
            if event.kind == "state" and event.state == "prefill":
                flag.set()

        filler = " ".join(f"note{i}_{j} alpha beta gamma" for j in range(900))
        turn = asyncio.ensure_future(node.turn(TurnRequest(
            root=str(root), prompt=f"Summarise these notes in one line.\n{filler}", client_id="bench-chat",
            thread=f"bench-prefill-{i}-{time.time_ns()}", max_new_tokens=4), on_event))
        await asyncio.wait_for(prefilling.wait(), 120)
        if i == 0:
            alone = (await turn).explain
            if alone.ttft_ms and alone.measured_recomputed_tokens:
                chunk_ms.append(alone.ttft_ms / alone.measured_recomputed_tokens * node.config.engine.chunk_tokens)
            continue
        await asyncio.sleep(1.0)
        outcome, ms = await _ask(node, _typed(case, root, "y" * i, use_cache=False))
        turn_running = not turn.done()
        done = await turn
        during_prefill.append({**_timed(outcome, ms), "turn_still_prefilling": turn_running,
                               "turn_prompt_tokens": done.explain.totals.tokens})
    gaps_alone: list[float] = []
    gaps_shared: list[float] = []
    completion_ms: list[float] = []
    for i in range(repeats):
        times: list[float] = []
        windows: list[tuple[float, float]] = []

        async def record(event: TurnEvent, into: list[float] = times) -> None:
            if event.kind == "chunk" and event.text:
                into.append(time.perf_counter())

        turn = asyncio.ensure_future(node.turn(TurnRequest(
            root=str(root), prompt=f"Count from 1 to 300, one number per line. ({i})", client_id="bench-chat",
            thread=f"bench-decode-{i}-{time.time_ns()}", max_new_tokens=160), record))
        while len(times) < 12 and not turn.done():
            await asyncio.sleep(0.01)
        for k in range(3):
            start = time.perf_counter()
            _, ms = await _ask(node, _typed(case, root, "z" * (k + 1 + 3 * i), use_cache=False))
            windows.append((start, time.perf_counter()))
            completion_ms.append(ms)
            await asyncio.sleep(0.5)
        await turn
        for a, b in itertools.pairwise(times):
            inside = any(s <= b and a <= e for s, e in windows)
            (gaps_shared if inside else gaps_alone).append((b - a) * 1000)
    say(f"beside turns: idle {_median(idle)} ms, during prefill {_median([d['ms'] for d in during_prefill])} ms, "
        f"turn token gap alone {_median(gaps_alone)} / shared {_median(gaps_shared)} ms")
    return {
        "completion_idle_ms": {"median": _median(idle), "values": [round(v, 1) for v in idle]},
        "completion_during_prefill_ms": {"median": _median([d["ms"] for d in during_prefill]), "runs": during_prefill},
        "chunk_ms_estimate": _median(chunk_ms),
        "wait_over_idle_ms": (round(_median([d["ms"] for d in during_prefill]) - _median(idle), 1)  # type: ignore[operator]
                              if during_prefill and idle else None),
        "turn_token_gap_ms": {"alone": {"median": _median(gaps_alone), "p90": _pct(gaps_alone, 0.9),
                                        "max": round(max(gaps_alone), 1) if gaps_alone else None,
                                        "n": len(gaps_alone)},
                              "with_completion": {"median": _median(gaps_shared), "p90": _pct(gaps_shared, 0.9),
                                                  "max": round(max(gaps_shared), 1) if gaps_shared else None,
                                                  "n": len(gaps_shared)}},
        "completion_during_decode_ms": {"median": _median(completion_ms)},
    }


def _plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    lat = report["summary"]["latency_ms"]
    labels = ["cold", "warm", "typed through"]
    values = [lat["cold"]["median"] or 0, lat["warm"]["median"] or 0, lat["typed_through"]["median"] or 0]
    bars = axes[0].bar(labels, values, color=["#c06040", "#4080c0", "#40a060"])
    axes[0].bar_label(bars, fmt="%.0f")
    axes[0].axhline(800, color="grey", linestyle="--", linewidth=1)
    axes[0].set_title("keystroke to ghost text, median (ms); target 800", fontsize=9)
    quality = report["summary"]["quality"]
    metrics = ["first_line_exact", "first_line_similarity", "block_exact", "block_similarity"]
    xs = range(len(metrics))
    for offset, (arm, colour) in zip((-0.2, 0.2), (("with_context", "#4080c0"), ("without_context", "#c0a040")),
                                     strict=True):
        bars = axes[1].bar([x + offset for x in xs], [quality[arm][m] for m in metrics], width=0.4,
                           label=arm.replace("_", " "), color=colour)
        axes[1].bar_label(bars, fmt="%.2f", fontsize=7)
    axes[1].set_xticks(list(xs), ["1st line EM", "1st line ES", "block EM", "block ES"], fontsize=8)
    axes[1].set_ylim(0, 1.05)
    axes[1].legend(fontsize=8)
    axes[1].set_title(f"quality on {quality['with_context']['cases']} held-out functions", fontsize=9)
    beside = report["beside_turns"]
    gap = beside["turn_token_gap_ms"]
    labels = ["idle", "during prefill", "turn gap alone", "turn gap shared"]
    values = [beside["completion_idle_ms"]["median"] or 0, beside["completion_during_prefill_ms"]["median"] or 0,
              gap["alone"]["median"] or 0, gap["with_completion"]["median"] or 0]
    bars = axes[2].bar(labels, values, color=["#4080c0", "#c06040", "#808080", "#a060a0"])
    axes[2].bar_label(bars, fmt="%.0f")
    axes[2].tick_params(axis="x", labelsize=7)
    axes[2].set_title(f"beside a chat turn (ms); one chunk ~ {beside['chunk_ms_estimate']} ms", fontsize=9)
    fig.suptitle(f"inline completions — {report['model']}, {report['machine']['cpus']} CPUs", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def _run(config: Config, cases: list[FimCase], roots: dict[str, Path], repeats: int,
               say: Callable[[str], None]) -> dict[str, Any]:
    node = Node(config)
    try:
        info = await node.completion_info()
        if not info.available:
            raise SystemExit(f"completions are unavailable with {info.model}: {info.reason}")
        for root in roots.values():  # index first: the figures are about completions, not first indexing
            await node._open_index(node.workspace(str(root)))
        records = await _quality_and_latency(node, cases, roots, say)
        beside = await _beside_turns(node, cases[0], roots[cases[0].repo], say, repeats)
        return {"records": records, "summary": _summary(records), "beside_turns": beside}
    finally:
        await node.close()


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench completions", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=config.model.default)
    p.add_argument("--repo", action="append", type=Path, default=[],
                   help="a Python repository to draw cases from (repeatable; its folder's name names it)")
    p.add_argument("--per-repo", type=int, default=20)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--repeats", type=int, default=3, help="runs of each beside-a-turn measurement")
    p.add_argument("--out", default="bench/results")
    ns = p.parse_args(argv)
    config = msgspec.structs.replace(config, model=msgspec.structs.replace(config.model, default=ns.model))

    def say(line: str) -> None:
        print(f"[bench completions] {line}", flush=True)

    if not ns.repo:
        p.error("no repositories: pass --repo PATH (contenox bench completions passes the eval set's by default)")
    missing = [str(r) for r in ns.repo if not r.is_dir()]
    if missing:
        p.error(f"not a folder: {', '.join(missing)}")
    roots = {r.resolve().name: r.resolve() for r in ns.repo}
    cases = [c for name, root in roots.items() for c in extract_cases(name, root, ns.per_repo, ns.seed)]
    say(f"{len(cases)} cases from {', '.join(roots)} on {ns.model}")
    result = asyncio.run(_run(config, cases, roots, ns.repeats, say))
    report = {"model": ns.model, "date": date.today().isoformat(),
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
              "config": {"completion": msgspec.to_builtins(config.completion),
                         "chunk_tokens": config.engine.chunk_tokens, "engine_process": config.engine.process},
              "repos": {name: str(root) for name, root in roots.items()}, "seed": ns.seed, **result}
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{date.today().isoformat()}-completions-{ns.model}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    _plot(report, path.with_suffix(".png"))
    say(json.dumps(report["summary"], indent=2))
    say(f"wrote {path} and {path.with_suffix('.png')}")
    return 0
