"""The verification report's words: the verdict sentence an answer ends with, and the failing tests a check's
output names."""

from __future__ import annotations

import msgspec

from contenox.verify import CandidateResult, Verification, failed_test_ids, failed_test_names, failing_tests

OUTPUT = ("..FF\n=========================== short test summary info ============================\n"
          "FAILED tests/test_lru.py::LRUCacheTest::test_lru - AssertionError: Tuples dif...\n"
          "FAILED tests/test_lru.py::LRUCacheTest::test_lru_clear - AssertionError: 3 no...\n"
          "ERROR tests/test_io.py::test_reader\nFAILED tests/test_lru.py::LRUCacheTest::test_lru - again\n"
          "2 failed, 32 passed in 0.10s\n")


def test_the_failing_tests_are_read_from_pytest_s_summary_lines() -> None:
    assert failed_test_ids(OUTPUT) == ("tests/test_lru.py::LRUCacheTest::test_lru",
                                       "tests/test_lru.py::LRUCacheTest::test_lru_clear", "tests/test_io.py::test_reader")
    assert failed_test_ids("1 failed in 0.01s\nFAILED: the build\n") == ()
    spaced = ("FAILED tests/test_p.py::test_parse[a=b #c-expected9] - AssertionE...\n"
              "FAILED tests/test_p.py::test_parse[a=b\\t#c-expected10]\n")
    assert failed_test_ids(spaced) == ("tests/test_p.py::test_parse[a=b #c-expected9]",
                                       "tests/test_p.py::test_parse[a=b\\t#c-expected10]")


SPEC = ("\u2714 even split (1.118089ms)\n\u2716 the last batch may be short (1.284887ms)\n"
        "  AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n"
        "      at TestContext.<anonymous> (/tmp/p/test/chunk.test.js:10:10)\n"
        "\u2716 schedule uploads every file (0.480517ms)\n  AssertionError [ERR_ASSERTION]: ...\n"
        "\u2139 tests 4\n\u2139 suites 0\n\u2139 pass 2\n\u2139 fail 2\n\u2139 cancelled 0\n\n"
        "\u2716 failing tests:\n\n\u2716 the last batch may be short (1.284887ms)\n")
"""node --test's spec reporter (node 20), cut: each failing test, the counts, the failing tests again."""
TAP = ("TAP version 13\n# Subtest: even split\nok 1 - even split\n# Subtest: the last batch may be short\n"
       "not ok 2 - the last batch may be short\n  ---\n  duration_ms: 1.2\n  failureType: 'testCodeFailure'\n"
       "  ...\nnot ok 3 - schedule uploads every file # TODO\n1..4\n# tests 4\n# pass 1\n# fail 2\n")
"""node --test piped (TAP), cut."""


def test_the_failing_tests_of_node_s_test_runner_are_read_from_its_output() -> None:
    assert failed_test_names(SPEC) == ("the last batch may be short", "schedule uploads every file")
    assert failed_test_names(TAP) == ("the last batch may be short", "schedule uploads every file")
    assert failing_tests(SPEC) == 2 and failing_tests(TAP) == 2  # what ranks candidates that fail: fewest first
    assert failed_test_names(OUTPUT) == () and failing_tests(OUTPUT) == 2
    jest = "  \u25cf Console\n\n    console.log\n      hi\n\n  \u25cf chunk \u203a keeps the last batch\n\n    expect(received)\n"
    assert failed_test_names(jest) == ("chunk \u203a keeps the last batch",)
    report = Verification(status="passed", baseline="failed", command="npm test",
                          failed_before=failed_test_names(SPEC))
    assert report.verdict() == ('Verified: with the offered change, `npm test` passes in a scratch copy; before it, '
                                '"the last batch may be short" and "schedule uploads every file" failed.')


def test_the_verdict_names_the_change_and_what_it_made_pass_and_only_for_a_fix() -> None:
    report = Verification(status="passed", baseline="failed", command="pytest -q", changed=(
        "`LRUCache.__getitem__` in src/cachetools/__init__.py", "src/cachetools/NOTES"),
        failed_before=tuple(f"tests/test_x.py::test_{i}" for i in range(7)))
    assert report.verdict() == (
        "Verified: with the offered change to `LRUCache.__getitem__` in src/cachetools/__init__.py and "
        "src/cachetools/NOTES, `pytest -q` passes in a scratch copy; before it, tests/test_x.py::test_0, "
        "tests/test_x.py::test_1, tests/test_x.py::test_2, tests/test_x.py::test_3, tests/test_x.py::test_4 and "
        "2 more failed.")
    bare = Verification(status="passed", baseline="failed", command="npm test")
    assert bare.verdict() == "Verified: with the offered change, `npm test` passes in a scratch copy; before it, " \
                             "the check failed."
    assert Verification(status="passed", baseline="passed", command="pytest -q").verdict() == ""  # a guard
    assert Verification(status="failed", baseline="failed", command="pytest -q").verdict() == ""
    assert Verification(status="skipped", reason="no check command").verdict() == ""


def test_a_change_the_node_made_without_the_model_is_said_to_be_the_node_s() -> None:
    chosen = CandidateResult(index=7, round=0, sampled=False, constrained=False, outcome="passed", arm="mutation",
                             line=33, change="`>` to `>=`", files=("src/shop/cart.py",))
    report = Verification(status="passed", baseline="failed", command="pytest -q", candidates=(chosen,), chosen=7,
                          changed=("`line_price` in src/shop/cart.py",),
                          failed_before=("tests/test_cart.py::test_bulk",))
    assert report.verdict() == (
        "Verified: with the offered change to `line_price` in src/shop/cart.py (a one-token change Contenox tried, "
        "not the model's: line 33, `>` to `>=`), `pytest -q` passes in a scratch copy; before it, "
        "tests/test_cart.py::test_bulk failed.")


def test_a_fix_that_edits_the_test_says_so_instead_of_verified() -> None:
    chosen = CandidateResult(index=3, round=1, sampled=True, constrained=False, outcome="passed",
                             files=("src/dotenv/parser.py", "tests/test_parser.py"))
    report = Verification(status="passed", baseline="failed", command="pytest -q", candidates=(chosen,), chosen=3,
                          changed=("`parse_stream` in src/dotenv/parser.py", "`test_parse_stream` in tests/test_parser.py"),
                          failed_before=("tests/test_parser.py::test_parse_stream",))
    assert report.verdict() == (
        "Checked, but the offered change to `parse_stream` in src/dotenv/parser.py and `test_parse_stream` in "
        "tests/test_parser.py edits the test tests/test_parser.py: with it, `pytest -q` passes in a scratch copy; "
        "before it, tests/test_parser.py::test_parse_stream failed. Check that it does not pass by changing the test.")


def test_a_verification_whose_candidates_wrote_no_change_says_so_not_that_a_change_broke_the_check() -> None:
    none = CandidateResult(index=1, round=0, sampled=False, constrained=False, outcome="no_edit")
    report = Verification(status="failed", baseline="passed", command="pytest -q", candidates=(none,), chosen=1)
    assert report.summary().startswith("not verified: no candidate proposed a change to check (1 tried); ")
    broke = CandidateResult(index=1, round=0, sampled=False, constrained=False, outcome="failed", diff="d")
    assert msgspec.structs.replace(report, candidates=(broke,)).summary().startswith(
        "not verified: the change breaks `pytest -q`, which passed before it (1 candidate(s) tried)")
    assert Verification(status="skipped", reason="`npm test` could not run before any change").summary() == \
        "not verified: `npm test` could not run before any change"


def test_a_guard_passed_by_a_change_to_comments_alone_says_so() -> None:
    comment = CandidateResult(index=2, round=0, sampled=True, constrained=True, outcome="passed", diff="d",
                              comments_only=True)
    report = Verification(status="passed", baseline="passed", command="pytest -q", candidates=(comment,), chosen=2)
    assert "still passes with the change" in report.summary()
    assert "the change edits only comments or docstrings, no code)" in report.summary()
    code = msgspec.structs.replace(comment, comments_only=False)
    assert "comments" not in msgspec.structs.replace(report, candidates=(code,)).summary()


def test_an_offered_change_that_breaks_tests_which_passed_before_is_not_called_verified() -> None:
    broke = tuple(f"tests/test_x.py::test_{i}" for i in range(5))
    offered = CandidateResult(index=2, round=0, sampled=True, constrained=True, outcome="passed", broke=broke)
    clean = CandidateResult(index=1, round=0, sampled=False, constrained=False, outcome="failed")
    report = Verification(status="failed", baseline="failed", command="pytest -q t.py::test_a",
                          candidates=(clean, offered), chosen=2)
    assert report.passed_count == 0 and report.verdict() == ""
    assert report.summary().startswith(
        "not verified: `pytest -q t.py::test_a` passed with the change, but it breaks tests/test_x.py::test_0, "
        "tests/test_x.py::test_1, tests/test_x.py::test_2 and 2 more, which passed before it (no candidate of 2 "
        "passed without breaking a test); 0 repair round(s)")
