"""``contenox eval [TASKS...] [--model NAME] [--retrieval-only] [--json] [--out FILE] [--min-recall R]``.

The arguments are declared in :mod:`contenox.cli` (so other commands start without importing this).
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from contenox.config import Config
from contenox.eval.prepare import DEFAULT_TASKS_DIR
from contenox.eval.report import render_table
from contenox.eval.runner import MODES, run_eval
from contenox.eval.tasks import Task

__all__ = ["run"]


def run(config: Config, args: argparse.Namespace) -> int:
    if args.mode:
        modes = list(dict.fromkeys(m for mode in args.mode for m in (MODES if mode == "both" else (mode,))))
    else:
        modes = ["retrieval"] if args.retrieval_only else list(MODES)
    kinds = set(args.kind or ())
    ids = set(args.task or ())

    def only(task: Task) -> bool:
        return (not kinds or task.kind in kinds) and (not ids or task.id in ids)

    report = run_eval(config, args.tasks or [DEFAULT_TASKS_DIR], model=args.model or config.model.default, modes=modes,
                      retrieval_only=args.retrieval_only, only=only, max_new_tokens=args.max_new_tokens,
                      cache_dir=args.cache, progress=lambda line: print(line, file=sys.stderr, flush=True),
                      partial=args.resume, think_s=args.think_s)
    data = msgspec.json.format(msgspec.json.encode(report), indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(data + b"\n")
    print(data.decode() if args.json else render_table(report))
    if args.min_recall is not None:
        retrieval = next((s for s in report.summaries if s.mode == "retrieval"), None)
        if retrieval is None or retrieval.errors or retrieval.recall < args.min_recall:
            got = "no retrieval run" if retrieval is None else (
                f"{retrieval.recall:.1%} with {retrieval.errors} error(s)")
            print(f"contenox: eval_gate: retrieval recall {got}, below the required {args.min_recall:.0%}",
                  file=sys.stderr)
            return 1
    return 0
