"""Probe: where does the node's localization put each bug? (No model: the places a focused round would get.)

For each bug and trace task with an injected bug and a check command, on a fresh checkout of the task (the eval's
own: the repository at the task's commit, its bug injected): the check runs traced as the node's first check does,
then the failing tests' whole files (the node's spectrum run), and the places are found as the node finds them
(``places`` over the failing output and the task's terminal output, the workspace's real symbol index, told by the
trace with ``with_traced``, ten kept). The node then lets the model's picks order what the trace leaves tied,
after the question's words where the trace is blind (one failing run, no passing one); the picks are left out here.
Per task: the rank of the place that holds the bug's lines (the eval's ``bug_place``: 0 when none of the ten does)
as ``with_traced`` orders them and, where the trace is blind, with the question's words first (``named_place``),
and the ten places. Run it on two versions of the code to see what a localization change does to every
task at once (``PYTHONPATH`` at another checkout's shim; that checkout's ``with_traced`` is used).

From the repository root: ``.venv/bin/python bench/probes/places.py --cache .cache/eval-repos --out X.json
bench/eval/tasks/*.toml``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from contenox.config import WorkspaceConfig
from contenox.eval.checkout import checkout
from contenox.eval.repos import materialize
from contenox.eval.score import bug_place
from contenox.eval.tasks import load_task_set
from contenox.verify import failed_test_ids, python_env, run_check
from contenox.verify.command import spectrum_command
from contenox.verify.focus import blind, failing_test_frames, places, relevance, with_traced
from contenox.verify.trace import ran_functions, read_trace, trace_env
from contenox.workspace import Workspace

_POOL = 10
"""Places kept, as the node's ``_POOL``."""


def probe_task(task, repo: Path, scratch: Path) -> dict:
    tree = scratch / task.id
    checkout(task, repo, tree)
    workspace = Workspace.open(tree, WorkspaceConfig(), scratch / "index" / task.id)
    workspace.refresh()

    def locate(name: str) -> list[tuple[str, int, int]]:
        return [(found.path, found.line, found.end_line) for found in workspace.find_symbol(name)]

    def read(path: str) -> str | None:
        try:
            return (tree / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    env = python_env(tree, {**os.environ, **task.check.env})
    command = task.check.test_command
    run = run_check(command, tree, env=trace_env(env, scratch / "trace" / task.id, tree), timeout_s=300)
    calls = read_trace(scratch / "trace" / task.id, tree)
    ran = ran_functions(calls, failed_test_ids(run.output), run_failed=True) if calls else []
    files = [path for path, _, _ in failing_test_frames(run.output, tree)] or [
        test.split("::")[0] for test in failed_test_ids(run.output)]
    spectrum = spectrum_command(command, files)
    if spectrum is not None:
        whole = run_check(spectrum, tree, env=trace_env(env, scratch / "spectrum" / task.id, tree), timeout_s=300)
        wide = read_trace(scratch / "spectrum" / task.id) if whole.outcome in ("passed", "failed") else None
        ran = (ran_functions(wide, failed_test_ids(whole.output), run_failed=False) if wide else []) or ran
    found = places([run.output, task.terminal], [tree, tree], locate, read, limit=_POOL, hops=3)
    told = with_traced(found, ran, locate, _POOL, task.ask, read) if "read" in inspect.signature(
        with_traced).parameters else with_traced(found, ran, locate, _POOL, task.ask)
    entries = [f"{p.name} ({p.path}:{p.start}-{p.end})" for p in told]
    named = sorted(range(len(told)), key=lambda k: (-told[k].suspicion, -relevance(told[k].name, task.ask)
                                                    if blind(ran) else 0, k))
    return {"id": task.id, "kind": task.kind, "outcome": run.outcome, "spectrum": spectrum, "traced": len(ran),
            "bug_place": bug_place(task, entries), "named_place": bug_place(task, [entries[k] for k in named]),
            "places": [f"{e} {p.suspicion:.2f}" for e, p in zip(entries, told, strict=True)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+", help="task files (bench/eval/tasks/*.toml)")
    parser.add_argument("--cache", type=Path, required=True, help="the eval repositories (.cache/eval-repos)")
    parser.add_argument("--only", nargs="*", default=(), help="task ids (default: every bug and trace task)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    task_set = load_task_set(args.tasks)
    specs = {spec.name: spec for spec in task_set.repos}
    rows = []
    with tempfile.TemporaryDirectory(prefix="cx-places-") as folder:
        scratch = Path(folder)
        for task in task_set.tasks:
            if (args.only and task.id not in args.only) or task.kind not in ("bug_localization", "trace_test") \
                    or not task.inject or task.check is None or not task.check.test_command:
                continue
            row = probe_task(task, materialize(specs[task.repo], args.cache), scratch)
            rows.append(row)
            print(f"{row['id']}: bug place {row['bug_place']} of {len(row['places'])}", file=sys.stderr, flush=True)
            shutil.rmtree(scratch / task.id, ignore_errors=True)
    summary: dict[str, object] = {"tasks": len(rows)}
    for key, prefix in (("bug_place", ""), ("named_place", "named_")):
        ranks = [r[key] for r in rows if r[key] is not None]
        summary.update({f"{prefix}first": sum(1 for n in ranks if n == 1),
                        f"{prefix}within_3": sum(1 for n in ranks if 1 <= n <= 3),
                        f"{prefix}within_6": sum(1 for n in ranks if 1 <= n <= 6),
                        f"{prefix}found": sum(1 for n in ranks if n >= 1)})
    args.out.write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
