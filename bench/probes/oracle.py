"""Probe: would a better choice among the candidates already drawn have passed? (pass@k against the choice.)

Each candidate change a verified-mode eval report recorded (``verification.diffs``) is laid on a fresh checkout
of its task (the eval's own: the repository at the task's commit, its bug injected) and the task's grading test
runs (``check.test_command``, which the node may never have seen). Per task: how many distinct changes were drawn,
how many apply, how many pass the grading test, whether any does (the oracle: what a perfect choice among these
candidates would give), what the node offered, and what a majority vote over the changes that passed the node's
own check would have offered (Agentless's last step: the most frequent normalized change). Reading: an oracle far
above the offered answers means the choice (the check, the tests written for the change) is what fails; an oracle
at the offered answers means no candidate drawn was right.

Needs the eval repositories in ``--cache`` (any ``contenox eval`` run builds them). From the repository root:
``.venv/bin/python bench/probes/oracle.py --cache .cache/eval-repos --out bench/results/X.json REPORT.json...``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _recorded import eval_tasks, replay_parser

from contenox.eval.checkout import checkout
from contenox.eval.score import grade_candidates


def normalized(diff: str) -> str:
    """A change without its hunk headers, its context lines and trailing blanks: what majority voting counts as
    one change (Agentless normalizes patches before voting)."""
    kept = [line.rstrip() for line in diff.splitlines()
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    return "\n".join(line for line in kept if line.strip() not in ("+", "-"))


def probe_task(task, repo: Path, verification: dict, offered_passed: bool | None) -> dict:
    diffs = list(verification.get("diffs") or [])
    outcomes = list(verification.get("outcomes") or [])
    arms = list(verification.get("arms") or ["?"] * len(diffs))
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="oracle-") as scratch:
        graded = grade_candidates(task, checkout(task, repo, Path(scratch) / "tree"), diffs)
    distinct = list(graded)
    passing = [d for d in distinct if graded[d]]
    checked = [d for d, o in zip(diffs, outcomes, strict=False) if d and o == "passed"]
    votes = Counter(normalized(d) for d in checked)
    vote = None
    if votes:
        top = votes.most_common(1)[0][0]
        vote = next(d for d in checked if normalized(d) == top)
    arms_passing = Counter(a for d, a in zip(diffs, arms, strict=False) if d and graded.get(d))
    return {
        "id": task.id, "kind": task.kind, "candidates": len(diffs), "distinct": len(distinct),
        "applied": sum(1 for d in distinct if graded[d] is not None),
        "grading_passed": len(passing), "oracle": bool(passing),
        "node_check_passed": len(set(checked)),
        "node_check_passed_and_grading_passed": len({d for d in checked if graded.get(d)}),
        "offered_passed": offered_passed,
        "vote": None if vote is None else {True: "passed", False: "failed", None: "does_not_apply"}[graded[vote]],
        "vote_size": votes.most_common(1)[0][1] if votes else 0,
        "arms_passing": dict(arms_passing), "status": verification.get("status"),
        "baseline": verification.get("baseline"), "command_source": verification.get("command_source"),
        "seconds": round(time.monotonic() - began, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = replay_parser(__doc__)
    args = parser.parse_args(argv)
    tasks, repos = eval_tasks(args.cache)
    out: dict = {"reports": {}, "host": {"python": sys.version.split()[0], "git": shutil.which("git")}}
    if args.out.exists():
        out = json.loads(args.out.read_text())
    for report_path in args.reports:
        report = json.loads(report_path.read_text())
        rows = out["reports"].setdefault(report_path.name, {"model": report.get("model"), "tasks": []})
        done = {row["id"] for row in rows["tasks"]}
        for result in report["results"]:
            verification = result.get("verification")
            if result["id"] in done or not isinstance(verification, dict) or not any(verification.get("diffs") or ()):
                continue
            task = tasks[result["id"]]
            if task.check is None or not task.check.test_command:
                continue
            edit = result.get("edit") or {}
            row = probe_task(task, repos[task.repo], verification, edit.get("test_passed"))
            row["task_passed"] = result.get("passed")
            rows["tasks"].append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
