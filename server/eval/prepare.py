"""Materialize and validate an eval task set: ``python -m contenox.eval [--cache DIR] [TASK_FILE_OR_DIR...]``.

The runner calls :func:`prepare` before sending tasks through the node; the command line does the
same and prints one line per repository and a count per kind, or the first error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from contenox.errors import ContenoxError
from contenox.eval.checkout import resolve_commit, validate
from contenox.eval.repos import default_cache_dir, materialize
from contenox.eval.tasks import TaskSet, load_task_set

__all__ = ["DEFAULT_TASKS_DIR", "main", "prepare"]

log = logging.getLogger(__name__)

DEFAULT_TASKS_DIR = Path(__file__).resolve().parents[2] / "bench" / "eval" / "tasks"
"""``bench/eval/tasks`` of a source checkout (the task set is not package data)."""


def prepare(paths: Iterable[Path | str] = (DEFAULT_TASKS_DIR,), cache_dir: Path | None = None,
            ) -> tuple[TaskSet, dict[str, Path]]:
    """Load the task files, materialize every repository they use and validate every task."""
    task_set = load_task_set(paths)
    repos = {spec.name: materialize(spec, cache_dir) for spec in task_set.repos}
    for task in task_set.tasks:
        validate(task, repos[task.repo])
    return task_set, repos


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contenox.eval", description=__doc__)
    parser.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_TASKS_DIR],
                        help="task files or directories of *.toml (default: bench/eval/tasks)")
    parser.add_argument("--cache", type=Path, default=None,
                        help=f"where repositories are built (default: {default_cache_dir()})")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        task_set, repos = prepare(args.paths, args.cache)
    except ContenoxError as exc:
        log.error("%s", exc.message)
        return 1
    for spec in task_set.repos:
        head = resolve_commit(repos[spec.name], "HEAD")[:12]
        versions = ", ".join(v.version for v in spec.versions)
        log.info("%s: %s %s (%s) at %s, HEAD %s", spec.name, spec.source, spec.package, versions,
                 repos[spec.name], head)
    kinds = Counter(task.kind for task in task_set.tasks)
    log.info("%d tasks valid: %s", len(task_set.tasks), ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
