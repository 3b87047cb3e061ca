"""Scoring one task: what the prompt held, what the answer cites, and whether a proposed edit works.

A task passes when the answer names every must-cite file (in its text, or as a file its proposed edit
changes: the user is shown that edit with its paths) and every must-cite symbol and, for a task with a check, its
proposed change (the node's diff of its edit blocks, else a unified diff it wrote) applies to the task's tree (``git apply --check``) and the task's test passes
after applying it. Retrieval recall is the share of must-cite files whose code was in the prompt.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec

from contenox.answer.citations import cited_paths
from contenox.answer.locations import without_node_sentences
from contenox.eval.checkout import apply, apply_check, run_test
from contenox.eval.repos import git
from contenox.eval.tasks import Task
from contenox.workspace import changed_lines

__all__ = ["EditCheck", "Graded", "check_edit", "extract_diff", "files_named", "grade_candidates", "graded", "passes",
           "recall", "symbols_named"]

_FENCED = re.compile(r"```+[ \t]*(?:diff|patch|udiff)?[ \t]*\n(.*?)```+", re.DOTALL)


class EditCheck(msgspec.Struct, frozen=True, kw_only=True):
    proposed: bool
    """The answer holds a unified diff."""
    applies: bool
    test_passed: bool | None
    """None: the task has no test command (or the diff did not apply)."""
    detail: str = ""


def _matches(must: str, paths: Iterable[str]) -> bool:
    return any(must == p or must.endswith("/" + p) for p in paths)


def recall(must_cite: Iterable[str], in_prompt: Iterable[str]) -> tuple[int, int]:
    """(must-cite files whose code was in the prompt, must-cite files)."""
    must = list(must_cite)
    present = set(in_prompt)
    return sum(1 for f in must if f in present), len(must)


def files_named(must_cite: Iterable[str], cited: Iterable[str]) -> list[str]:
    """The must-cite files the answer names (by path, or by a path suffix such as the file name)."""
    cited = list(cited)
    return [f for f in must_cite if _matches(f, cited)]


def passes(task: Task, named: Iterable[str], edited: Iterable[str], symbols: Iterable[str],
           edit: EditCheck | None) -> bool:
    """Whether an answer passes ``task``: every must-cite file named (in the text, ``named``, or changed by the
    proposed edit, ``edited``), every must-cite symbol named, and the task's check (if any) met."""
    files = set(named) | set(edited)
    return (all(f in files for f in task.must_cite_files) and set(task.must_cite_symbols) <= set(symbols)
            and (edit is None or (edit.applies and edit.test_passed is not False)))


class Graded(msgspec.Struct, frozen=True, kw_only=True):
    named: tuple[str, ...]
    """Must-cite files the answer names: the model's (checked citations) and those of the node's sentences after
    it (the locations sentence, the call tree)."""
    symbols: tuple[str, ...]
    passed: bool
    passed_own: bool
    """On the model's own words: its files and its names, neither counted from the node's sentences."""


def graded(task: Task, answer: str, files_real: Iterable[str], edited: Iterable[str],
           edit: EditCheck | None) -> Graded:
    """How ``answer`` grades on ``task`` (``files_real``: the files the model's words cite, checked; ``edited``:
    the must-cite files its proposed change edits), with and without what the node added after it."""
    own_text = without_node_sentences(answer)
    own = files_named(task.must_cite_files, files_real)
    located = files_named(task.must_cite_files, [p for p, _, _ in cited_paths(answer[len(own_text):])])
    named = tuple(dict.fromkeys([*own, *located]))
    edited = list(edited)
    symbols = tuple(symbols_named(task.must_cite_symbols, answer))
    return Graded(named=named, symbols=symbols, passed=passes(task, named, edited, symbols, edit),
                  passed_own=passes(task, own, edited, symbols_named(task.must_cite_symbols, own_text), edit))


def symbols_named(must_cite: Iterable[str], answer: str) -> list[str]:
    """The must-cite symbols the answer names (the last dotted part, as a whole word)."""
    return [s for s in must_cite if re.search(rf"(?<![\w]){re.escape(s.split('.')[-1])}(?![\w])", answer)]


def extract_diff(answer: str) -> str:
    """The unified diff an answer proposes: its fenced diff blocks (or the bare diff), joined; '' if none."""
    blocks = [b for b in _FENCED.findall(answer) if re.search(r"^(?:---|\+\+\+|@@) ", b, re.MULTILINE)]
    if not blocks:
        start = re.search(r"^(?:diff --git |--- )", answer, re.MULTILINE)
        blocks = [answer[start.start():]] if start else []
    text = "\n".join(block.strip("\n") for block in blocks)
    return text + "\n" if text else ""


def check_edit(task: Task, tree: Path, answer: str, proposed: str = "") -> EditCheck:
    """Apply the answer's change to a copy of ``tree`` and run the task's test there: ``proposed`` (the diff
    the node made of the answer's edit blocks) or else the unified diff the answer wrote itself."""
    diff = proposed or extract_diff(answer)
    if not diff:
        return EditCheck(proposed=False, applies=False, test_passed=None,
                         detail="no edit blocks or unified diff in the answer")
    ok, why = apply_check(tree, diff)
    if not ok:
        return EditCheck(proposed=True, applies=False, test_passed=None, detail=why.strip()[:400])
    if task.check is None or not task.check.test_command:
        return EditCheck(proposed=True, applies=True, test_passed=None)
    with tempfile.TemporaryDirectory(prefix="cx-eval-edit-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree, copy, symlinks=True)
        apply(copy, diff)
        outcome = run_test(task, copy)
    return EditCheck(proposed=True, applies=True, test_passed=outcome.passed,
                     detail="" if outcome.passed else outcome.output[-400:])


GRADE_TIMEOUT_S = 60.0
"""A candidate's grading run past this counts as failed: the tasks' tests run in seconds, and a candidate that
loops (a parser that no longer advances) would hold the eval for the test's whole 300 s, once per such change
(one task of 2026-12-07 graded for over 20 minutes)."""


def grade_candidates(task: Task, tree: Path, diffs: Iterable[str], *,
                     timeout: float = GRADE_TIMEOUT_S) -> dict[str, bool | None]:
    """Each distinct candidate change of ``diffs`` (a verification's recorded changes; empty ones are no change)
    and whether it passes the task's grading test (None: it does not apply), each laid alone on one copy of
    ``tree`` and the test run there. One passing means a perfect choice among the candidates drawn (pass@k) passes;
    none means no candidate was right, whatever chose among them. Empty for a task without a test."""
    distinct = list(dict.fromkeys(d for d in diffs if d))
    if not distinct or task.check is None or not task.check.test_command:
        return {}
    graded: dict[str, bool | None] = {}
    with tempfile.TemporaryDirectory(prefix="cx-eval-grade-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree, copy, symlinks=True)
        for diff in distinct:
            if not apply_check(copy, diff)[0]:
                graded[diff] = None
                continue
            apply(copy, diff)
            graded[diff] = run_test(task, copy, timeout=timeout).passed
            git(copy, "checkout", "-q", "--", ".")
            git(copy, "clean", "-qfd")
    return graded


_PLACE = re.compile(r"\(([^\s():]+):(\d+)-(\d+)[,)]")


def bug_place(task: Task, places: Iterable[str]) -> int | None:
    """Which of the places (the node's entries, "name (path:a-b, ...)" or "name (path:a-b)", in order) holds the
    lines the task's bug touches: its number from 1; 0 when there were places and none holds them; None when
    there were none or the task injects no bug (nothing to localize)."""
    touched = changed_lines(task.inject, both_sides=True)
    tried = list(places)
    if not touched or not tried:
        return None
    for number, entry in enumerate(tried, 1):
        if (where := _PLACE.search(entry)) is not None:
            path, start, end = where.group(1), int(where.group(2)), int(where.group(3))
            if any(start <= n <= end for n in touched.get(path, ())):
                return number
    return 0
