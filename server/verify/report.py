"""What verification did in a turn, as clients and the eval read it."""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from contenox.verify.localize import is_test_path

__all__ = ["LINT_SAID", "CandidateResult", "Verification", "changed_lines", "failed_test_ids", "failed_test_names", "failing_tests",
           "passing_tests", "worse_than_before"]

CandidateOutcome = Literal["passed", "failed", "timeout", "not_found", "error", "no_edit", "does_not_apply",
                           "does_not_parse", "undefined_name", "drops_return"]

LINT_SAID: dict[str, str] = {"undefined_name": "reads a name nothing defines",
                             "drops_return": "leaves a function that returns a value able to end without one"}
"""The outcomes of a change that parses and applies but that a lint rule stopped before its check, in words."""

_FAILED = re.compile(r"\b(\d+) (?:failed|failing|errors?)\b")
_FAILED_COUNT = re.compile(r"^(?:#|\u2139) fail (\d+)\s*$", re.MULTILINE)
"""The count node's test runner ends with: TAP's ``# fail 2`` (its default when piped) or the spec reporter's
``ℹ fail 2``."""
_FAILED_NAME = re.compile(r"^\s*not ok \d+ - (.+?)\s*(?:#.*)?$|^\s*\u2716 (.+?) \([\d.]+m?s\)\s*$|"
                          r"^\s*\u25cf (.+?)\s*$", re.MULTILINE)
"""A failing test's name as JavaScript runners print it: TAP's ``not ok 2 - name`` (node's test runner piped,
tap), node's spec reporter ``✖ name (1.2ms)``, jest's ``● Suite › name``."""
_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+::.+?)(?: - .*)?$", re.MULTILINE)
"""A summary line's test id: up to `` - `` and the message, or the line's end (a parametrized id may hold spaces:
``test_parse[a=b #c-expected9]``)."""


class CandidateResult(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """1-based, in the order drawn (1: the greedy answer)."""
    round: int
    """0: drawn from the turn's prompt; n: from the n-th repair step."""
    sampled: bool
    constrained: bool
    outcome: CandidateOutcome
    files: tuple[str, ...] = ()
    diff: str = ""
    """The candidate's change as the node resolved it (empty: no edit)."""
    answer: str = ""
    """The candidate's answer as the model wrote it (its first 3000 characters)."""
    changed_lines: int = 0
    failing: int | None = None
    """Failing tests the check's output counts (None: it does not say)."""
    passing: int | None = None
    """Passing tests the check's output counts (None: it does not say): of two failing candidates, the one whose
    run got further (a ``pytest -x`` run stops at its first failure; an import the change broke stops it at
    collection, with none passed)."""
    exit_code: int | None = None
    output_tail: str = ""
    check_s: float = 0.0
    decode_s: float = 0.0
    tokens: int = 0
    recomputed_tokens: int = 0
    """Prompt tokens the engine computed for this candidate (the shared prompt is prefilled once)."""
    arm: str = ""
    """The prompt it was drawn from: ``turn`` (the turn's), ``edit-step`` (the turn's answer, its edit blocks
    written in the edit step after it), ``focused`` (one localized function and the failing
    output, the Agentless split), ``line`` (the same, with the line to change, the function's other lines kept
    by a grammar), ``infill`` (one line of that function filled in by the model's fill-in-the-middle from the
    file around it), ``insert`` (a line put in that function, filled in the same way), ``mutation`` (one token
    of one of its lines changed by the node, no model: :mod:`contenox.verify.mutate`) or ``repair`` (the turn's,
    with a failed candidate and its output appended)."""
    line: int = 0
    """The file line a ``line``, ``infill`` or ``mutation`` candidate changes, or an ``insert`` candidate's line
    has."""
    change: str = ""
    """What a ``mutation`` candidate changed on its line, in words ("`>` to `>=`")."""
    comments_only: bool = False
    """Its change edits only comments, docstrings and layout of Python files (no code)."""
    reproduced: bool | None = None
    """With tests the model wrote for the change (the check passed before it): whether this candidate passed at
    least half of them (None: no such test, or the check failed first)."""
    written_passed: int = 0
    """How many of the tests written for the change (each failed before it) this candidate passed: the check's
    own when the check is such a test (``written``), else after the check passed."""
    on: int = 0
    """The candidate this one was drawn on top of (0: none): the search ran again over that candidate's change,
    which made some of the failing tests pass, and this candidate's ``diff`` holds both changes."""
    broke: tuple[str, ...] = ()
    """A passing candidate's regressions: tests of the failing tests' files that passed before the change and
    fail with it (the check passed, but the change may defeat the test rather than fix the code)."""

    @property
    def clean_pass(self) -> bool:
        """It passed the check, broke no test that passed before, and passed the test written for the change when
        there is one."""
        return self.outcome == "passed" and not self.broke and self.reproduced is not False


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    status: Literal["passed", "failed", "skipped"]
    """passed: the offered answer's edit passed the check; failed: no candidate passed; skipped: not run."""
    reason: str = ""
    """Why it was skipped, in words (no check command, not allowed, no change asked)."""
    baseline: str = ""
    """The check's outcome on the workspace before any change (``passed``: it can only show that a change broke
    nothing, not that it does what was asked)."""
    command: str = ""
    command_source: str = ""
    """terminal | workspace | config | detected."""
    command_detail: str = ""
    candidates: tuple[CandidateResult, ...] = ()
    chosen: int | None = None
    """The offered candidate's ``index``."""
    rounds: int = 0
    places: tuple[str, ...] = ()
    """The functions the focused round rewrote, in order (``name (path:start-end)``), and how they were found."""
    traced: int | None = None
    """How many of the workspace's functions the failing tests ran, by a trace of the check's first run (None:
    not traced: ``[verify] trace`` off, the check passed, or the traced run timed out and ran again without it)."""
    spectrum: str = ""
    """The traced run of the failing tests' whole files (``-x`` and test ids dropped) and how it ended, or why it
    did not run; empty: not needed (the check already runs those files to completion) or not traced."""
    suite: str = ""
    """The project's whole suite a candidate that passed the check was held to as well: its command, how it ran
    before any change and what it left out, or why it was not held against any; empty: no candidate passed the
    check, or the check already runs the whole suite (or a folder of it)."""
    found: tuple[str, ...] = ()
    """Every function the focused round found along the failing run (``name (path:start-end)``), in the order
    found: the ones offered to the model's pick, of which ``places`` were rewritten."""
    prefill_tokens: int = 0
    """Prompt tokens computed for the turn's own answer (the one prefill)."""
    decode_s: float = 0.0
    """Wall time spent decoding: the turn's answer, then each round of candidates (decoded side by side; the
    first round overlaps the check of the turn's answer)."""
    apply_s: float = 0.0
    check_s: float = 0.0
    wall_s: float = 0.0
    failed_before: tuple[str, ...] = ()
    """The tests the check failed on the workspace as it was (pytest's ids, ``tests/test_x.py::test_y``)."""
    reproduction: str = ""
    """The test the model wrote for the change, as run after the check (empty: none was used); the first of
    ``written_tests`` when several were kept."""
    reproduction_path: str = ""
    written_tests: tuple[str, ...] = ()
    """Every test written for the change that was kept (each failed before it; laid at ``reproduction_path`` in
    turn), when more than one was: a candidate passes them when it passes at least half (Agentless's agreement
    among reproduction tests: one wrong test alone cannot turn down a right change)."""
    reproduction_note: str = ""
    """What became of the test asked for (used: it failed before the change, and how; or why it was not used)."""
    stopped: str = ""
    """Why no more candidates were drawn before the search ran out (``verify.budget_s`` spent: what was left
    untried); empty: it ran its course."""
    withheld: str = ""
    """Why no change is offered though candidates were checked (none passed, and the best of them does worse than
    the code as it is: more tests failing, or as many and fewer passing, or a run stopped as hung; or it is a change
    the node's search found, not the turn's own answer, and does no better); empty: the chosen candidate's change
    is offered."""
    changed: tuple[str, ...] = ()
    """What the offered change edits, in words: each definition (```LRUCache.__getitem__` in
    src/cachetools/__init__.py``), or the file alone for a change outside any definition."""

    @property
    def reproductions(self) -> int:
        """How many tests written for the change were kept (0: none was used)."""
        return len(self.written_tests) or int(bool(self.reproduction))

    @property
    def passed_count(self) -> int:
        """Candidates that passed the check and broke no test that passed before."""
        return sum(1 for c in self.candidates if c.clean_pass)

    def summary(self) -> str:
        if self.status == "skipped":
            return f"not verified: {self.reason}"
        offered = next((c for c in self.candidates if c.index == self.chosen), None)
        if offered is not None and offered.outcome == "no_edit":
            head = f"not verified: no candidate proposed a change to check ({len(self.candidates)} tried)"
        elif offered is not None and offered.outcome in LINT_SAID:
            head = (f"not verified: the change offered was not checked: it {LINT_SAID[offered.outcome]} "
                    f"({offered.output_tail.splitlines()[0] if offered.output_tail else offered.outcome}); "
                    + (f"of {len(self.candidates)} candidates, none that passed `{self.command}` makes the change "
                       "asked for" if self.passed_count else
                       f"none of {len(self.candidates)} candidates passed `{self.command}`"))
        elif self.baseline == "passed" and self.reproduction and offered is not None and offered.clean_pass:
            head = (f"verified: `{self.command}` still passes, and {self._written(offered)} "
                    f"({self.passed_count} of {len(self.candidates)} candidates)")
        elif self.baseline == "passed":
            head = (f"checked: `{self.command}` still passes with the change (it passed before it too: nothing "
                    "broke, but the check cannot tell whether the change does what was asked"
                    + ("; and the change edits only comments or docstrings, no code)" if offered is not None and
                       offered.comments_only else ")")
                    if self.status == "passed" else
                    f"not verified: the change breaks `{self.command}`, which passed before it "
                    f"({len(self.candidates)} candidate(s) tried)")
            if self.reproduction:
                head += (f"; the test{'s' if self.reproductions > 1 else ''} written for the change "
                         f"({self.reproduction_path}) failed with every candidate"
                         + (" (none passed half of them)" if self.reproductions > 1 else ""))
        elif self.command_source == "written" and self.reproductions > 1:
            head = (f"verified by tests the model wrote for the change, not the project's: `{self.command}` passed "
                    f"for {offered.written_passed if offered else 0} of the {self.reproductions} written (each laid "
                    f"there in turn; each failed before it) ({self.passed_count} of {len(self.candidates)} "
                    "candidates passed half of them or more)" if self.status == "passed" else
                    f"not verified: the {self.reproductions} tests the model wrote for the change (`{self.command}`, "
                    f"each in turn) failed for all {len(self.candidates)} candidates (none passed half of them)"
                    ) + f" ({self.command_detail})"
        elif self.command_source == "written":  # the project's check could not run: said, every time
            head = (f"verified by a test the model wrote for the change, not the project's: `{self.command}` passed "
                    f"({self.passed_count} of {len(self.candidates)} candidates)" if self.status == "passed" else
                    f"not verified: the test the model wrote for the change (`{self.command}`) failed for all "
                    f"{len(self.candidates)} candidates") + f" ({self.command_detail})"
        elif offered is not None and offered.outcome == "passed" and offered.broke:
            head = (f"not verified: `{self.command}` passed with the change, but it breaks "
                    f"{_listed(list(offered.broke[:3]) + ([f'{len(offered.broke) - 3} more'] if len(offered.broke) > 3 else []))}"
                    f", which passed before it (no candidate of {len(self.candidates)} passed without breaking a test)")
        else:
            head = (f"verified: `{self.command}` passed ({self.passed_count} of {len(self.candidates)} candidates)"
                    if self.status == "passed" else
                    f"not verified: `{self.command}` failed for all {len(self.candidates)} candidates"
                    + (f"; none offered: {self.withheld}" if self.withheld else ""))
        return (f"{head}; {self.rounds} repair round(s)"
                + (f"; the search stopped at verify.budget_s ({self.wall_s:.0f} s)" if self.stopped else "")
                + f"; decode {self.decode_s:.1f} s, apply {self.apply_s:.1f} s, "
                f"check {self.check_s:.1f} s")

    def _written(self, offered: CandidateResult) -> str:
        """What the tests written for the change showed for ``offered`` (a clean pass), in words."""
        if self.reproductions > 1:
            return (f"{offered.written_passed} of the {self.reproductions} tests written for the change "
                    f"({self.reproduction_path}, each laid there in turn; each failed before it) pass")
        return f"the test written for the change ({self.reproduction_path}), which failed before it, passes"

    def changed_in(self) -> str:
        """Where the offered change is, in words ("`A.f` in a.py and b.py"; '' when not known)."""
        return _listed(list(self.changed))

    def verdict(self) -> str:
        """The sentence the offered answer ends with when its change fixed a check that failed: what it changes
        and which tests it made pass ('' otherwise: the verdict in :meth:`summary` says the rest)."""
        offered = next((c for c in self.candidates if c.index == self.chosen), None)
        where = f" to {self.changed_in()}" if self.changed else ""
        if offered is not None and offered.arm == "mutation":  # no model wrote it: said where the user reads
            where += f" (a one-token change Contenox tried, not the model's: line {offered.line}, {offered.change})"
        if (self.status == "passed" and self.baseline == "passed" and self.reproduction and offered is not None
                and offered.clean_pass):
            if self.reproductions > 1:
                return (f"Verified: with the offered change{where}, `{self.command}` still passes in a scratch copy, "
                        f"and {offered.written_passed} of {self.reproductions} tests written for the change (by the "
                        "model: read them in explain-context), each of which failed before it, pass.")
            return (f"Verified: with the offered change{where}, `{self.command}` still passes in a scratch copy, "
                    f"and a test written for the change ({self.reproduction_path}, by the model: read it), which "
                    "failed before it, passes.")
        if self.status != "passed" or self.baseline == "passed":
            return ""
        if self.command_source == "written" and offered is not None:  # the model's test, not the project's: said
            return (f"Verified by {'tests' if self.reproductions > 1 else 'a test'} the model wrote for the change, "
                    f"not the project's (read {'them' if self.reproductions > 1 else 'it'} in explain-context): with "
                    f"the offered change{where}, `{self.command}` passes in a scratch copy"
                    + (f" for {offered.written_passed} of the {self.reproductions} written, each of which failed "
                       "before it." if self.reproductions > 1 else "; before it, it failed."))
        named = [t if "::" in t else f'"{t}"' for t in self.failed_before]  # a JavaScript test's name: quoted
        tests = _listed(named[:5] + ([f"{len(named) - 5} more"] if len(named) > 5 else []))
        before = f"; before it, {tests} failed" if tests else "; before it, the check failed"
        edited_tests = [f for f in (offered.files if offered else ()) if is_test_path(f)]
        if edited_tests:  # a check made to pass by changing it shows nothing about the code
            return (f"Checked, but the offered change{where} edits the test {_listed(edited_tests)}: with it, "
                    f"`{self.command}` passes in a scratch copy{before}. Check that it does not pass by changing "
                    "the test.")
        return f"Verified: with the offered change{where}, `{self.command}` passes in a scratch copy{before}."


def _listed(items: list[str]) -> str:
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def failed_test_ids(output: str) -> tuple[str, ...]:
    """The failing tests a check's output names in pytest's summary lines (``FAILED tests/x.py::test_y - ...``),
    each once, in order."""
    return tuple(dict.fromkeys(_FAILED_ID.findall(output)))


def failed_test_names(output: str) -> tuple[str, ...]:
    """The failing tests a JavaScript runner's output names (:data:`_FAILED_NAME`), each once, in order (a suite
    that failed because a test in it did is named too, as the runners print it)."""
    names = [next(g for g in m.groups() if g) for m in _FAILED_NAME.finditer(output)]
    return tuple(dict.fromkeys(n for n in names if n != "Console"))  # jest's console.log blocks share the mark


def changed_lines(diff: str) -> int:
    return sum(1 for line in diff.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---")))


def failing_tests(output: str) -> int | None:
    counts = [int(m.group(1)) for m in _FAILED.finditer(output)] or [int(m.group(1))
                                                                     for m in _FAILED_COUNT.finditer(output)]
    return sum(counts[-1:]) if counts else None


_PASSED = re.compile(r"\b(\d+) passed\b")
_PASSED_COUNT = re.compile(r"^(?:#|\u2139) pass (\d+)\s*$", re.MULTILINE)


def passing_tests(output: str) -> int | None:
    """The passing tests the run's last summary counts (pytest's and jest's ``3 passed``, node's ``# pass 3`` or
    ``ℹ pass 3``); 0 for a pytest summary that counts only failures or errors (``1 error in 0.2s``: stopped at
    collection); None when the output has no summary."""
    counts = [int(m.group(1)) for m in _PASSED.finditer(output)] or [int(m.group(1))
                                                                     for m in _PASSED_COUNT.finditer(output)]
    if counts:
        return counts[-1]
    return 0 if _FAILED.search(output) or _FAILED_COUNT.search(output) else None


def worse_than_before(result: CandidateResult, before: str, before_outcome: str = "failed", *,
                      or_no_better: bool = False) -> str:
    """Why a failing candidate's run does worse than the check's run before any change (``before``, its output;
    ``before_outcome``, how it ended), in words ('' when it does not, or the outputs do not say): more tests
    failing, as many and fewer passing (a change that broke the package's import under ``pytest -x``), none passing
    where some passed (a run stopped at collection by a change that broke an import, whatever failures its errors
    count: the 0.5B's rename of dotenv's ``parse_value`` counted one error against two failing tests), or stopped
    as hung where the run before it ended. ``or_no_better``: also as many failing and no more passing (a change the
    node searched for that does no better fixed nothing the check shows)."""
    if result.outcome == "timeout" and before_outcome != "timeout":
        return f"the best, candidate {result.index}, was stopped before its check ended, where it ended before"
    failing, passing = failing_tests(before), passing_tests(before)
    if result.outcome == "timeout" or result.failing is None or failing is None:
        return ""
    known = None not in (result.passing, passing)
    if result.failing > failing or (result.failing == failing and known and (result.passing or 0) < (passing or 0)) \
            or (known and result.passing == 0 < (passing or 0)):  # none passing: stopped at collection
        return (f"the best, candidate {result.index}, leaves {result.failing} failing and {result.passing or 0} "
                f"passing where {failing} failed and {passing or 0} passed before any change")
    if or_no_better and result.failing == failing and not (known and (result.passing or 0) > (passing or 0)):
        return (f"no candidate did better than the code as it is: the best, candidate {result.index}, leaves "
                f"{result.failing} failing and {result.passing or 0} passing, as before any change")
    return ""
