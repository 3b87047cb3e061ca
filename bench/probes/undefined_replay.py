"""Probe: how many of the recorded candidates read a name nothing defines where they read it?

Every verified-mode report keeps each candidate's diff and outcome. This lays each distinct Python change again on
its task's files (the repository at the task's commit, ``git apply``) and asks :func:`undefined_names` what the
node now asks before a candidate's check runs: a change that adds a read of a name nothing binds there is no
longer checked or offered. Counted per outcome the candidate had, and for the offered ones; no model, no check.

Needs the eval repositories (``.cache/eval-repos``). From the repository root:
``.venv/bin/python bench/probes/undefined_replay.py bench/results/*-eval-verified-*.json --out bench/results/X.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

from contenox.verify import undefined_names

_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def _commits(tasks: Path) -> dict[str, tuple[str, str]]:
    """Task id -> (repository, commit)."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(tasks.glob("*.toml")):
        for task in tomllib.loads(path.read_text())["task"]:
            out[task["id"]] = (task["repo"], task["commit"])
    return out


def _after(repo: Path, commit: str, diff: str) -> list[tuple[str, str | None, str | None]] | None:
    """(path, before, after) for each Python file ``diff`` changes, laid on ``repo`` at ``commit``; None when it
    does not apply there (a change drawn on top of another)."""
    paths = sorted({p for pair in _FILE.findall(diff) for p in pair if p.endswith(".py")})
    if not paths:
        return []
    with tempfile.TemporaryDirectory(prefix="undefined-replay-") as folder:
        tree = Path(folder)
        before: dict[str, str | None] = {}
        for path in paths:
            shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True,
                                   text=True)
            before[path] = shown.stdout if shown.returncode == 0 else None
            if before[path] is not None:
                (tree / path).parent.mkdir(parents=True, exist_ok=True)
                (tree / path).write_text(before[path] or "")
        applied = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=tree, input=diff,
                                 capture_output=True, text=True)
        if applied.returncode != 0:
            return None
        return [(p, before[p], (tree / p).read_text() if (tree / p).exists() else None) for p in paths]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--tasks", type=Path, default=Path("bench/eval/tasks"))
    parser.add_argument("--repos", type=Path, default=Path(".cache/eval-repos"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    commits = _commits(args.tasks)
    seen: set[tuple[str, str]] = set()
    outcomes: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    offered: list[dict] = []
    examples: list[dict] = []
    not_applied = 0
    for report in args.reports:
        data = json.loads(report.read_text())
        for result in data.get("results", []):
            v = result.get("verification")
            if not v or result["id"] not in commits:
                continue
            repo, commit = commits[result["id"]]
            for index, (diff, outcome) in enumerate(zip(v.get("diffs", []), v.get("outcomes", []), strict=False), 1):
                if not diff or (result["id"], diff) in seen or outcome in ("does_not_parse", "does_not_apply"):
                    continue
                seen.add((result["id"], diff))
                files = _after(args.repos / repo, commit, diff)
                if files is None:
                    not_applied += 1
                    continue
                if not files:
                    continue
                outcomes[outcome] += 1
                said = [s for p, b, a in files if (s := undefined_names(p, b, a))]
                if not said:
                    continue
                flagged[outcome] += 1
                row = {"task": result["id"], "model": data.get("model"), "report": report.name, "candidate": index,
                       "outcome": outcome, "offered": index == v.get("chosen"),
                       "task_passed": bool(result.get("passed")), "said": said[0][:300]}
                if row["offered"]:
                    offered.append(row)
                if len(examples) < 40:
                    examples.append(row)
    out = {"reports": [r.name for r in args.reports], "distinct_python_changes": sum(outcomes.values()),
           "not_applied_alone": not_applied, "by_outcome": dict(outcomes), "undefined_by_outcome": dict(flagged),
           "offered_with_undefined": offered, "examples": examples}
    print(f"{sum(flagged.values())} of {sum(outcomes.values())} distinct Python changes read a name nothing defines "
          f"({not_applied} drawn on top of another, not laid alone)")
    for outcome, n in outcomes.most_common():
        print(f"  {outcome}: {flagged[outcome]} of {n}")
    graded = ", ".join(f"{r['task']} ({r['report']})" for r in offered if r["task_passed"]) or "none"
    print(f"  offered: {len(offered)} ({', '.join(sorted({r['task'] for r in offered}))}); of those, in a run the "
          f"task passed as graded: {graded}")
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
