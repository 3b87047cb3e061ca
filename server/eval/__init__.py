"""contenox.eval: the coding-context eval set (``contenox eval``): tasks and their real repositories.

Tasks live in ``bench/eval/tasks/*.toml`` (see bench/eval/README.md). This package loads them
(:func:`load_task_set`), rebuilds their repositories from released archives with deterministic
commit ids (:func:`materialize`), validates each task against its repository (:func:`validate`)
and gives the runner a scratch checkout with the task's bug injected and the answer checks
(:func:`checkout`, :func:`apply_check`, :func:`run_test`). A top-level tool beside the benchmark.
"""

from __future__ import annotations

from contenox.eval.checkout import (
    TestOutcome,
    apply,
    apply_check,
    checkout,
    resolve_commit,
    run_test,
    validate,
)
from contenox.eval.prepare import DEFAULT_TASKS_DIR, main, prepare
from contenox.eval.repos import RepoSpec, RepoVersion, default_cache_dir, git, materialize
from contenox.eval.tasks import (
    BUG_KINDS,
    EDIT_KINDS,
    KINDS,
    Check,
    Kind,
    Selection,
    Task,
    TaskSet,
    describe,
    load_task_set,
    load_tasks,
)

__all__ = [
    "BUG_KINDS",
    "DEFAULT_TASKS_DIR",
    "EDIT_KINDS",
    "KINDS",
    "Check",
    "Kind",
    "RepoSpec",
    "RepoVersion",
    "Selection",
    "Task",
    "TaskSet",
    "TestOutcome",
    "apply",
    "apply_check",
    "checkout",
    "default_cache_dir",
    "describe",
    "git",
    "load_task_set",
    "load_tasks",
    "main",
    "materialize",
    "prepare",
    "resolve_commit",
    "run_test",
    "validate",
]
