"""``contenox`` argument handling in process: the command functions are replaced, so nothing runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from contenox import cli
from contenox.eval import KINDS


@pytest.fixture
def called(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """Every ``cmd_*`` function records its arguments (and returns 0) instead of running."""
    seen: list[argparse.Namespace] = []

    def record(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    for name in dir(cli):
        if name.startswith("cmd_"):
            monkeypatch.setattr(cli, name, record)
    return seen


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _option(parser: argparse.ArgumentParser, dest: str) -> argparse.Action:
    [action] = [a for a in parser._actions if a.dest == dest]
    return action


def test_a_quoted_question_with_options_is_ask(called: list[argparse.Namespace]) -> None:
    assert cli.main(["why does transfer fail?", "--json", "--pin", "a.py"]) == 0
    [args] = called
    assert args.command == "ask" and args.func.__name__ == "record"
    assert args.prompt == ["why does transfer fail?"]
    assert args.json is True and args.pin == ["a.py"]
    assert cli.main(["why", "does", "transfer", "fail?"]) == 2  # unquoted words are never asked
    assert len(called) == 1


def test_a_question_in_one_argument_is_ask(called: list[argparse.Namespace]) -> None:
    assert cli.main(["What calls helper()?"]) == 0
    assert [(a.command, a.prompt, a.json) for a in called] == [("ask", ["What calls helper()?"], False)]


@pytest.mark.parametrize("argv", [["config"], ["node", "status", "--json"], ["model", "list"],
                                  ["explain-context", "--json"]])
def test_command_words_are_not_rewritten(called: list[argparse.Namespace], argv: list[str]) -> None:
    assert cli.main(argv) == 0
    [args] = called
    assert args.command == argv[0]


def test_options_first_are_not_a_question(called: list[argparse.Namespace]) -> None:
    assert cli.main(["-v", "config"]) == 0
    [args] = called
    assert args.command == "config" and args.verbose is True


def test_no_command_prints_help(called: list[argparse.Namespace], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    assert called == [] and "usage: contenox" in capsys.readouterr().out


def test_commands_known_to_main_are_the_parser_commands() -> None:
    assert set(_subparsers(cli._parser())) == cli._COMMANDS


@pytest.mark.parametrize("rest", [[], ["--quick"], ["--quick", "--points", "0,32,96", "--no-peer"],
                                  ["report", "-v", "--out", "x"], ["--", "--json"]])
def test_bench_arguments_pass_through_untouched(called: list[argparse.Namespace], rest: list[str]) -> None:
    assert cli.main(["bench", *rest]) == 0
    [args] = called
    assert args.command == "bench" and args.bench_args == rest and args.verbose is False


def test_bench_help_is_argparse_help(called: list[argparse.Namespace], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench", "--help"])
    assert exit_.value.code == 0 and called == []
    assert "usage: contenox bench" in capsys.readouterr().out


def test_eval_defaults(called: list[argparse.Namespace]) -> None:
    assert cli.main(["eval"]) == 0
    [args] = called
    assert args.command == "eval" and args.tasks == [] and args.model is None
    assert args.retrieval_only is False and args.mode is None and args.kind is None and args.task is None
    assert args.max_new_tokens == 512 and args.cache is None and args.json is False and args.out is None
    assert args.min_recall is None


def test_eval_options(called: list[argparse.Namespace]) -> None:
    assert cli.main(["eval", "tasks/a.toml", "more", "--model", "m", "--retrieval-only", "--mode", "baseline",
                     "--kind", "refactor", "--kind", "trace_test", "--task", "t1", "--task", "t2",
                     "--max-new-tokens", "64", "--cache", "c", "--json", "--out", "r.json",
                     "--min-recall", "0.75"]) == 0
    [args] = called
    assert args.tasks == [Path("tasks/a.toml"), Path("more")] and args.model == "m"
    assert args.retrieval_only is True and args.mode == ["baseline"]
    assert args.kind == ["refactor", "trace_test"] and args.task == ["t1", "t2"]
    assert args.max_new_tokens == 64 and args.cache == Path("c") and args.out == Path("r.json")
    assert args.json is True and args.min_recall == 0.75


@pytest.mark.parametrize("bad", [["--kind", "poetry"], ["--mode", "fast"], ["--max-new-tokens", "many"],
                                 ["--min-recall", "most"]])
def test_eval_rejects_bad_options(called: list[argparse.Namespace], capsys: pytest.CaptureFixture[str],
                                  bad: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["eval", *bad])
    assert exit_.value.code == 2 and called == []
    assert "invalid" in capsys.readouterr().err


def test_eval_kind_choices_are_the_task_kinds() -> None:
    kind = _option(_subparsers(cli._parser())["eval"], "kind")
    assert kind.choices is not None and tuple(kind.choices) == KINDS


def _verification(arms: list[tuple[str, str]], chosen: int) -> dict[str, Any]:
    import msgspec

    from contenox.verify.report import CandidateResult, Verification

    candidates = tuple(CandidateResult(index=i, round=0 if arm == "turn" else 1, sampled=i > 1, constrained=False,
                                       outcome=outcome, arm=arm, files=("cart.py",) if outcome == "passed" else (),
                                       line=33 if arm == "mutation" else 0,
                                       change="`>` to `>=`" if arm == "mutation" else "")
                       for i, (arm, outcome) in enumerate(arms, start=1))
    return {"verification": msgspec.to_builtins(Verification(status="passed", command="pytest -q",
                                                             candidates=candidates, chosen=chosen))}


def test_a_verdict_with_many_candidates_counts_them_per_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    arms = [("turn", "failed")] * 4 + [("infill", "failed")] * 8 + [("mutation", "failed"), ("mutation", "passed")]
    arms += [("infill", "passed"), ("infill", "no_edit")]
    cli._print_verification(_verification(arms, chosen=15))
    out = capsys.readouterr().out
    assert "verified: `pytest -q` passed (2 of 16 candidates" in out
    assert "  4 from the turn's prompt: 4 failed\n" in out
    assert "  10 line fills: 8 failed, 1 passed, 1 no_edit\n" in out
    assert "  2 one-token changes (the node's, no model): 1 failed, 1 passed\n" in out
    listed = [line for line in out.splitlines() if line.startswith("  candidate ")]
    assert listed == ["  candidate 14 (round 1): passed cart.py (the node's one-token change, line 33: `>` to `>=`)",
                      "  candidate 15 (round 1): passed cart.py <- offered"]
    cli._print_verification(_verification(arms, chosen=15), every=True)
    assert sum(line.startswith("  candidate ") for line in capsys.readouterr().out.splitlines()) == 16


def test_a_change_found_in_two_steps_lists_the_candidate_it_was_drawn_on(capsys: pytest.CaptureFixture[str]) -> None:
    arms = [("turn", "failed")] * 4 + [("insert", "failed")] * 6 + [("insert", "passed")]
    report = _verification(arms, chosen=11)
    for c in report["verification"]["candidates"][7:]:
        c["on"] = 6
    cli._print_verification(report)
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("  candidate ", "(the"))]
    assert listed == ["  candidate 6 (round 1): failed",
                      "  candidate 11 (round 1, on top of candidate 6): passed cart.py <- offered",
                      "(the answer streamed above is candidate 1; the change offered below is candidate 11's, drawn "
                      "on top of candidate 6's: it holds both)"]


def test_a_verdict_with_few_candidates_lists_each(capsys: pytest.CaptureFixture[str]) -> None:
    report = _verification([("turn", "no_edit"), ("turn", "failed"), ("turn", "passed")], chosen=3)
    report["verification"]["candidates"][0]["output_tail"] = (
        "left out: its edit of tests/test_cart.py, the failing test's file (a fix is checked ...)")
    cli._print_verification(report)
    out = capsys.readouterr().out
    assert ("  candidate 1 (round 0): no_edit (left out: its edit of tests/test_cart.py, the failing test's file)\n"
            "  candidate 2 (round 0): failed\n  candidate 3 (round 0): passed cart.py <- offered\n") in out
    assert "from the turn's prompt" not in out


def test_a_withheld_change_is_not_called_offered(capsys: pytest.CaptureFixture[str]) -> None:
    report = _verification([("turn", "failed"), ("turn", "failed")], chosen=2)
    report["verification"] |= {"status": "failed", "withheld": "the best, candidate 2, leaves 2 failing"}
    cli._print_verification(report)
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("not verified: `pytest -q` failed for all 2 candidates; none offered: the "
                                          "best, candidate 2, leaves 2 failing;"), out
    assert "candidate 2 (round 0): failed <- closest, not offered" in out and "offered below" not in out


def test_a_check_that_passed_before_the_change_is_not_called_verified(capsys: pytest.CaptureFixture[str]) -> None:
    report = _verification([("turn", "passed")], chosen=1)
    report["verification"]["baseline"] = "passed"
    cli._print_verification(report)
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("checked: `pytest -q` still passes with the change (it passed before it too: nothing "
                           "broke, but the check cannot tell whether the change does what was asked)"), head


def test_contenox_verify_lists_what_an_allowed_pytest_check_also_allows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from contenox.config import load_config
    from contenox.node.paths import workspace_root
    from contenox.verify import ConsentStore, consent_scope

    monkeypatch.setenv("CONTENOX_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    store = ConsentStore(load_config().state_dir / "verify-consent.json")
    store.set(str(workspace_root(repo)), "python -m pytest -q tests/test_a.py", True)
    store.set(str(workspace_root(repo)), "make check", True)
    store.set(str(workspace_root(repo)), "pytest -q", False)
    assert cli.cmd_verify(argparse.Namespace(cwd=str(repo), action="list", json=False)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["allowed   python -m pytest -q tests/test_a.py",
                   f"          and {consent_scope('python -m pytest -q tests/test_a.py')}",
                   "allowed   make check",  # not pytest: that command alone
                   "declined  pytest -q"]  # a declined one allows nothing more
