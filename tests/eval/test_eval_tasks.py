"""The eval task set: it loads, validates against its real repositories, and its checks are real.

Every injected bug makes its test command fail and the unchanged commit passes it; every edit
task's test command passes at its commit (so a right answer can pass it too). Bad task files fail
at load or validate time with the file and the task id in the message.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec
import pytest

from contenox.errors import EvalSetupError
from contenox.eval import (
    DEFAULT_TASKS_DIR,
    EDIT_KINDS,
    KINDS,
    Task,
    TaskSet,
    apply,
    apply_check,
    checkout,
    git,
    load_task_set,
    load_tasks,
    prepare,
    run_test,
    validate,
)

ALL_TASKS = load_tasks([DEFAULT_TASKS_DIR])
INJECTED = [t for t in ALL_TASKS if t.inject]
WITH_REFERENCE = [t for t in ALL_TASKS if t.check is not None and t.check.reference]


def test_the_set_has_at_least_five_tasks_of_each_kind_over_three_repositories(task_set: TaskSet) -> None:
    kinds = Counter(task.kind for task in task_set.tasks)
    assert set(kinds) == set(KINDS)
    assert all(n >= 5 for n in kinds.values()), kinds
    assert len(task_set.tasks) >= 25
    npm = {spec.name for spec in task_set.repos if spec.source == "npm"}
    assert any(task.repo in npm for task in task_set.tasks)
    for kind in EDIT_KINDS:
        assert all(t.check is not None and t.check.apply for t in task_set.tasks if t.kind == kind)


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_every_task_validates_against_its_repository(task: Task, eval_repos: dict[str, Path]) -> None:
    validate(task, eval_repos[task.repo])


@pytest.mark.parametrize("task", INJECTED, ids=lambda t: t.id)
def test_an_injected_bug_fails_its_test_and_the_commit_passes_it(task: Task, eval_repos: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    buggy = checkout(task, eval_repos[task.repo], tmp_path / "buggy", commit_inject=False)
    failed = run_test(task, buggy)
    assert not failed.passed, failed.output
    clean = checkout(task, eval_repos[task.repo], tmp_path / "clean", inject=False)
    passed = run_test(task, clean)
    assert passed.passed, passed.output
    # The fix is the inverse of the injected diff: it applies to the buggy tree, and makes the test pass.
    fix = _reverse(buggy)
    assert apply_check(buggy, fix) == (True, "")
    assert apply_check(clean, fix)[0] is False


def test_every_edit_task_has_a_test_and_a_reference_answer() -> None:
    edits = [t for t in ALL_TASKS if t.kind in EDIT_KINDS]
    assert edits and all(t in WITH_REFERENCE and t.check and t.check.test_command for t in edits)


@pytest.mark.parametrize("task", WITH_REFERENCE, ids=lambda t: t.id)
def test_an_edit_tasks_test_fails_at_its_commit_and_passes_with_the_reference(
        task: Task, eval_repos: dict[str, Path], tmp_path: Path) -> None:
    assert task.check is not None
    tree = checkout(task, eval_repos[task.repo], tmp_path / "tree")
    before = run_test(task, tree)
    assert not before.passed, f"the test passes without any answer:\n{before.output}"
    assert apply_check(tree, task.check.reference) == (True, "")
    apply(tree, task.check.reference)
    after = run_test(task, tree)
    assert after.passed, after.output


def _reverse(worktree: Path) -> str:
    return git(worktree, "diff", "-R", "HEAD")


def test_a_committed_injection_leaves_a_clean_tree_with_the_bug_in_head(eval_repos: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    task = next(t for t in INJECTED if t.id == "semver-bug-caret-zero")
    tree = checkout(task, eval_repos["semver"], tmp_path / "tree")
    assert git(tree, "status", "--porcelain") == ""
    assert git(tree, "log", "-1", "--format=%s").strip() == "Local changes"
    assert git(tree, "show", "--format=", "--name-only", "HEAD").split() == ["classes/range.js"]
    assert not run_test(task, tree).passed
    again = checkout(task, eval_repos["semver"], tmp_path / "again")
    assert git(tree, "rev-parse", "HEAD") == git(again, "rev-parse", "HEAD")


def test_prepare_materializes_and_validates_everything(eval_cache: Path, eval_repos: dict[str, Path]) -> None:
    task_set, repos = prepare([DEFAULT_TASKS_DIR], eval_cache)
    assert repos == eval_repos
    assert len(task_set.tasks) == len(ALL_TASKS)


# --- bad task files ----------------------------------------------------------------------------

REPO_HEADER = '''
[[repo]]
name = "semver"
source = "npm"
package = "semver"
versions = [{ version = "7.6.3", sha256 = "376d2ca2c941fc5a37e9ac3ec65302e5e421e2cc1ee3dee57a854d2bd9bee125" }]
'''

GOOD_TASK = '''
[[task]]
id = "t1"
repo = "semver"
commit = "v7.6.3"
kind = "architecture"
ask = "How is a range tested?"
must_cite_files = ["classes/range.js"]
must_cite_symbols = ["testSet"]
'''


def _write(tmp_path: Path, body: str, name: str = "bad.toml") -> Path:
    path = tmp_path / name
    path.write_text(REPO_HEADER + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "message"), [
    (('kind = "architecture"', 'kind = "explain"'), "Invalid enum value 'explain'"),
    (('ask = "How is a range tested?"\n', ""), "missing required field `ask`"),
    (('must_cite_symbols = ["testSet"]', "must_cite_symbols = []"), "must_cite_symbols is empty"),
    (('must_cite_files = ["classes/range.js"]', 'must_cite_files = ["../range.js"]'), "repository-relative"),
    (('repo = "semver"', 'repo = "left-pad"'), "unknown repo 'left-pad'"),
    (('kind = "architecture"', 'kind = "refactor"'), "needs a [task.check] table with apply = true"),
    (('kind = "architecture"', 'kind = "trace_test"'), "needs inject (the bug) and terminal"),
    (('ask = ', 'colour = "red"\nask = '), "unknown field `colour`"),
])
def test_a_bad_task_is_refused_at_load_naming_file_and_task(tmp_path: Path, change: tuple[str, str],
                                                            message: str) -> None:
    old, new = change
    assert old in GOOD_TASK
    path = _write(tmp_path, GOOD_TASK.replace(old, new))
    with pytest.raises(EvalSetupError) as info:
        load_task_set([path])
    assert message in info.value.message
    assert str(path) in info.value.message and "'t1'" in info.value.message
    assert info.value.details == {"file": str(path), "task": "t1"}


def test_duplicate_ids_and_broken_toml_are_refused(tmp_path: Path) -> None:
    first = _write(tmp_path, GOOD_TASK, "a.toml")
    second = _write(tmp_path, GOOD_TASK, "b.toml")
    with pytest.raises(EvalSetupError, match=r"b\.toml: task 't1': duplicate task id \(also in .*a\.toml\)"):
        load_task_set([first, second])
    broken = tmp_path / "broken.toml"
    broken.write_text("[[task]\nid = 1\n", encoding="utf-8")
    with pytest.raises(EvalSetupError, match=r"broken\.toml: cannot read task file"):
        load_task_set([broken])


@pytest.mark.parametrize(("change", "message"), [
    (('must_cite_files = ["classes/range.js"]', 'must_cite_files = ["classes/ranges.js"]'),
     "must_cite_files not in semver at v7.6.3: ['classes/ranges.js']"),
    (('must_cite_symbols = ["testSet"]', 'must_cite_symbols = ["testSets"]'),
     "must_cite_symbols not defined in semver at v7.6.3: ['testSets']"),
    (('commit = "v7.6.3"', 'commit = "v9.9.9"'), "commit 'v9.9.9' is not in"),
    (('must_cite_symbols = ["testSet"]', 'must_cite_symbols = ["testSet"]\n'
      'selection = { path = "classes/range.js", start_line = 1, end_line = 900 }'), "is past its 554 lines"),
    (('must_cite_symbols = ["testSet"]', 'must_cite_symbols = ["testSet"]\ncheck = { test_command = "true" }\n'
      "inject = '''\n--- a/classes/range.js\n+++ b/classes/range.js\n@@ -1,1 +1,1 @@\n-const NOPE = 1\n"
      "+const NOPE = 2\n'''"), "at v7.6.3: inject does not apply"),
    (('must_cite_symbols = ["testSet"]', 'must_cite_symbols = ["testSet"]\ncheck = { apply = true, reference = "'
      '--- a/index.js\\n+++ b/index.js\\n@@ -1,1 +1,1 @@\\n-nope\\n+yes\\n" }'),
     "at v7.6.3: check.reference does not apply"),
])
def test_a_task_that_does_not_match_its_repository_fails_validation(
        tmp_path: Path, eval_repos: dict[str, Path], change: tuple[str, str], message: str) -> None:
    old, new = change
    (task,) = load_tasks([_write(tmp_path, GOOD_TASK.replace(old, new))])
    with pytest.raises(EvalSetupError) as info:
        validate(task, eval_repos["semver"])
    assert message in info.value.message
    assert "task 't1'" in info.value.message and "bad.toml" in info.value.message


def test_validation_reads_the_pinned_commit_not_the_working_tree(tmp_path: Path,
                                                                 eval_repos: dict[str, Path]) -> None:
    # internal/lrucache.js only exists from 7.6.2 on: citing it at 7.6.0 is an error.
    (task,) = load_tasks([_write(tmp_path, GOOD_TASK.replace('"classes/range.js"', '"internal/lrucache.js"')
                                 .replace('"testSet"', '"LRUCache"'))])
    validate(task, eval_repos["semver"])
    with pytest.raises(EvalSetupError, match=r"not in semver at v7\.6\.0: \['internal/lrucache.js'\]"):
        validate(msgspec.structs.replace(task, commit="v7.6.0"), eval_repos["semver"])
