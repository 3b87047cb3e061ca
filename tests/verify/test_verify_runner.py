"""The one command runner: outcomes named, output capped, a hang stopped with its whole process group."""

from __future__ import annotations

import os
import time
from pathlib import Path

from contenox.verify import run_check
from contenox.verify.report import failing_tests


def test_passed_failed_not_found(tmp_path: Path) -> None:
    env = dict(os.environ)
    assert run_check("echo ok", tmp_path, env=env).outcome == "passed"
    failed = run_check("echo broken >&2; exit 3", tmp_path, env=env)
    assert (failed.outcome, failed.exit_code) == ("failed", 3)
    assert "broken" in failed.output
    assert run_check("no-such-command-xyz", tmp_path, env=env).outcome == "not_found"


def test_flood_is_cut_in_the_middle(tmp_path: Path) -> None:
    run = run_check("seq 1 200000; echo END", tmp_path, env=dict(os.environ), max_output_chars=2000)
    assert run.truncated
    assert run.output.startswith("1\n2\n")
    assert run.output.rstrip().endswith("END")
    assert "characters of output cut" in run.output
    assert len(run.output) < 2200


def test_hang_is_stopped_with_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    run = run_check(f"sleep 60 & echo $! > {marker}; wait", tmp_path, env=dict(os.environ), timeout_s=1.0)
    assert run.outcome == "timeout"
    assert "verify.timeout_s" in run.output
    child = int(marker.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the check's child outlived the timeout")


def test_failing_tests_counted() -> None:
    assert failing_tests("FAILED t.py::x\n1 failed, 16 passed in 0.05s") == 1
    assert failing_tests("=== 3 failed, 2 errors in 1s ===") == 2  # the last count pytest prints
    assert failing_tests("all good") is None


def test_passing_tests_counted() -> None:
    from contenox.verify.report import passing_tests

    assert passing_tests("FAILED t.py::x\n1 failed, 16 passed in 0.05s") == 16
    assert passing_tests("ERROR t.py\n1 error in 0.2s") == 0  # stopped at collection
    assert passing_tests("# tests 3\n# pass 2\n# fail 1") == 2  # node's TAP
    assert passing_tests("\u2139 pass 5\n\u2139 fail 0") == 5  # node's spec reporter
    assert passing_tests("Tests:       1 failed, 4 passed, 5 total") == 4  # jest
    assert passing_tests("all good") is None


def test_a_cancelled_turn_stops_its_check(tmp_path: Path) -> None:
    import threading

    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    run = run_check("sleep 30", tmp_path, env=dict(os.environ), timeout_s=60, stop=stop)
    assert run.outcome == "error" and "the turn was cancelled" in run.output
    assert time.monotonic() - started < 20


def test_a_run_past_the_hang_limit_is_stopped_only_once_it_goes_quiet(tmp_path: Path) -> None:
    """A suite that prints its progress past the hang limit runs on (a right fix after a check that stopped at its
    first failure); one that prints nothing past it, from the start or after some output, is stopped as hung."""
    env = dict(os.environ)
    progress = "for i in 1 2 3 4 5 6 7 8 9 10; do printf .; sleep 0.3; done; echo ' 10 passed'"
    run = run_check(progress, tmp_path, env=env, timeout_s=60, hang_s=0.5, quiet_s=2.0, hang_limit="hung: test")
    assert (run.outcome, run.output.strip()) == ("passed", ".......... 10 passed")
    for silent in ("sleep 30", "echo collected 3 items; sleep 30"):
        hung = run_check(silent, tmp_path, env=env, timeout_s=60, hang_s=0.5, quiet_s=1.0, hang_limit="hung: test")
        assert hung.outcome == "timeout" and hung.output.rstrip().endswith(": hung: test]"), hung.output
    # quiet_s 0: stopped at the limit whatever it prints
    loud = run_check(progress, tmp_path, env=env, timeout_s=60, hang_s=0.5, quiet_s=0.0, hang_limit="hung: test")
    assert loud.outcome == "timeout" and "10 passed" not in loud.output


def test_a_failing_candidate_worse_than_no_change_is_told() -> None:
    from contenox.verify.report import CandidateResult, failing_tests, passing_tests, worse_than_before

    before = "FAILED t.py::test_a\n1 failed, 1 passed in 0.1s"

    def ran(output: str, outcome: str = "failed") -> CandidateResult:
        return CandidateResult(index=3, round=0, sampled=True, constrained=False, outcome=outcome,  # type: ignore[arg-type]
                               failing=failing_tests(output), passing=passing_tests(output))

    assert worse_than_before(ran("2 failed in 0.1s"), before).startswith("the best, candidate 3, leaves 2 failing")
    assert "leaves 1 failing and 0 passing where 1 failed and 1 passed" in worse_than_before(ran("1 error in 0.1s"),
                                                                                             before)
    assert worse_than_before(ran("1 failed, 1 passed in 0.1s"), before) == ""  # no worse: still offered
    assert worse_than_before(ran("1 failed, 2 passed in 0.1s"), before) == ""
    assert worse_than_before(ran("", "timeout"), before).endswith("was stopped before its check ended, where it "
                                                                  "ended before")
    assert worse_than_before(ran("", "timeout"), "", "timeout") == ""  # the check never ended, before it either
    assert worse_than_before(ran("no summary"), before) == ""  # the output does not say
    # fewer failing, but none passing: a run stopped at collection (an import the change broke), whatever it counts
    two = "FAILED t.py::test_a\nFAILED t.py::test_b\n2 failed, 40 passed in 0.1s"
    assert "leaves 1 failing and 0 passing where 2 failed and 40 passed" in worse_than_before(ran("1 error in 0.1s"), two)
    assert worse_than_before(ran("1 failed in 0.1s"), "2 failed in 0.1s") == ""  # none passed before either


def test_a_failing_candidate_that_does_no_better_than_no_change_is_told() -> None:
    """Of a search's changes none passed, and the best leaves the check as it was: it fixed nothing the check shows."""
    from contenox.verify.report import CandidateResult, failing_tests, passing_tests, worse_than_before

    before = "FAILED t.py::test_a\nFAILED t.py::test_b\n2 failed, 1 passed in 0.1s"

    def ran(output: str, outcome: str = "failed") -> CandidateResult:
        return CandidateResult(index=12, round=0, sampled=True, constrained=False, outcome=outcome,  # type: ignore[arg-type]
                               failing=failing_tests(output), passing=passing_tests(output))

    assert worse_than_before(ran("2 failed, 1 passed in 0.1s"), before) == ""  # not asked: no worse, still offered
    assert worse_than_before(ran("2 failed, 1 passed in 0.1s"), before, or_no_better=True) == (
        "no candidate did better than the code as it is: the best, candidate 12, leaves 2 failing and 1 passing, as "
        "before any change")
    assert worse_than_before(ran("1 failed, 2 passed in 0.1s"), before, or_no_better=True) == ""  # fewer failing
    assert worse_than_before(ran("2 failed, 2 passed in 0.1s"), before, or_no_better=True) == ""  # more passing
    assert worse_than_before(ran("no summary"), before, or_no_better=True) == ""  # the output does not say
    assert worse_than_before(ran("3 failed in 0.1s"), before, or_no_better=True).startswith(
        "the best, candidate 12, leaves 3 failing")  # worse is said as worse
