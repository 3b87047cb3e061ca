"""Replay: the eval's recorded answers to how-it-works questions, with the call tree the node now adds after them.

``planner.answer_calls`` appends, after the answer to a question that asks how code works and names a definition,
the calls that definition makes, read from the source (``contenox.answer.locations.calls_section``). It changes
nothing the model reads or writes: the section is computed from the question and the workspace after the answer.
So a recorded answer graded again with the section the node would add to it is the answer the node now gives.
This replays it: each result of the given verified-mode reports, of the kinds asked (``--kind``, architecture by
default), is checked out (the eval's own checkout, at the task's commit), the call tree computed by the workspace
with the node's function and limit (none where the question asks no how), appended in place of any tree the
recorded answer already had, and the answer graded again with the eval's own scoring, a change task's with its
recorded change and test outcome: passed before, passed with the section, and passed on the model's own words (the
grade that counts neither the locations sentence nor the tree).

From the repository root: ``.venv/bin/python bench/probes/calls_replay.py --cache .cache/eval-repos
--out bench/results/X.json REPORT.json...`` (a partial ``.jsonl`` works too; a task's answer is its last in the reports, read in the order given).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _recorded import eval_tasks, latest, replay_parser, write

from contenox.answer.citations import cited_paths
from contenox.answer.locations import calls_section, without_calls, without_node_sentences
from contenox.config import PlannerConfig, WorkspaceConfig
from contenox.eval.checkout import checkout
from contenox.eval.score import EditCheck, graded
from contenox.workspace import RetrievalQuery, Workspace

KINDS = ("architecture", "trace_test", "bug_localization", "cross_file_edit", "refactor")


def replay(task, repo: Path, result: dict, lines: int) -> dict:
    """One recorded answer graded again with the node's call tree after it."""
    answer = result.get("answer") or ""
    with tempfile.TemporaryDirectory(prefix="calls-replay-") as scratch:
        tree_dir = checkout(task, repo, Path(scratch) / "tree")
        workspace = Workspace.open(tree_dir, WorkspaceConfig(), Path(scratch) / "cache")
        tree, roots = workspace.call_tree(RetrievalQuery(text=task.ask, terminal=task.terminal or ""), lines)
    section = calls_section(tree, roots)
    answer = without_calls(answer)  # (an answer recorded with the node's earlier tree: that tree replaced)
    after = f"{answer.rstrip()}\n\n{section}" if section else answer
    own_files = [p for p, _, _ in cited_paths(without_node_sentences(answer))]  # (the run checked them; real ones)
    recorded = result.get("edit")  # a trace task's change and its test, as the run checked them
    edit = EditCheck(**recorded) if task.kind != "architecture" and recorded else None
    edited = list(result.get("files_edited") or ()) if edit is not None else []
    grade = graded(task, after, own_files, edited, edit)
    return {
        "id": task.id, "kind": task.kind, "roots": list(roots), "tree_lines": tree.count("\n") + 1 if tree else 0,
        "passed_before": result.get("passed"),
        "passed_regraded": graded(task, answer, own_files, edited, edit).passed,  # (the replay's grading, checked)
        "passed_with_calls": grade.passed, "passed_own": grade.passed_own,
        "symbols_before": list(result.get("symbols_named") or ()), "symbols_with_calls": list(grade.symbols),
        "files_before": list(result.get("files_named") or ()), "files_with_calls": list(grade.named),
        "must_files": list(task.must_cite_files), "must_symbols": list(task.must_cite_symbols),
    }


def main(argv: list[str] | None = None) -> int:
    parser = replay_parser(__doc__)
    parser.add_argument("--lines", type=int, default=PlannerConfig().answer_calls)
    parser.add_argument("--kind", action="append", choices=KINDS,
                        help="the tasks replayed (repeatable; default architecture): a task of another kind is graded "
                             "with its recorded change and test outcome")
    args = parser.parse_args(argv)
    args.kind = args.kind or ["architecture"]
    tasks, repos = eval_tasks(args.cache)
    answers = latest(args.reports, lambda r: r["id"] in tasks and tasks[r["id"]].kind in args.kind)
    rows = [{**replay(tasks[i], repos[tasks[i].repo], result, args.lines), "report": name}
            for i, (name, result) in answers.items()]
    out: dict = {"lines": args.lines, "reports": [r.name for r in args.reports], "rows": rows, "tasks": len(rows),
                 "passed_before": sum(1 for r in rows if r["passed_before"]),
                 "passed_with_calls": sum(1 for r in rows if r["passed_with_calls"]),
                 "passed_own": sum(1 for r in rows if r["passed_own"])}
    return write(args.out, out, f"{out['tasks']} answers ({', '.join(args.kind)}): passed {out['passed_before']} as recorded, "
                 f"{out['passed_with_calls']} with the call tree after them, {out['passed_own']} on the model's own "
                 "words", lambda r: f"{r['id']:36s} {r['passed_before']!s:5s} -> {r['passed_with_calls']!s:5s} "
                 f"roots={r['roots']}")


if __name__ == "__main__":
    raise SystemExit(main())
