"""Replay: the eval's recorded answers to change questions, their edits resolved again by the node's current code.

The edits a node offers are made from the answer's text by ``contenox.node.node._proposed_edits`` (edit blocks,
quoted whole definitions, renames carried, files moved, imports and exports added). When that resolution changes,
a recorded answer resolved again is what the node now offers for the same text. This replays it: each result of
the given reports for a task whose check applies an edit is checked out (the eval's own checkout, at the task's
commit), the answer's edits resolved against it as the node does (the files of the prompt as recorded), applied to
a copy, the task's grading test run, and the answer graded with the eval's own scoring.

What it does not replay: a verifying turn chooses among candidates with the node's check, so with a new
resolution another candidate might have been chosen; this regrades the offered answer's text alone.

From the repository root: ``.venv/bin/python bench/probes/edits_replay.py --cache .cache/eval-repos
--out bench/results/X.json REPORT.json...`` (a partial ``.jsonl`` works too; a task's answer is its last in the
reports, read in the order given).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _recorded import eval_tasks, latest, replay_parser, write

from contenox.answer.citations import cited_paths
from contenox.config import WorkspaceConfig
from contenox.eval.checkout import checkout
from contenox.eval.score import check_edit, files_named, graded
from contenox.node.node import _proposed_edits
from contenox.workspace import Workspace


def replay(task, repo: Path, result: dict) -> dict:
    """One recorded answer's edits resolved by the node's current code and graded again."""
    answer = result.get("answer") or ""
    with tempfile.TemporaryDirectory(prefix="edits-replay-") as scratch:
        tree = checkout(task, repo, Path(scratch) / "tree")
        workspace = Workspace.open(tree, WorkspaceConfig(), Path(scratch) / "cache")
        proposed = _proposed_edits(answer, workspace, tuple(result.get("files_in_prompt") or ()), task.ask)
        diff = "".join(edit.diff for edit in proposed.edits)
        edit = check_edit(task, tree, answer, diff)
        real = [p for p, _, _ in cited_paths(answer) if (tree / p).is_file()]
        edited = files_named(task.must_cite_files, [e.path for e in proposed.edits])
        grade = graded(task, answer, real, edited, edit)
    return {
        "id": task.id, "kind": task.kind, "passed_before": result.get("passed"),
        "test_before": (result.get("edit") or {}).get("test_passed"),
        "edits_before": [e["path"] for e in result.get("edits") or ()] or None,
        "edits_now": [e.path for e in proposed.edits], "problems_now": list(proposed.problems),
        "notes_now": list(proposed.notes), "test_now": edit.test_passed, "applies_now": edit.applies,
        "passed_now": grade.passed, "passed_own_now": grade.passed_own,
        "detail_now": edit.detail[-300:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = replay_parser(__doc__)
    parser.add_argument("--task", action="append", help="only these task ids (repeat it); default: every task")
    args = parser.parse_args(argv)
    tasks, repos = eval_tasks(args.cache)

    def keep(result: dict) -> bool:
        task = tasks.get(result["id"])
        return (not args.task or result["id"] in args.task) and task is not None and task.check is not None \
            and task.check.apply

    answers = latest(args.reports, keep)
    rows = [{**replay(tasks[i], repos[tasks[i].repo], result), "report": name} for i, (name, result) in answers.items()]
    out: dict = {"reports": [r.name for r in args.reports], "rows": rows, "tasks": len(rows),
                 "passed_before": sum(1 for r in rows if r["passed_before"]),
                 "passed_now": sum(1 for r in rows if r["passed_now"]),
                 "test_passed_before": sum(1 for r in rows if r["test_before"]),
                 "test_passed_now": sum(1 for r in rows if r["test_now"])}
    return write(args.out, out, f"{out['tasks']} change answers: passed {out['passed_before']} as recorded, "
                 f"{out['passed_now']} with the edits resolved now (grading test: {out['test_passed_before']} -> "
                 f"{out['test_passed_now']})", lambda r: f"{r['id']:36s} {r['passed_before']!s:5s} -> "
                 f"{r['passed_now']!s:5s} test {r['test_before']!s:5s} -> {r['test_now']!s:5s} now edits {r['edits_now']}")


if __name__ == "__main__":
    raise SystemExit(main())
