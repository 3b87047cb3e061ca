"""Scoring an answer: the diff it proposes (applied to a real task tree, the task's test run), what it names."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.answer.resolve import propose_edits
from contenox.eval import TaskSet, checkout
from contenox.eval.report import EvalReport, TaskResult, VerifiedTask, render_table, summarize
from contenox.eval.score import (
    EditCheck,
    bug_place,
    check_edit,
    extract_diff,
    files_named,
    grade_candidates,
    passes,
    recall,
    symbols_named,
)
from contenox.workspace import changed_lines


def _task(task_set: TaskSet, task_id: str):
    return next(t for t in task_set.tasks if t.id == task_id)


def _bug_and_fix(inject: str) -> tuple[str, str]:
    """A task's injected bug as a diff (which does not apply to its tree: the bug is there) and its reverse, the
    fix."""
    bug = "\n".join(line for line in inject.splitlines() if not line.startswith("index "))
    fix = "\n".join("+" + line[1:] if line.startswith("-") and not line.startswith("---") else
                    "-" + line[1:] if line.startswith("+") and not line.startswith("+++") else line
                    for line in bug.strip("\n").splitlines()) + "\n"
    return bug, fix


def test_a_fenced_diff_is_extracted_from_prose() -> None:
    answer = ("The loop only tries the newest key.\n\n```diff\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n```\n"
              "and a second file:\n```\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n```\n```python\nprint(1)\n```")
    assert extract_diff(answer) == ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
                                    "--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n")
    assert extract_diff("diff --git a/z b/z\n--- a/z\n+++ b/z\n@@ -1 +1 @@\n-x\n+y") .startswith("diff --git")
    assert extract_diff("No change is needed.") == ""


def test_names_recall_and_symbols() -> None:
    must = ("src/itsdangerous/signer.py", "src/itsdangerous/timed.py")
    assert recall(must, ("src/itsdangerous/signer.py", "tests/x.py")) == (1, 2)
    assert files_named(must, ("signer.py", "src/itsdangerous/serializer.py")) == ["src/itsdangerous/signer.py"]
    assert symbols_named(("verify_signature", "Signer.unsign", "sign"), "`Signer.unsign` calls "
                         "verify_signature; signing happens elsewhere") == ["verify_signature", "Signer.unsign"]


def test_a_pass_needs_every_file_named_or_edited_every_symbol_and_the_check(task_set: TaskSet) -> None:
    task = _task(task_set, "its-refactor-int-bytes")  # three files, two symbols, a check
    files = task.must_cite_files
    ok = EditCheck(proposed=True, applies=True, test_passed=True)
    symbols = ("int_to_bytes", "bytes_to_int")
    assert passes(task, files, (), symbols, ok)
    assert passes(task, files[:1], files[1:], symbols, ok)  # a rename carried to files the text does not name
    assert not passes(task, files[:1], files[1:2], symbols, ok)
    assert not passes(task, files, (), symbols[:1], ok)
    assert not passes(task, files, (), symbols, EditCheck(proposed=True, applies=True, test_passed=False))
    assert not passes(task, files, (), symbols, EditCheck(proposed=False, applies=False, test_passed=None))
    arch = _task(task_set, "its-arch-expiry")  # no check
    assert passes(arch, arch.must_cite_files, (), arch.must_cite_symbols, None)


def test_the_reference_fix_passes_and_a_wrong_or_missing_one_does_not(
        task_set: TaskSet, eval_repos: dict[str, Path], tmp_path: Path) -> None:
    task = _task(task_set, "its-bug-key-rotation")
    tree = checkout(task, eval_repos[task.repo], tmp_path / "tree")
    fix, reverse = _bug_and_fix(task.inject)
    good = check_edit(task, tree, f"Iterate over every key:\n```diff\n{reverse}```")
    assert (good.proposed, good.applies, good.test_passed) == (True, True, True)
    assert (tree / "src/itsdangerous/signer.py").read_text().count("self.secret_keys[-1:]") == 1  # tree untouched
    stale = check_edit(task, tree, f"```diff\n{fix}\n```")  # the bug itself: its '-' lines are not in the tree
    assert (stale.proposed, stale.applies, stale.test_passed) == (True, False, None)
    none = check_edit(task, tree, "Look at verify_signature in signer.py.")
    assert (none.proposed, none.applies) == (False, False)
    assert none.detail == "no edit blocks or unified diff in the answer"


def test_recorded_candidates_are_graded_against_the_task_s_test_each_on_the_tree_as_it_was(
        task_set: TaskSet, eval_repos: dict[str, Path], tmp_path: Path) -> None:
    """What a perfect choice among the candidates would give: each distinct change laid alone (a failing one
    before the right one does not stay under it), the tree itself never touched."""
    task = _task(task_set, "its-bug-key-rotation")
    tree = checkout(task, eval_repos[task.repo], tmp_path / "tree")
    fix, right = _bug_and_fix(task.inject)
    first, second = (tree / "src/itsdangerous/signer.py").read_text().splitlines()[:2]
    wrong = ("--- a/src/itsdangerous/signer.py\n+++ b/src/itsdangerous/signer.py\n@@ -1,2 +1,3 @@\n"
             f" {first}\n+BROKEN = 1 / 0\n {second}\n")
    before = (tree / "src/itsdangerous/signer.py").read_text()
    # fix: the bug itself, whose '-' lines are not in the tree: it does not apply
    assert grade_candidates(task, tree, [wrong, "", wrong, right, fix]) == {wrong: False, right: True, fix: None}
    assert grade_candidates(task, tree, [right, wrong]) == {right: True, wrong: False}  # the right one undone
    assert grade_candidates(task, tree, ["", ""]) == {}
    # a change that hangs the test fails once the grading's time is up (not after the test's 300 s)
    hangs = ("--- a/src/itsdangerous/signer.py\n+++ b/src/itsdangerous/signer.py\n@@ -1,2 +1,3 @@\n"
             f" {first}\n+while True: pass\n {second}\n")
    assert grade_candidates(task, tree, [hangs, right], timeout=3.0) == {hangs: False, right: True}
    assert (tree / "src/itsdangerous/signer.py").read_text() == before


def test_an_edit_block_fix_becomes_a_diff_that_passes_the_task(
        task_set: TaskSet, eval_repos: dict[str, Path], tmp_path: Path) -> None:
    task = _task(task_set, "its-bug-key-rotation")
    tree = checkout(task, eval_repos[task.repo], tmp_path / "tree")
    answer = ("The bug is in `src/itsdangerous/signer.py` `Signer.verify_signature`: only the newest key is tried.\n\n"
              "signer.py\n<<<<<<< SEARCH\nfor secret_key in self.secret_keys[-1:]:\n=======\n"
              "for secret_key in reversed(self.secret_keys):\n>>>>>>> REPLACE\n")
    paths = [str(p.relative_to(tree)) for p in tree.rglob("*.py")]
    edits = propose_edits(answer, lambda p: (tree / p).read_text() if (tree / p).is_file() else None, paths)
    assert edits.problems == () and [e.path for e in edits.edits] == ["src/itsdangerous/signer.py"]
    result = check_edit(task, tree, answer, edits.diff)
    assert (result.proposed, result.applies, result.test_passed) == (True, True, True)
    assert check_edit(task, tree, answer).proposed is False  # the blocks alone are not a unified diff


def test_summary_and_table() -> None:
    base = dict(repo="r", files_in_prompt=(), chunks=3, prompt_tokens=4000, cached_tokens=0, segment_tokens={})
    results = [
        TaskResult(id="a", kind="architecture", mode="retrieval", must_files=("x", "y"), recall=1.0, passed=True,
                   precision=1.0, ttft_ms=2000.0, **base),
        TaskResult(id="b", kind="refactor", mode="retrieval", must_files=("x",), recall=0.0, passed=False,
                   precision=0.5, ttft_ms=4000.0, **base),
        TaskResult(id="c", kind="refactor", mode="retrieval", must_files=("x",), recall=0.0, error="boom", **base),
    ]
    s = summarize("retrieval", results)
    assert (s.tasks, s.errors, s.recall, s.full_recall_tasks, s.pass_rate) == (3, 1, round(2 / 3, 4), 1, 0.5)
    assert s.passed_by_kind == {"architecture": (1, 1), "refactor": (0, 1)}
    assert (s.precision, s.ttft_ms_median) == (0.75, 3000.0)
    report = EvalReport(model="m", date="d", retrieval_only=False, task_files=(), machine={}, summaries=(s,),
                        results=tuple(results))
    table = render_table(report)
    assert "\na                                 architecture      retrieval    1.00      3   4000   0/2   0/0  1.00" \
           "     -   yes     2.0\n" in table
    assert "\nc                                 refactor          retrieval    0.00      3   4000  error: boom\n" in table
    assert ("retrieval: recall 66.7% of must-cite files in the prompt (1/2 tasks complete); pass 50.0% "
            "(refactor 0/1, architecture 1/1); citation precision 0.75; median TTFT 3.0 s; median prompt 4000 "
            "tokens; 1 error(s)") in table
    # a pass that needed the files the node's locations sentence gave is counted apart from the model's own words
    located = [msgspec.structs.replace(r, passed_own=False if r.id == "a" else r.passed) for r in results]
    s = summarize("retrieval", located)
    assert (s.pass_rate, s.passed_own) == (0.5, 0)
    table = render_table(msgspec.structs.replace(report, summaries=(s,), results=tuple(located)))
    assert "pass 50.0% (refactor 0/1, architecture 1/1) (0 of them on the model's own words, without the node's " \
           "locations sentence and call tree)" in table


def test_verified_summary_keeps_the_grading_test_apart() -> None:
    base = dict(repo="r", files_in_prompt=(), chunks=3, prompt_tokens=4000, cached_tokens=0, segment_tokens={},
                kind="bug_localization", mode="verified", must_files=("x",), recall=1.0)
    seen = VerifiedTask(status="passed", command="pytest t.py", grading_test=True, candidates=4, passed_candidates=2,
                        wall_s=30.0, decode_s=20.0, check_s=2.0, bug_place=1, bug_found=2, graded=3, grading_passed=1)
    found = VerifiedTask(status="failed", command="python -m pytest -q -x", grading_test=False, candidates=12,
                         wall_s=90.0, decode_s=60.0, check_s=6.0, bug_place=0, bug_found=4, broke_candidates=1,
                         reproduction="def test_x():\n    assert f() == 1\n", graded=9, grading_passed=2,
                         stopped="no more candidates drawn after 900 s (verify.budget_s); not tried: 2 repair round(s)")
    skipped = VerifiedTask(status="skipped", reason="no check command")
    results = [TaskResult(id="a", passed=True, verification=seen,
                          edit=EditCheck(proposed=True, applies=True, test_passed=True), **base),
               TaskResult(id="b", passed=False, verification=found, **base),
               TaskResult(id="c", passed=True, verification=skipped, **base),
               TaskResult(id="d", passed=False, **base)]
    s = summarize("verified", results)
    assert s.verification == {
        "verified_tasks": 2, "skipped": 1, "check_passed_tasks": 1, "passed_with_grading_test": [1, 1],
        "passed_with_other_command": [0, 1], "passed_not_verified": [1, 1],
        "passed_with_a_test_the_model_wrote": [0, 1], "candidates": 16, "candidates_passed": 2,
        "candidates_passed_breaking_tests": 1, "verify_wall_s_median": 60.0,
        "stopped_at_budget": [0, 1], "decode_s_median": 40.0, "check_s_median": 4.0,
        "localized": {"focused": 2, "bug_first": 1, "bug_tried": 1, "bug_found": 2},
        "graded_candidates": 12, "graded_candidates_passed": 3, "tasks_with_a_right_candidate": 2,
        "tasks_whose_offered_edit_passed": 1}
    table = render_table(EvalReport(model="m", date="d", retrieval_only=False, task_files=(), machine={},
                                    summaries=(s,), results=tuple(results)))
    assert ("verified 2 task(s) (1 with a passing candidate; 1 not verified); passed 1/1 where the node verified "
            "with the task's own failing test, 0/1 with a command it found, 1/1 unverified; median verification "
            "60.0 s; 1 search(es) stopped at verify.budget_s (passed 0)") in table
    assert ("a test the model wrote for the change was used in 1 task(s) (their check passed before it): passed 0/1; "
            "candidates that passed their check but broke tests that passed before: 1") in table
    assert ("candidates against the grading test: 3 of 12 distinct changes pass it; a right one was drawn in 2 "
            "task(s), the offered edit passed in 1") in table
    assert ("localized: the bug's function tried first in 1 of 2 focused rounds, tried at all in 1, found (offered "
            "to the pick) in 2") in table
    assert summarize("retrieval", [TaskResult(id="e", passed=True, **{**base, "mode": "retrieval"})]).verification \
        is None


INJECTED = """\
diff --git a/src/pkg/core.py b/src/pkg/core.py
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -10,7 +10,7 @@ def first():
     a = 1
     b = 2
     c = 3
-    return a + b
+    return a - b
     d = 4
     e = 5
     f = 6
@@ -40,5 +40,4 @@ def second():
     x = 1
     y = 2
-    z = 3
     return x
     w = 0
diff --git a/src/pkg/other.py b/src/pkg/other.py
--- a/src/pkg/other.py
+++ b/src/pkg/other.py
@@ -1,3 +1,4 @@
 import os
+import sys
\x20
 def third():
"""


def test_the_injected_lines_and_the_place_that_holds_them(task_set: TaskSet) -> None:
    """A changed line is numbered as in the injected file; a line only taken away marks the lines on both sides
    of its gap; the focused place whose range holds one is the bug's place (its number, 0 if none, None when no
    place was tried or no bug was injected)."""
    assert changed_lines(INJECTED, both_sides=True) == {"src/pkg/core.py": {13, 41, 42}, "src/pkg/other.py": {2}}
    assert changed_lines(INJECTED) == {"src/pkg/core.py": {13, 42}, "src/pkg/other.py": {2}}  # retrieval's, as before
    task = msgspec.structs.replace(_task(task_set, "ct-bug-lru-read-evicted"), inject=INJECTED)
    assert bug_place(task, ["second (src/pkg/core.py:38-44, called by t; picked by the model of 3 found (2 of 4 picks))",
                            "first (src/pkg/core.py:9-20, called by t; found along the failing run)"]) == 1
    assert bug_place(task, ["helper (src/pkg/core.py:20-30, called by t; found along the failing run)",
                            "first (src/pkg/core.py:9-20, called by t; found along the failing run)"]) == 2
    assert bug_place(task, ["first (src/pkg/util.py:9-20, called by t; found along the failing run)"]) == 0
    assert bug_place(task, ["third (src/pkg/other.py:4-9)", "first (src/pkg/core.py:9-20)"]) == 2  # found
    assert bug_place(task, []) is None
    assert bug_place(msgspec.structs.replace(task, inject=""), ["first (src/pkg/core.py:9-20, x)"]) is None


def test_the_own_words_grade_counts_neither_the_locations_sentence_nor_the_call_tree() -> None:
    """The pass counts the files and names of the node's sentences after the answer; the own-words grade only the
    model's: a must-cite name only the call tree gives passes the first, not the second."""
    from contenox.answer.locations import LOCATIONS_LEAD, calls_section
    from contenox.eval.score import graded
    from contenox.eval.tasks import Task

    task = Task(id="t", repo="r", commit="c", kind="architecture", ask="How does load() work?",
                must_cite_files=("src/m.py",), must_cite_symbols=("load", "parse"))
    answer = "`load` in src/m.py reads the file."
    tree = calls_section("load (src/m.py:3)\n  -> parse (src/p.py:9)", ["load"])
    both = graded(task, f"{answer}\n\n{tree}", ["src/m.py"], (), None)
    assert (both.passed, both.passed_own, both.symbols) == (True, False, ("load", "parse"))
    own = graded(task, answer.replace("reads", "calls `parse` to read"), ["src/m.py"], (), None)
    assert (own.passed, own.passed_own) == (True, True)
    located = graded(task, f"`load` calls `parse`.\n\n{LOCATIONS_LEAD}`load` (src/m.py:3).", [], (), None)
    assert (located.passed, located.passed_own, located.named) == (True, False, ("src/m.py",))


def test_a_verified_tasks_report_keeps_each_candidates_failing_count_and_the_one_it_was_drawn_on() -> None:
    """Which searches had a candidate that fixed some of several failing tests (where the search on top of it can
    help) is read from the report: each candidate's failing count, and the candidate it was drawn on."""
    from contenox.eval.runner import _verification
    from contenox.eval.tasks import Check, Task

    task = Task(id="t", repo="r", commit="v1", ask="Fix it.", kind="bug_localization", must_cite_files=("a.py",),
                must_cite_symbols=(), check=Check(test_command="pytest -q"))
    report = {"status": "passed", "command": "pytest -q", "candidates": [
        {"index": 1, "outcome": "failed", "failing": 2}, {"index": 2, "outcome": "no_edit"},
        {"index": 3, "outcome": "failed", "failing": 1}, {"index": 4, "outcome": "passed", "failing": None, "on": 3}]}
    verified = _verification(task, report)
    assert verified is not None and verified.failing == (2, None, 1, None) and verified.on == (0, 0, 0, 3)
