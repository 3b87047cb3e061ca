"""The eval task set and its repositories, materialized once per session into a reusable cache.

The cache lives under ``.cache/eval-repos`` in this checkout (override with
``CONTENOX_EVAL_CACHE``): the first run downloads the pinned sdists and npm tarballs (about 200 KB),
later runs reuse them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contenox.eval import DEFAULT_TASKS_DIR, TaskSet, load_task_set, materialize

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def eval_cache() -> Path:
    return Path(os.environ.get("CONTENOX_EVAL_CACHE", REPO_ROOT / ".cache" / "eval-repos"))


@pytest.fixture(scope="session")
def task_set() -> TaskSet:
    return load_task_set([DEFAULT_TASKS_DIR])


@pytest.fixture(scope="session")
def eval_repos(task_set: TaskSet, eval_cache: Path) -> dict[str, Path]:
    """name -> the materialized git repository of every repo the task set uses."""
    return {spec.name: materialize(spec, eval_cache) for spec in task_set.repos}
