"""``contenox bench engine-process``: the engine on a thread of the node vs in its own process, one run.

For each mode, on the same model and token ids (the targets of moving the engine out of the node):
- **loop lag during a long prefill**: an asyncio ticker (5 ms sleeps) runs on the caller's loop while an
  uncached ``--prompt-tokens`` prefill runs; its lateness (p50 / p99 / max) is what a hover or a status
  request in another window waits. The prefill's own figures give one chunk's compute time.
- **cancel in prefill**: cancel 0.3 s into an uncached prefill; latency from that moment to the final event
  (median of ``--repeats``; a loop that runs the cancel late counts), beside one chunk's compute.
- **warm TTFT**: the same cached prompt again; caller-view time from submit to the first token event
  (median of ``--repeats``): the process hop's cost.
- **resident memory**: the caller's and (process mode) the engine process's RSS after the runs.
- ``--node-only``: a real node (each mode), one client's turn prefilling a large pinned file while a second
  client asks ``status`` every 20 ms: that client's round trips (what a hover in another window waits).
- **supervision**: ``kill -9`` and ``SIGSTOP`` of the engine process mid-request: time until the request fails
  with EngineCrashed (the hang by the heartbeat, 5 s here), the restart's time, and the next request's outcome.
Output: ``<out>/<date>-engine-process-<model>.json`` and a PNG beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from contenox.config import Config
from contenox.host import host_facts
from contenox.runtime_ov import (
    EngineLike,
    EngineOptions,
    GenerateRequest,
    InstalledModel,
    ModelStore,
    TokenEvent,
    start_engine,
)

__all__ = ["main"]

_TICK_S = 0.005


def _rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], 2) if ordered else 0.0


def _filler(engine: EngineLike, tokens: int, nonce: str) -> list[int]:
    """``tokens`` ids of varied source-like text, opened by a nonce line (so nothing of it is cached)."""
    line_ids = [engine.tokenizer.encode(f"def helper_{i}(value):\n    return value * {i} + {i % 7}\n\n")
                for i in range(400)]
    ids = engine.tokenizer.encode(f"# {nonce}\n")
    i = 0
    while len(ids) < tokens:
        ids += line_ids[i % len(line_ids)]
        i += 1
    return ids[:tokens]


async def _lag_during_prefill(engine: EngineLike, ids: list[int]) -> dict[str, Any]:
    handle = engine.submit(GenerateRequest(session_id="bench-lag", token_ids=ids, max_new_tokens=1))
    lags: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        while not done.is_set():
            started = time.perf_counter()
            await asyncio.sleep(_TICK_S)
            lags.append((time.perf_counter() - started - _TICK_S) * 1000.0)

    ticker = asyncio.ensure_future(tick())
    final = await handle.result()
    done.set()
    await ticker
    m = final.metrics
    return {"prompt_tokens": len(ids), "ttft_ms": round(m.ttft_ms, 1), "prefill_steps": m.prefill_steps,
            "chunk_ms": round(m.ttft_ms / m.prefill_steps, 1) if m.prefill_steps else None,
            "loop_lag_ms": {"n": len(lags), "p50": _pct(lags, 0.5), "p99": _pct(lags, 0.99),
                            "max": round(max(lags), 2) if lags else 0.0}}


async def _cancel_in_prefill(engine: EngineLike, ids: list[int]) -> float:
    """From the moment the cancel was meant (0.3 s after submit) to the final event: a stalled loop that
    runs the cancel late counts, as a user pressing Stop would feel it."""
    submitted = time.perf_counter()
    handle = engine.submit(GenerateRequest(session_id="bench-cancel", token_ids=ids, max_new_tokens=4))
    await asyncio.sleep(0.3)
    handle.cancel()
    await handle.result()
    return (time.perf_counter() - submitted - 0.3) * 1000.0


async def _warm_ttft(engine: EngineLike, ids: list[int]) -> float:
    started = time.perf_counter()
    handle = engine.submit(GenerateRequest(session_id="bench-warm", token_ids=ids, max_new_tokens=2))
    first = None
    async for event in handle:
        if isinstance(event, TokenEvent) and first is None:
            first = time.perf_counter()
    await handle.result()
    return ((first or time.perf_counter()) - started) * 1000.0


def _mode(model: InstalledModel, options: EngineOptions, *, process: bool, prompt_tokens: int, cancel_tokens: int,
          repeats: int, say: Callable[[str], None]) -> dict[str, Any]:
    name = "process" if process else "thread"
    started = time.perf_counter()
    engine = start_engine(model, options, process=process)
    load_ms = (time.perf_counter() - started) * 1000.0
    try:
        say(f"{name}: loaded in {load_ms:.0f} ms; prefill of {prompt_tokens} uncached tokens")
        lag = asyncio.run(_lag_during_prefill(engine, _filler(engine, prompt_tokens, f"lag {time.time_ns()}")))
        say(f"{name}: loop lag p99 {lag['loop_lag_ms']['p99']} ms; cancels in prefill")
        cancels = [asyncio.run(_cancel_in_prefill(engine, _filler(engine, cancel_tokens, f"cancel {time.time_ns()}")))
                   for _ in range(repeats)]
        warm_ids = _filler(engine, 1024, "warm prompt")
        asyncio.run(_warm_ttft(engine, warm_ids))  # the prompt enters the prefix cache
        warm = [asyncio.run(_warm_ttft(engine, warm_ids)) for _ in range(repeats)]
        engine_pid = getattr(engine, "pid", os.getpid())
        return {"mode": name, "load_ms": round(load_ms, 1), "prefill": lag,
                "cancel_in_prefill_ms": {"n": len(cancels), "median": round(statistics.median(cancels), 1),
                                         "max": round(max(cancels), 1)},
                "warm_ttft_ms": {"n": len(warm), "median": round(statistics.median(warm), 1),
                                 "min": round(min(warm), 1), "max": round(max(warm), 1), "prompt_tokens": len(warm_ids)},
                "rss_bytes": {"caller": _rss_bytes(os.getpid()),
                              "engine_process": _rss_bytes(engine_pid) if process else None}}
    finally:
        engine.close()


def _supervision(model: InstalledModel, options: EngineOptions, *, tokens: int,
                 say: Callable[[str], None]) -> dict[str, Any]:
    """kill -9 and SIGSTOP of the engine process mid-request: how soon the request fails with
    EngineCrashed, how long a restart takes, and whether the next request then works."""
    import signal

    from contenox.errors import EngineCrashed
    from contenox.runtime_ov import RemoteEngine

    out: dict[str, Any] = {}
    for name, sig, hang_s in (("kill_9", signal.SIGKILL, 30.0), ("hang_sigstop", signal.SIGSTOP, 5.0)):
        engine = RemoteEngine.start(model, options, hang_s=hang_s)
        try:
            handle = engine.submit(GenerateRequest(session_id=f"bench-{name}",
                                                   token_ids=_filler(engine, tokens, f"{name} {time.time_ns()}"),
                                                   max_new_tokens=8))
            time.sleep(0.5)
            os.kill(engine.pid, sig)
            signalled = time.perf_counter()
            error = None
            try:
                handle.wait(120)
            except EngineCrashed as exc:
                error = exc.message
            failed_ms = (time.perf_counter() - signalled) * 1000.0
        finally:
            engine.close()
        started = time.perf_counter()
        fresh = RemoteEngine.start(model, options)
        restart_ms = (time.perf_counter() - started) * 1000.0
        try:
            final = fresh.generate(GenerateRequest(session_id="bench-after", token_ids=_filler(fresh, 64, "after"),
                                                   max_new_tokens=4), timeout=120)
        finally:
            fresh.close()
        out[name] = {"error": error, "failed_after_ms": round(failed_ms, 1), "hang_s": hang_s,
                     "restart_ms": round(restart_ms, 1), "next_request": final.finish_reason}
        say(f"{name}: EngineCrashed after {failed_ms:.0f} ms, restart {restart_ms:.0f} ms, next {final.finish_reason}")
    return out


def _plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = report["modes"]
    labels = [m["mode"] for m in modes]
    figures = [("loop lag p99 during prefill (ms)", [m["prefill"]["loop_lag_ms"]["p99"] for m in modes]),
               ("cancel in prefill, median (ms)", [m["cancel_in_prefill_ms"]["median"] for m in modes]),
               ("warm TTFT, median (ms)", [m["warm_ttft_ms"]["median"] for m in modes])]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, (title, values) in zip(axes, figures, strict=True):
        bars = ax.bar(labels, values, color=["#c06040", "#4080c0"])
        ax.bar_label(bars, fmt="%.1f")
        ax.set_title(title, fontsize=9)
    chunk = modes[0]["prefill"]["chunk_ms"]
    fig.suptitle(f"engine on a thread vs in its own process — {report['model']}, one chunk = {chunk} ms", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench engine-process", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=config.model.default)
    p.add_argument("--prompt-tokens", type=int, default=16384, help="the long prefill the loop lag is measured in")
    p.add_argument("--cancel-tokens", type=int, default=4096, help="the prefill cancelled 0.3 s in")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--node-only", action="store_true",
                   help="only the real-node figure: status round trips from a second client during a long prefill")
    p.add_argument("--pin-tokens", type=int, default=12000, help="the pinned file's size for --node-only")
    ns = p.parse_args(argv)
    model = ModelStore(config.models_dir).get(ns.model)
    limit = model.profile.max_tested_context - 8
    options = EngineOptions.from_config(config.engine, device=config.model.device)

    def say(line: str) -> None:
        print(f"[bench engine-process] {line}", flush=True)

    if ns.node_only:
        node = [_node_latency(config, model, process=process, pin_tokens=ns.pin_tokens, say=say)
                for process in (False, True)]
        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{date.today().isoformat()}-engine-process-node-{model.name}.json"
        path.write_text(json.dumps({"model": model.name, "date": date.today().isoformat(),
                                    "machine": host_facts(),
                                    "node_status_during_prefill": node}, indent=2) + "\n", encoding="utf-8")
        say(f"wrote {path}")
        return 0

    modes = [_mode(model, options, process=process, prompt_tokens=min(ns.prompt_tokens, limit),
                   cancel_tokens=min(ns.cancel_tokens, limit), repeats=ns.repeats, say=say)
             for process in (False, True)]
    thread, child = modes
    supervision = _supervision(model, options, tokens=min(ns.cancel_tokens, limit), say=say)
    report = {
        "model": model.name, "date": date.today().isoformat(), "chunk_tokens": options.chunk_tokens,
        "machine": host_facts(),
        "modes": modes,
        "supervision": supervision,
        "ratios": {
            "loop_lag_p99_thread_over_process": round(thread["prefill"]["loop_lag_ms"]["p99"]
                                                      / max(0.01, child["prefill"]["loop_lag_ms"]["p99"]), 1),
            "warm_ttft_hop_ms": round(child["warm_ttft_ms"]["median"] - thread["warm_ttft_ms"]["median"], 1),
            "cancel_in_prefill_over_chunk_process": round(child["cancel_in_prefill_ms"]["median"]
                                                          / max(0.01, child["prefill"]["chunk_ms"] or 0.01), 2),
        },
    }
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{report['date']}-engine-process-{model.name}"
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    try:
        _plot(report, out / f"{stem}.png")
        say(f"wrote {out / stem}.json and .png")
    except ImportError as exc:
        say(f"wrote {stem}.json; no plot: {exc}")
    return 0


def _node_latency(config: Config, model: InstalledModel, *, process: bool, pin_tokens: int,
                  say: Callable[[str], None]) -> dict[str, Any]:
    """A real node (engine on a thread, or in its own process): one client's turn prefills a large pinned
    file while a second client asks ``status`` every 20 ms; the second client's round trips."""
    import shutil
    import subprocess
    import tempfile
    import threading

    from contenox.client import NodeClient, call, ensure_node
    from contenox.config import load_config

    scratch = Path(tempfile.mkdtemp(prefix="cx-lat-"))
    try:
        home, repo, sockets = scratch / "home", scratch / "repo", Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
        (home / "models").mkdir(parents=True)
        (home / "models" / model.name).symlink_to(Path(model.path), target_is_directory=True)
        (home / "config.toml").write_text(
            f'[model]\ndefault = "{model.name}"\n\n[engine]\nprocess = {"true" if process else "false"}\n'
            f'max_new_tokens = 4\ncache_size_gb = {config.engine.cache_size_gb}\n\n'
            f'[node]\nidle_exit_s = 300\nsocket_dir = "{sockets}"\n', encoding="utf-8")
        node_config = load_config(home)
        repo.mkdir()
        lines = [f"def helper_{i}(value):\n    return value * {i} + {i % 7}\n\n" for i in range(pin_tokens // 16)]
        (repo / "big.py").write_text("".join(lines), encoding="utf-8")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        call(node_config, "ask", {"cwd": str(repo), "prompt": "hi", "max_new_tokens": 1})  # engine loaded
        outcome: dict[str, Any] = {}

        def long_turn() -> None:
            _, result = call(node_config, "ask", {"cwd": str(repo), "prompt": "Summarise big.py.",
                                                  "pins": [str(repo / "big.py")], "max_new_tokens": 1})
            outcome.update(result)

        turn = threading.Thread(target=long_turn)
        turn.start()
        delays: list[float] = []
        with NodeClient(ensure_node(node_config)) as client:
            time.sleep(1.0)  # past indexing and planning: the prefill is under way
            while turn.is_alive():
                started = time.perf_counter()
                client.call("status")
                delays.append((time.perf_counter() - started) * 1000.0)
                time.sleep(0.02)
        turn.join()
        call(node_config, "stop", start=False)
        explain = outcome.get("explain") or {}
        totals = explain.get("totals") or {}
        status_ms = {"n": len(delays), "p50": _pct(delays, 0.5), "p99": _pct(delays, 0.99),
                     "max": round(max(delays), 1) if delays else None}
        result = {"mode": "process" if process else "thread", "turn_prompt_tokens": totals.get("tokens"),
                  "turn_new_tokens": totals.get("new"), "turn_ttft_ms": explain.get("ttft_ms"),
                  "status_ms": status_ms}
        say(f"node, engine on a {result['mode']}: status p99 {status_ms['p99']} ms over "
            f"{len(delays)} calls during a {totals.get('new')}-token prefill")
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
