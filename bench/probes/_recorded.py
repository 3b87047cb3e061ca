"""The eval's recorded answers, for the probes that replay them (``calls_replay.py``, ``edits_replay.py``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from contenox.eval.prepare import DEFAULT_TASKS_DIR, prepare
from contenox.eval.tasks import Task


def replay_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments every replay of recorded reports takes (the reports, in order; ``--cache``, the eval
    repositories; ``--out``, the JSON written), described by the first line of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    return parser


def eval_tasks(cache: Path) -> tuple[dict[str, Task], dict[str, Path]]:
    """The eval's tasks by id and its repositories by name, materialized in ``cache``."""
    task_set, repos = prepare([DEFAULT_TASKS_DIR], cache)
    return {task.id: task for task in task_set.tasks}, repos


def results(path: Path) -> list[dict]:
    """A report's results: a finished ``.json`` report or a run's partial ``.jsonl``."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return list(json.loads(path.read_text())["results"])


def latest(reports: Iterable[Path], keep: Callable[[dict], bool]) -> dict[str, tuple[str, dict]]:
    """Each task's last recorded answer that ``keep`` takes, the reports read in the order given: task id ->
    (the report's file name, the result)."""
    found: dict[str, tuple[str, dict]] = {}
    for report in reports:
        for result in results(report):
            if result.get("answer") and keep(result):
                found[result["id"]] = (report.name, result)
    return found


def write(path: Path, out: dict, headline: str, row: Callable[[dict], str]) -> int:
    """Print ``headline`` and each of ``out['rows']`` as ``row`` says, write ``out`` to ``path`` as JSON; 0."""
    print(headline)
    for r in out["rows"]:
        print(f"  {row(r)} ({r['report']})")
    path.write_text(json.dumps(out, indent=1) + "\n")
    return 0
