"""``contenox bench``: run every case in order and write ``<out>/<date>-<model>.json`` and the PNG."""

from __future__ import annotations

import datetime as dt
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

from contenox.bench.cases import CaseRunner
from contenox.bench.failures import FailureRunner
from contenox.bench.harness import Harness
from contenox.bench.machine import SwapCounter, identity, residency
from contenox.bench.options import BenchOptions, parse_bench_args
from contenox.bench.report import FailureCase, Report, encode_report
from contenox.bench.snapshots import snapshot_cases
from contenox.bench.stats import output_hash
from contenox.config import Config
from contenox.errors import ContenoxError
from contenox.runtime_ov import InstalledModel, ModelStore

__all__ = ["main", "run_report"]


def _say(line: str) -> None:
    sys.stderr.write(f"bench: {line}\n")
    sys.stderr.flush()


def run_report(config: Config, store: ModelStore, model: InstalledModel, opts: BenchOptions) -> Report:
    started = time.monotonic()
    swaps = SwapCounter()
    notes: list[str] = []
    max_context = min(opts.max_context or model.profile.max_tested_context, model.profile.max_tested_context)
    deadline = started + opts.time_budget_s if opts.time_budget_s else 0.0
    with tempfile.TemporaryDirectory(prefix="contenox-bench-") as scratch:
        h = Harness(config, model, Path(scratch))
        ident = identity(config, model, mode="quick" if opts.quick else "full", max_new=opts.max_new_tokens,
                         path="planner+engine")
        _say(f"{model.name}: engine loaded in {h.engine_load_ms:.0f} ms; context limit {max_context}")
        cases = CaseRunner(h, prefix_tokens=opts.prefix_tokens, repeats=opts.repeats, max_new=opts.max_new_tokens,
                           max_context=max_context, say=_say)
        cases.warm_up()
        cold = cases.cold_full_prefill()
        cases.prime()
        same = cases.warm_same_prefix()
        curve = cases.changed_suffix(opts.points, deadline)
        edited = cases.edited_stable_segment()
        decode = cases.decode()
        snaps = snapshot_cases(model, cases.base.stable_prefix(),
                               repeats=opts.repeats, max_new=opts.max_new_tokens, eos=h.eos)
        save, restore = snaps.save, snaps.restore
        _say(f"snapshot: {save.bytes} bytes for {save.tokens} tokens, save {save.ms.median if save.ms else 0:.0f} ms, "
             f"restore {restore.ms.median if restore.ms else 0:.0f} ms, equal={restore.output_equals_original}")

        def recover() -> None:
            h.turn(h.inputs(cases.files, user="Say OK."), 1)

        fail = FailureRunner(h, recover, cases.base.token_ids)
        failures: list[FailureCase] = [fail.over_context(), fail.over_batch(), fail.cancel_prefill(),
                                       fail.cancel_decode(), fail.missing_model(config.models_dir)]
        failures.append(snaps.failure)
        failures.append(fail.profile_mismatch())
        for case in failures:
            _say(f"failure {case.name}: provoked={case.provoked} {case.outcome} recovery {case.recovery_ms} ms")
        peer = None
        if opts.peer:
            from contenox.bench.peer import run_peer

            peer = run_peer(model.weights, cold_ids=cases.cold_ids, warm_pairs=cases.warm_pairs,
                            max_new=opts.max_new_tokens, ours_cold=cold.ttft_ms, ours_warm=same.ttft_ms,
                            ours_decode=decode.tokens_per_sec, ours_hash=output_hash(cases.cold_output),
                            threads=config.engine.threads, repeats=opts.repeats)
            _say(f"peer: {peer.reason}")
        replay = None
        if opts.replay is not None:
            from contenox.bench.replay import run_replay

            try:
                replay = run_replay(config, h.engine, opts.replay, say=_say)
            except ContenoxError as exc:  # the rest of the report stands without it
                notes.append(f"replay not run: {exc.kind}: {exc.message}")
                _say(notes[-1])
        unload_ms = h.close()
        h.floor_close()
        resid = residency(store, [model.name], load_ms=h.engine_load_ms, unload_ms=unload_ms, swaps=swaps)
    notes.append(f"load average at the end: {[round(x, 2) for x in os.getloadavg()]} (at the start: "
                 f"{ident.load_average})")
    if curve.skipped_points:
        notes.append("suffix points not measured: " + "; ".join(curve.skipped_points))
    return Report(identity=ident, cold_full_prefill=cold, warm_same_prefix=same, warm_changed_suffix=curve,
                  edited_stable_segment=edited, snapshot_save=save, snapshot_restore=restore, decode=decode,
                  failure_cases=failures, residency=resid, replay=replay, peer=peer, notes=notes,
                  wall_s=round(time.monotonic() - started, 1))


def _paths(out_dir: Path, model: str, suffix: str = "") -> tuple[Path, Path]:
    stem = f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d')}-{model}{suffix}"
    return out_dir / f"{stem}.json", out_dir / f"{stem}.png"


SUBCOMMANDS = {"reliability": "reliability", "candidates": "candidates", "edits": "edits",
               "anticipation": "anticipation", "toolcalls": "toolcalls", "remote": "remote",
               "engine-process": "engine_process", "completions": "completions", "planner": "planner_micro",
               "workspace": "workspace_micro", "retrieval": "retrieval_micro"}
"""``contenox bench NAME ...``: each its own module's ``main(config, argv)``; without one of these names the
default report (``bench --quick``, ``bench replay``: :func:`~contenox.bench.options.parse_bench_args`)."""


def main(config: Config, argv: list[str]) -> int:
    if argv[:1] and argv[0] in SUBCOMMANDS:
        module = importlib.import_module(f"contenox.bench.{SUBCOMMANDS[argv[0]]}")
        return int(module.main(config, argv[1:]))
    opts = parse_bench_args(argv)
    store = ModelStore(config.models_dir)
    model = store.get(opts.model)
    out_dir = Path(opts.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if opts.replay_only and opts.replay is not None:
        from contenox.bench.replay import replay_only

        section = replay_only(config, model, opts.replay, say=_say)
        json_path, _ = _paths(out_dir, model.name, "-replay")
        json_path.write_bytes(encode_report(section))
        _say(f"wrote {json_path}")
        return 0
    report = run_report(config, store, model, opts)
    json_path, png_path = _paths(out_dir, model.name, "-quick" if opts.quick else "")
    json_path.write_bytes(encode_report(report))
    try:
        from contenox.bench.plot import plot_suffix_curve

        plot_suffix_curve(report, png_path)
        _say(f"wrote {json_path} and {png_path}")
    except ImportError as exc:
        _say(f"wrote {json_path}; no plot: {exc} (pip install 'contenox[bench]')")
    return 0
