"""The eval's recorded answers, for the probes that replay them (``calls_replay.py``, ``edits_replay.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path


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
