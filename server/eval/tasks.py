"""The eval task format: TOML files of ``[[repo]]`` specs and ``[[task]]`` entries, typed and checked.

:func:`load_task_set` decodes every file into frozen structs and checks what can be checked without
the repositories (a known kind, non-empty must-cite lists, a check table on edit tasks, an injected
bug with its failing output on bug-localization and trace tasks, unique ids, known repositories).
:func:`validate` checks a task against its materialized repository: the commit resolves, every
must-cite file exists at it, every must-cite symbol is defined there, the selection is in range and
the injected patch applies. Every error names the file and the task id.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, Literal, get_args

import msgspec

from contenox.errors import EvalSetupError
from contenox.eval.repos import RepoSpec

__all__ = [
    "BUG_KINDS", "EDIT_KINDS", "KINDS", "Check", "Kind", "Selection", "Task", "TaskSet", "describe", "load_task_set",
    "load_tasks",
]

Kind = Literal["bug_localization", "cross_file_edit", "trace_test", "refactor", "architecture"]
KINDS: tuple[str, ...] = get_args(Kind)
EDIT_KINDS = frozenset({"cross_file_edit", "refactor"})
"""Kinds whose answer is a unified diff that must ``git apply --check``."""
BUG_KINDS = frozenset({"bug_localization", "trace_test"})
"""Kinds asked over an injected bug, with the failing output in ``terminal``."""


class Selection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The editor selection sent with the question (1-based, inclusive lines)."""

    path: str
    start_line: int
    end_line: int


class Check(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How an answer's diff is checked: it applies, and ``test_command`` passes after applying it.

    ``test_command`` runs in the repository root with ``env`` added (``python`` is the running
    interpreter); at the task's commit (with ``inject`` applied) it fails. ``reference`` is a
    known-good answer diff that applies and makes it pass: it proves the task answerable and is
    never to be shown to the model.
    """

    apply: bool = False
    test_command: str = ""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    reference: str = ""


class Task(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One question about one repository at one commit, and what a right answer must cite."""

    id: str
    repo: str
    commit: str
    """A full or short sha, or a version tag ``v<version>`` the repository was built with."""
    ask: str
    kind: Kind
    must_cite_files: tuple[str, ...]
    must_cite_symbols: tuple[str, ...]
    selection: Selection | None = None
    terminal: str = ""
    inject: str = ""
    """A unified diff applied to the working tree before asking (the bug to find)."""
    check: Check | None = None
    source: str = ""
    """The task file this task was loaded from (set by the loader)."""


class TaskSet(msgspec.Struct, frozen=True, kw_only=True):
    """Every repository spec and task of a set of task files, in file order."""

    repos: tuple[RepoSpec, ...]
    tasks: tuple[Task, ...]

    def repo(self, name: str) -> RepoSpec:
        for spec in self.repos:
            if spec.name == name:
                return spec
        raise EvalSetupError(f"no eval repository named {name!r}", repo=name)


def _fail(source: str, task_id: str, message: str) -> EvalSetupError:
    where = f"{source}: task {task_id!r}" if task_id else source
    return EvalSetupError(f"{where}: {message}", file=source, task=task_id)


def _rel_path_ok(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and ".." not in p.parts and "\\" not in path


def _check_task(task: Task) -> str | None:
    """What is wrong with ``task`` on its own, or None."""
    if not task.id.strip() or not task.ask.strip() or not task.commit.strip():
        return "id, commit and ask must not be empty"
    if not task.must_cite_files:
        return "must_cite_files is empty: name the files a right answer must cite"
    if not task.must_cite_symbols:
        return "must_cite_symbols is empty: name the symbols a right answer must cite"
    bad = [p for p in task.must_cite_files if not _rel_path_ok(p)]
    if bad:
        return f"must_cite_files must be repository-relative paths: {bad}"
    if task.kind in EDIT_KINDS and (task.check is None or not task.check.apply):
        return f"a {task.kind} task needs a [task.check] table with apply = true"
    if task.kind in BUG_KINDS and not (task.inject and task.terminal):
        return f"a {task.kind} task needs inject (the bug) and terminal (its failing output)"
    if task.inject and (task.check is None or not task.check.test_command):
        return "a task with inject needs check.test_command (it fails with the bug, passes without it)"
    sel = task.selection
    if sel is not None and (not _rel_path_ok(sel.path) or sel.start_line < 1 or sel.end_line < sel.start_line):
        return f"selection {sel.path}:{sel.start_line}-{sel.end_line} is not a valid range"
    return None


def _decode_file(path: Path) -> tuple[list[RepoSpec], list[Task]]:
    source = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _fail(source, "", f"cannot read task file: {exc}") from exc
    unknown = sorted(set(raw) - {"repo", "task"})
    if unknown:
        raise _fail(source, "", f"unknown top-level keys {unknown} (expected [[repo]] and [[task]])")
    repos: list[RepoSpec] = []
    for i, item in enumerate(raw.get("repo", [])):
        try:
            repos.append(msgspec.convert(item, RepoSpec))
        except msgspec.ValidationError as exc:
            name = item.get("name", f"#{i + 1}") if isinstance(item, dict) else f"#{i + 1}"
            raise _fail(source, "", f"repo {name!r}: {exc}") from exc
    tasks: list[Task] = []
    for i, item in enumerate(raw.get("task", [])):
        task_id = str(item.get("id", "")) if isinstance(item, dict) else ""
        label = task_id or f"#{i + 1}"
        if isinstance(item, dict) and "source" in item:
            raise _fail(source, label, "source is set by the loader, not in the file")
        try:
            task = msgspec.convert(item, Task)
        except msgspec.ValidationError as exc:
            raise _fail(source, label, str(exc)) from exc
        problem = _check_task(task)
        if problem:
            raise _fail(source, label, problem)
        tasks.append(msgspec.structs.replace(task, source=source))
    return repos, tasks


def _expand(paths: Iterable[Path | str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.glob("*.toml")) if p.is_dir() else [p])
    return files


def load_task_set(paths: Iterable[Path | str]) -> TaskSet:
    """Load task files (directories are expanded to their ``*.toml``); every error names file and task."""
    repos: dict[str, RepoSpec] = {}
    tasks: dict[str, Task] = {}
    for path in _expand(paths):
        file_repos, file_tasks = _decode_file(path)
        for spec in file_repos:
            if spec.name in repos and repos[spec.name] != spec:
                raise _fail(str(path), "", f"repo {spec.name!r} is defined twice with different specs")
            repos[spec.name] = spec
        for task in file_tasks:
            if task.id in tasks:
                raise _fail(str(path), task.id, f"duplicate task id (also in {tasks[task.id].source})")
            tasks[task.id] = task
    for task in tasks.values():
        if task.repo not in repos:
            raise _fail(task.source, task.id, f"unknown repo {task.repo!r}; known: {sorted(repos)}")
    return TaskSet(repos=tuple(repos.values()), tasks=tuple(tasks.values()))


def load_tasks(paths: Iterable[Path | str]) -> list[Task]:
    """The tasks of :func:`load_task_set`."""
    return list(load_task_set(paths).tasks)


def describe(task: Task) -> dict[str, Any]:
    """A short JSON-able summary (id, kind, repo, must-cite) for reports."""
    return {"id": task.id, "kind": task.kind, "repo": task.repo, "commit": task.commit,
            "must_cite_files": list(task.must_cite_files), "must_cite_symbols": list(task.must_cite_symbols)}
