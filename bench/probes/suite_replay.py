"""Probe: did the changes the node offered as passing break a test elsewhere in the project?

A verified turn's candidate that passes the check (the failing run) is also run against the failing tests' whole
files; nothing ran the rest of the suite. This lays each offered, passing Python change of the recorded
verified-mode reports on its task's checkout (the eval's own, the bug injected, ``git apply``) and runs the
project's whole suite (:func:`contenox.verify.suite_command`: the check's runner and options, no test named)
before and after it, with the task's environment: the tests that passed before and fail with the change are what
the node now holds a candidate to as well. Per task and change, with whether the task passed as graded.

Needs the eval repositories (``.cache/eval-repos``). From the repository root:
``.venv/bin/python bench/probes/suite_replay.py --cache .cache/eval-repos --out bench/results/X.json
bench/results/*-eval-verified-*.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _recorded import eval_tasks, replay_parser, results

from contenox.eval.checkout import checkout
from contenox.verify import suite_command
from contenox.verify.report import failed_test_ids
from contenox.verify.usable import narrowed_command

TIMEOUT_S = 300


def _usable(tree: Path, line: str, env: dict[str, str]) -> tuple[str, tuple[str, frozenset[str]]]:
    """The suite's line less what it cannot run for want of the environment (the node's own narrowing: test files
    whose imports need a package that is not installed, tests that take a fixture no installed plugin defines, a
    plugin that crashes pytest), and its run on ``tree``."""
    for _ in range(4):
        ran = _run(tree, line, env)
        narrowed = narrowed_command(line, ran[2], ran[3], tree) if ran[0] == "failed" else None
        if narrowed is None:
            return line, ran[:2]
        line = narrowed[0]
    return line, ran[:2]


def _run(tree: Path, line: str, env: dict[str, str]) -> tuple[str, frozenset[str], str, int | None]:
    """The suite's outcome (passed, failed, timeout), the tests it failed, its output and exit code."""
    bin_dir = str(Path(sys.executable).parent)
    full = {**os.environ, **env, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    try:
        done = subprocess.run(line, shell=True, cwd=tree, env=full, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", frozenset(), "", None
    output = done.stdout + done.stderr
    return ("passed" if done.returncode == 0 else "failed"), frozenset(failed_test_ids(output)), output, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = replay_parser(__doc__)
    args = parser.parse_args(argv)
    tasks, repos = eval_tasks(args.cache)
    offered: dict[tuple[str, str], list[str]] = {}  # (task, diff) -> the reports (and model) that offered it
    suites: dict[str, str] = {}  # task -> the suite its check widens to
    graded: dict[tuple[str, str], bool] = {}
    for report in args.reports:
        for r in results(report):
            v, task = r.get("verification") or {}, tasks.get(r.get("id", ""))
            chosen = v.get("chosen")
            if task is None or not chosen or v.get("status") != "passed" or not (line := suite_command(
                    v.get("command") or "")):
                continue
            diffs, outcomes = v.get("diffs") or [], v.get("outcomes") or []
            if chosen > len(diffs) or outcomes[chosen - 1] != "passed":
                continue
            key = (task.id, diffs[chosen - 1])
            suites[task.id] = line
            offered.setdefault(key, []).append(report.name)
            graded[key] = graded.get(key, False) or bool(r.get("passed"))
    rows, before_runs = [], {}
    for (task_id, diff), names in sorted(offered.items()):
        task = tasks[task_id]
        env = dict(task.check.env) if task.check else {}
        with tempfile.TemporaryDirectory(prefix="suite-replay-") as scratch:
            tree = checkout(task, repos[task.repo], Path(scratch) / "tree")
            if task_id not in before_runs:
                before_runs[task_id] = _usable(tree, suites[task_id], env)
            v_line, (before_outcome, before_failed) = before_runs[task_id]
            applied = subprocess.run(["git", "apply", "-"], cwd=tree, input=diff, text=True, capture_output=True,
                                     check=False)
            if applied.returncode != 0:
                rows.append({"id": task_id, "reports": names, "applies": False, "graded_pass": graded[(task_id, diff)]})
                continue
            outcome, failed, _, _ = _run(tree, v_line, env)
        broke = sorted(failed - before_failed)
        rows.append({"id": task_id, "reports": names, "applies": True, "suite": v_line,
                     "before": before_outcome, "failing_before": len(before_failed), "after": outcome,
                     "broke": broke, "graded_pass": graded[(task_id, diff)], "diff": diff})
        print(f"{task_id:36s} graded={graded[(task_id, diff)]!s:5s} before={before_outcome}/{len(before_failed)} "
              f"after={outcome} broke={len(broke)} {broke[:3]}", flush=True)
    out = {"reports": [r.name for r in args.reports], "offered_changes": len(rows),
           "broke_tests_elsewhere": sum(1 for r in rows if r.get("broke")),
           "broke_and_graded_pass": sum(1 for r in rows if r.get("broke") and r["graded_pass"]),
           "rows": rows}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['offered_changes']} offered passing changes; {out['broke_tests_elsewhere']} break a test elsewhere "
          f"in the suite ({out['broke_and_graded_pass']} of them in a run graded as passed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
