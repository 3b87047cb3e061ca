"""A task against its repository: validation at the pinned commit, a scratch checkout, the checks.

:func:`validate` needs only the materialized repository (it reads the commit's tree and applies
``inject`` and ``check.reference`` to a throwaway index). :func:`checkout` makes a scratch clone at
the task's commit with the injected bug applied; :func:`apply_check` and :func:`run_test` are the
two checks of an edit answer (``git apply --check`` of the proposed diff, then the test command).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

from contenox.errors import EvalSetupError
from contenox.eval.repos import git
from contenox.eval.tasks import Task

__all__ = ["TestOutcome", "apply", "apply_check", "checkout", "resolve_commit", "run_test", "validate"]


class TestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What a task's test command did: its exit status and the tail of its output."""

    __test__ = False  # not a pytest test class

    command: str
    returncode: int
    output: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0


_INJECT_TIME = 1735689600  # 2025-01-01T00:00:00Z: the injected commit has a fixed id too


def _fail(task: Task, message: str) -> EvalSetupError:
    return EvalSetupError(f"{task.source or '<task>'}: task {task.id!r}: {message}", file=task.source, task=task.id)


def resolve_commit(repo: Path, commit: str) -> str:
    """The full sha of ``commit`` (a sha, short sha or tag) in ``repo``."""
    return git(repo, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()


def _symbol_pattern(name: str) -> str:
    """A definition of ``name`` in Python or JavaScript, as a POSIX extended regex for git grep."""
    n = re.escape(name).replace("\\_", "_")
    return (rf"((def|class|function|const|let|var|async def)[[:space:]]+{n}([^[:alnum:]_]|$))"
            rf"|(^[[:space:]]*{n}[[:space:]]*(\(|=[^=]|:))"
            rf"|((exports|this|self)\.{n}[[:space:]]*(=|:))")


def _defined(repo: Path, sha: str, name: str) -> bool:
    for part in name.split("."):
        try:
            git(repo, "grep", "-q", "-E", _symbol_pattern(part), sha, "--")
        except EvalSetupError:
            return False
    return True


def _apply_to_index(repo: Path, sha: str, patches: list[tuple[str, str]]) -> str | None:
    """Why one of the named ``patches`` does not apply in turn to ``sha``'s tree, or None.

    The patches go to a throwaway index, so nothing in the repository is written.
    """
    with tempfile.TemporaryDirectory(prefix="contenox-eval-idx-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, "read-tree", sha, extra_env=env)
        for name, patch in patches:
            try:
                git(repo, "apply", "--cached", "-", stdin=patch.encode(), extra_env=env)
            except EvalSetupError as exc:
                return f"{name} does not apply: {exc.message}"
    return None


def validate(task: Task, repo_path: Path) -> None:
    """Check ``task`` against its materialized repository; raises :class:`EvalSetupError` naming it.

    The commit resolves; every must-cite file exists at it; every must-cite symbol is defined in
    the commit's tree (``def``/``class``/``function``/assignment/method text, each part of a dotted
    name); the selection is in range; the injected patch applies, and the reference answer after it.
    """
    try:
        sha = resolve_commit(repo_path, task.commit)
    except EvalSetupError as exc:
        raise _fail(task, f"commit {task.commit!r} is not in {repo_path}") from exc
    tree = set(git(repo_path, "ls-tree", "-r", "--name-only", sha).splitlines())
    missing = [p for p in task.must_cite_files if p not in tree]
    if missing:
        raise _fail(task, f"must_cite_files not in {task.repo} at {task.commit}: {missing}")
    undefined = [s for s in task.must_cite_symbols if not _defined(repo_path, sha, s)]
    if undefined:
        raise _fail(task, f"must_cite_symbols not defined in {task.repo} at {task.commit}: {undefined}")
    sel = task.selection
    if sel is not None:
        if sel.path not in tree:
            raise _fail(task, f"selection file {sel.path} not in {task.repo} at {task.commit}")
        lines = git(repo_path, "show", f"{sha}:{sel.path}").count("\n")
        if sel.end_line > lines:
            raise _fail(task, f"selection {sel.path}:{sel.start_line}-{sel.end_line} is past its {lines} lines")
    patches = [("inject", task.inject)] if task.inject else []
    if task.check is not None and task.check.reference:
        patches.append(("check.reference", task.check.reference))
    if patches:
        why = _apply_to_index(repo_path, sha, patches)
        if why is not None:
            raise _fail(task, f"at {task.commit}: {why}")


def checkout(task: Task, repo_path: Path, dest: Path, *, inject: bool = True, commit_inject: bool = True) -> Path:
    """A scratch clone of the task's repository at its commit in ``dest`` (new), with ``inject`` applied.

    With ``commit_inject`` (the default) the injected bug is committed on a detached HEAD as an
    ordinary-looking commit ("Local changes"), so the working tree is clean and ``git diff`` does
    not hand the bug to the planner; otherwise it is left as an uncommitted change.
    """
    sha = resolve_commit(repo_path, task.commit)
    git(dest.parent, "clone", "-q", "--shared", "--no-checkout", str(repo_path), str(dest))
    git(dest, "checkout", "-q", "--detach", sha)
    if inject and task.inject:
        try:
            git(dest, "apply", "--index", "-", stdin=task.inject.encode())
        except EvalSetupError as exc:
            raise _fail(task, f"inject does not apply: {exc.message}") from exc
        if commit_inject:
            git(dest, "commit", "-q", "-m", "Local changes", when=_INJECT_TIME)
    return dest


def apply_check(worktree: Path, diff: str) -> tuple[bool, str]:
    """Whether ``diff`` applies to ``worktree`` (``git apply --check``), and git's complaint if not."""
    try:
        git(worktree, "apply", "--check", "-", stdin=diff.encode())
    except EvalSetupError as exc:
        return False, exc.message
    return True, ""


def apply(worktree: Path, diff: str) -> None:
    """Apply ``diff`` to ``worktree`` (after :func:`apply_check`)."""
    git(worktree, "apply", "-", stdin=diff.encode())


def run_test(task: Task, worktree: Path, *, timeout: float = 300.0) -> TestOutcome:
    """Run the task's ``check.test_command`` in ``worktree``; ``python`` is this interpreter."""
    if task.check is None or not task.check.test_command:
        raise _fail(task, "has no check.test_command")
    argv = shlex.split(task.check.test_command)
    if argv[0] == "python":
        argv[0] = sys.executable
    elif shutil.which(argv[0]) is None:
        raise _fail(task, f"{argv[0]} is not installed; it runs this task's test command")
    env = os.environ | {"PYTHONDONTWRITEBYTECODE": "1"} | task.check.env
    try:
        proc = subprocess.run(argv, cwd=worktree, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        return TestOutcome(command=task.check.test_command, returncode=124, output=f"timed out after {exc.timeout}s")
    return TestOutcome(command=task.check.test_command, returncode=proc.returncode,
                       output=(proc.stdout + proc.stderr)[-4000:])
