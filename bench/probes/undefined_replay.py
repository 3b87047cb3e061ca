"""Probe: how many of the recorded candidates would a lint rule the node asks before a check have stopped?

Every verified-mode report keeps each candidate's diff and outcome. This lays each distinct change again on its
task's files (the repository at the task's commit with the task's bug injected, ``git apply``) and asks a rule what
the node now asks before a candidate's check runs: ``--rule undefined`` (the default), :func:`undefined_names`: a
Python change that adds a read of a name nothing binds there; ``--rule returns``, :func:`dropped_returns`: a Python
or JavaScript change that leaves a function returning a value on some paths and reaching its end without one.
Such a change is no longer checked or offered. Counted per outcome the candidate had, and for the offered ones; no
model, no check.

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
from contenox.workspace import dropped_returns

_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_RULES = {"undefined": (undefined_names, (".py",)), "returns": (dropped_returns, (".py", ".js", ".mjs", ".cjs"))}


def _commits(tasks: Path) -> dict[str, tuple[str, str, str]]:
    """Task id -> (repository, commit, the diff that injects its bug: '' for none)."""
    out: dict[str, tuple[str, str, str]] = {}
    for path in sorted(tasks.glob("*.toml")):
        for task in tomllib.loads(path.read_text())["task"]:
            out[task["id"]] = (task["repo"], task["commit"], task.get("inject", ""))
    return out


def _after(repo: Path, commit: str, inject: str, diff: str,
           suffixes: tuple[str, ...]) -> list[tuple[str, str | None, str | None]] | None:
    """(path, before, after) for each file ending in ``suffixes`` that ``diff`` changes, laid on ``repo`` at
    ``commit`` with ``inject`` applied first; None when it does not apply there (a change drawn on top of another)."""
    paths = sorted({p for pair in _FILE.findall(diff) for p in pair if p.endswith(suffixes)})
    if not paths:
        return []
    with tempfile.TemporaryDirectory(prefix="lint-replay-") as folder:
        tree = Path(folder)
        for path in sorted({*paths, *(p for pair in _FILE.findall(inject) for p in pair)}):
            shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True,
                                   text=True)
            if shown.returncode == 0:
                (tree / path).parent.mkdir(parents=True, exist_ok=True)
                (tree / path).write_text(shown.stdout)
        if inject.strip() and not _applied(tree, inject):
            return None
        before = {p: (tree / p).read_text() if (tree / p).exists() else None for p in paths}
        if not _applied(tree, diff):
            return None
        return [(p, before[p], (tree / p).read_text() if (tree / p).exists() else None) for p in paths]


def _applied(tree: Path, change: str) -> bool:
    """``change`` (a diff) applied to the files under ``tree``."""
    return subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=tree, input=change.lstrip("\n"),
                          capture_output=True, text=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--tasks", type=Path, default=Path("bench/eval/tasks"))
    parser.add_argument("--repos", type=Path, default=Path(".cache/eval-repos"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rule", choices=sorted(_RULES), default="undefined")
    args = parser.parse_args()
    rule, suffixes = _RULES[args.rule]
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
            repo, commit, inject = commits[result["id"]]
            for index, (diff, outcome) in enumerate(zip(v.get("diffs", []), v.get("outcomes", []), strict=False), 1):
                if not diff or (result["id"], diff) in seen or outcome in ("does_not_parse", "does_not_apply"):
                    continue
                seen.add((result["id"], diff))
                files = _after(args.repos / repo, commit, inject, diff, suffixes)
                if files is None:
                    not_applied += 1
                    continue
                if not files:
                    continue
                outcomes[outcome] += 1
                said = [s for p, b, a in files if (s := rule(p, b, a))]
                if not said:
                    continue
                flagged[outcome] += 1
                row = {"task": result["id"], "model": data.get("model"), "report": report.name, "candidate": index,
                       "outcome": outcome, "offered": index == v.get("chosen"),
                       "task_passed": bool(result.get("passed")), "said": said[0][:300]}
                if row["offered"]:
                    offered.append(row)
                if len(examples) < 40 or outcome == "passed":  # every passing one: what a rule must not stop
                    examples.append(row)
    out = {"reports": [r.name for r in args.reports], "rule": args.rule, "distinct_changes": sum(outcomes.values()),
           "not_applied_alone": not_applied, "by_outcome": dict(outcomes), "flagged_by_outcome": dict(flagged),
           "offered_flagged": offered, "examples": examples}
    print(f"{sum(flagged.values())} of {sum(outcomes.values())} distinct changes ({', '.join(suffixes)}) flagged by "
          f"the {args.rule} rule ({not_applied} drawn on top of another, not laid alone)")
    for outcome, n in outcomes.most_common():
        print(f"  {outcome}: {flagged[outcome]} of {n}")
    graded = ", ".join(f"{r['task']} ({r['report']})" for r in offered if r["task_passed"]) or "none"
    print(f"  offered: {len(offered)} ({', '.join(sorted({r['task'] for r in offered}))}); of those, in a run the "
          f"task passed as graded: {graded}")
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
