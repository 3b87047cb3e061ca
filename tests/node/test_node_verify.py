"""Verified fixes in the node: a change turn's candidates are drawn from its own prompt, each is checked in a
scratch copy with the check command, and the one that passes is offered; none passing starts a repair round
whose prompt extends the turn's; consent comes first. The model's answers are scripted (the turn's through
``backend.submit``, the candidates' through ``backend.submit_candidate``); the tokenizer, planner, workspace,
git, the scratch copy and the check command (a real pytest run) are real."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from contenox.config import VerifyConfig, load_config
from contenox.errors import Cancelled
from contenox.node import Node, backend
from contenox.node.contract import TurnEvent, TurnRequest
from contenox.node.verifying import describe as describe_verification
from contenox.runtime_ov import InstalledModel, RequestHandle
from contenox.runtime_ov.certification import CERTIFICATION_FILE
from support.agent_kit import CUT, Script, certified_home
from support.gitrepo import git, make_repo

pytestmark = pytest.mark.slow

UTIL = "def helper(x):\n    return x - 1\n"
TEST = "from util import helper\n\n\ndef test_helper():\n    assert helper(1) == 2\n"
TERMINAL = ("$ python -m pytest -q -p no:cacheprovider tests/test_util.py\nF\n"
            "FAILED tests/test_util.py::test_helper - assert 0 == 2\n1 failed in 0.01s")
ASK = "test_helper fails: helper(1) should be 2. Fix it."


def block(new: str) -> str:
    return f"util.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    return {new}\n>>>>>>> REPLACE\n"


WRONG = "helper is off by one.\n\n" + block("x - 2")
EDIT_STEP_NONE = "no idea"
"""The edit step's answer, when the turn's own wrote no edit block: none again (what follows is the subject)."""
RIGHT = block("x + 1")
NO_TEST = "A docstring needs no test."
"""The answer when asked for a test of the change under a check that already passes: none (the test's subject is
something else; a check that passes before any change is then only a guard, as without the test)."""
DRAWN = VerifyConfig().written_tests
"""How many tests of the change are asked for at once (one group)."""
NO_TESTS = (NO_TEST,) * DRAWN


@pytest.fixture
def verify_home(tmp_path: Path, fim_model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = certified_home(tmp_path / "home", fim_model)
    (home / "models" / fim_model.name / CERTIFICATION_FILE).unlink()  # no tools: a plain change turn
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    yield home


@pytest.fixture
async def node(verify_home: Path) -> AsyncIterator[Node]:
    """A node whose verification fills no lines in and tries no one-token changes (each test's script answers the
    stages it is about; the mutations and the filling-in, which come first in the focused round, have tests of
    their own that turn them on)."""
    node = Node(load_config(verify_home))
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, infill=0, infill_inserts=0, mutations=0))
    yield node
    await node.close()


class Candidates(Script):
    """The turn's answer, then the candidates' (each request's sampling, grammar and group recorded)."""

    def __init__(self, *answers: str) -> None:
        super().__init__(*answers)
        self.requests: list[dict[str, Any]] = []

    def candidate(self, engine: Any, session_id: str, token_ids: list[int], max_new_tokens: int, *,
                  sampling: tuple[float, float, int] | None, grammar: str, group: str,
                  stops: tuple[int, ...] = ()) -> RequestHandle:
        self.requests.append({"ids": list(token_ids), "sampling": sampling, "grammar": grammar, "group": group,
                              "stops": tuple(stops)})
        return self.submit(engine, session_id, token_ids, max_new_tokens)


def scripted(monkeypatch: pytest.MonkeyPatch, *answers: str) -> Candidates:
    script = Candidates(*answers)
    monkeypatch.setattr(backend, "submit", script.submit)
    monkeypatch.setattr(backend, "submit_candidate", script.candidate)
    return script


def _repo(tmp_path: Path, check: str = "") -> Path:
    """The buggy repository; ``check``: its own check command (``.contenox.toml``), committed."""
    files = {"util.py": UTIL, "tests/test_util.py": TEST}
    if check:
        files[".contenox.toml"] = f'[verify]\ncommand = "{check}"\n'
    return make_repo(tmp_path / "repo", files)


def _request(repo: Path, **kw: Any) -> TurnRequest:
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    return TurnRequest(root=str(repo), env=env, **{"prompt": ASK, "terminal": TERMINAL, **kw})


async def test_the_passing_candidate_is_offered_and_the_user_files_are_untouched(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    script = scripted(monkeypatch, WRONG, RIGHT, "I am not sure what to change.", WRONG)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(_request(repo, verify=True), on_event)
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert (report.command, report.command_source) == (
        "python -m pytest -q -p no:cacheprovider tests/test_util.py", "terminal")
    assert [c.outcome for c in report.candidates] == ["failed", "passed", "no_edit", "failed"]
    assert report.chosen == 2 and report.rounds == 0
    assert report.candidates[3].check_s == 0.0  # the same change as candidate 1: not run again
    assert [c.arm for c in report.candidates] == ["turn"] * 4
    assert [e.path for e in outcome.edits.edits] == ["util.py"]
    assert "+    return x + 1" in outcome.edits.diff
    assert outcome.text.startswith("helper is off by one.") and "x + 1" in outcome.text  # the prose kept
    # the answer ends saying what the checked change is and what it made pass, streamed as the rest was
    assert report.changed == ("`helper` in util.py",) and report.failed_before == ("tests/test_util.py::test_helper",)
    verdict = ("Verified: with the offered change to `helper` in util.py, `python -m pytest -q -p no:cacheprovider "
               "tests/test_util.py` passes in a scratch copy; before it, tests/test_util.py::test_helper failed.")
    assert report.verdict() == verdict and outcome.text.endswith("x + 1\n>>>>>>> REPLACE\n\n" + verdict)
    assert [e.text for e in events if e.kind == "chunk"][-1] == "\n\n" + verdict
    # candidates: the turn's own prompt, sampled, one group, under the grammar of util.py's real lines
    turn_prompt = script.prompts[0]
    assert all(r["ids"] == turn_prompt for r in script.requests) and len(script.requests) == 3
    assert all(r["sampling"] is not None for r in script.requests)
    assert len({r["group"] for r in script.requests}) == 1
    assert all('"    return x - 1\\n"' in r["grammar"] for r in script.requests)
    # each check an execute step the client sees; the explain names the command and every candidate
    checks = [e.tool for e in events if e.kind == "tool" and e.tool is not None and e.tool.status != "in_progress"]
    assert [t.status for t in checks] == ["completed", "failed", "completed"] and all(t.kind == "execute"
                                                                                    for t in checks)
    assert "before any change: failed" in checks[0].output and report.baseline == "failed"
    notes = "\n".join(outcome.explain.notes)
    assert "verified: `python -m pytest" in notes and "candidate 2 (round 0, sampled, grammar" in notes
    # the user's tree, index and worktrees are as they were; the scratch copy is gone
    assert (repo / "util.py").read_text() == UTIL
    assert git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert not list((node.config.state_dir / "workspaces").glob("*/scratch"))


async def test_a_repair_round_extends_the_turn_with_the_failing_output(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify,
                                                                                      focused=False))
    script = scripted(monkeypatch, WRONG, block("x - 3"), block("x - 4"), block("x - 5"), block("x - 6"), RIGHT,
                      block("x - 7"), block("x - 8"))
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed"
    assert report.rounds == 1 and report.chosen == 6
    assert [c.round for c in report.candidates] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [c.arm for c in report.candidates] == ["turn"] * 4 + ["repair"] * 4
    repair = script.requests[3]
    assert repair["sampling"] is None  # the round's greedy answer
    turn_prompt = script.prompts[0]
    assert repair["ids"][:len(turn_prompt)] == turn_prompt  # append-only: the turn's prompt, then the step
    step_text = (await node.engine()).tokenizer.decode(repair["ids"][len(turn_prompt):])
    assert "return x - 1" in step_text and "1 failed" in step_text  # the best candidate, then its failing output
    history = await node.history(str(repo), "main")
    assert history[-1].answer.strip().endswith(RIGHT.strip() + "\n\n" + report.verdict())
    assert (repo / "util.py").read_text() == UTIL


WEAKENED = "tests/test_util.py\n<<<<<<< SEARCH\n    assert helper(1) == 2\n=======\n    assert helper(1) == 0\n>>>>>>> REPLACE\n"
"""An edit of the failing test that makes it pass with the bug left in."""


async def test_a_fix_is_checked_and_offered_without_its_edit_of_the_failing_test(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify,
                                                                                      focused=False))
    scripted(monkeypatch, "The test expects the wrong value.\n\n" + WEAKENED, WEAKENED + "\n" + RIGHT,
             "I am not sure what to change.", WRONG)
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    # the turn's answer changed only the failing test: no change is left to check (without the rule it passed)
    assert [c.outcome for c in report.candidates] == ["no_edit", "passed", "no_edit", "failed"]
    assert "left out: its edit of tests/test_util.py, the failing test's file" in report.candidates[0].output_tail
    assert report.chosen == 2 and report.candidates[1].files == ("util.py",)
    assert [e.path for e in outcome.edits.edits] == ["util.py"] and "+    return x + 1" in outcome.edits.diff
    assert ("Not offered: the answer's edit of tests/test_util.py, the failing test (a fix is checked and offered "
            "against the tests as they are") in outcome.text
    assert outcome.text.rstrip().endswith(report.verdict()) and report.verdict().startswith("Verified: ")
    notes = "\n".join(outcome.explain.notes)
    assert "candidate 1 (round 0, greedy" in notes and "no edit (left out: its edit of tests/test_util.py" in notes
    assert (repo / "tests/test_util.py").read_text() == TEST and (repo / "util.py").read_text() == UTIL


async def test_no_change_is_offered_when_every_candidate_does_worse_than_the_code_as_it_is(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None passed, and the best candidate breaks a test that passed before: offering it (with `--apply` one
    keystroke away) would leave the user worse off than no change. Its prose stays; the answer says why no change
    is offered; the candidates are in explain-context as always."""
    repo = make_repo(tmp_path / "repo", {
        "util.py": UTIL + "\n\ndef other():\n    return 1\n",
        "tests/test_util.py": TEST + "\n\ndef test_other():\n    from util import other\n    assert other() == 1\n"})
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, focused=False, rounds=0))
    breaks = "other returns the wrong value.\n\nutil.py\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n"
    scripted(monkeypatch, breaks, breaks, breaks, breaks)
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_util.py\nF.\n"
                "FAILED tests/test_util.py::test_helper - assert 0 == 2\n1 failed, 1 passed in 0.01s")
    outcome = await node.turn(_request(repo, verify=True, terminal=terminal))
    report = outcome.verification
    assert report is not None and report.status == "failed", report
    assert report.withheld == ("the best, candidate 1, leaves 2 failing and 0 passing where 1 failed and 1 passed "
                               "before any change"), report.withheld
    assert not outcome.edits.edits and "none offered: the best, candidate 1" in report.summary()
    assert outcome.text.startswith("other returns the wrong value.") and "<<<<<<< SEARCH" not in outcome.text
    assert outcome.text.endswith("before any change (`python -m pytest -q -p no:cacheprovider tests/test_util.py`).")
    # one that does no worse (the same failure, the other test left alone) is still offered, as the closest
    scripted(monkeypatch, WRONG, WRONG, WRONG, WRONG)
    offered = await node.turn(_request(repo, verify=True, terminal=terminal, thread="again"))
    assert offered.verification is not None and not offered.verification.withheld
    assert [e.path for e in offered.edits.edits] == ["util.py"]


async def test_a_failing_run_pasted_after_the_question_is_the_turn_s_terminal_output(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI and Zed have no terminal segment: the user pastes the run after the question. It goes in as the
    turn's terminal output (its `$` line the check command, not detection's), and the question is what came
    before it (read alone for what it asks)."""
    repo = _repo(tmp_path)
    script = scripted(monkeypatch, WRONG, RIGHT, "I am not sure what to change.", WRONG)
    outcome = await node.turn(_request(repo, verify=True, terminal="", prompt=f"{ASK}\n\n```\n{TERMINAL}\n```\n"))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert (report.command, report.command_source) == (
        "python -m pytest -q -p no:cacheprovider tests/test_util.py", "terminal")
    notes = "\n".join(outcome.explain.notes)
    assert "the failing run pasted in the question ($ python -m pytest -q -p no:cacheprovider tests/test_util.py) " \
           "went in as its terminal output" in notes
    assert [seg.tokens > 0 for seg in outcome.explain.segments if seg.kind == "terminal"] == [True]
    assert len(script.requests) == 3  # the candidates, as with the terminal sent apart


async def test_a_candidate_whose_check_hangs_is_stopped_soon_after_the_check_s_own_run_time(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, focused=False, timeout_s=120.0, hang_factor=1.0, hang_extra_s=2.0, hang_quiet_s=1.0))
    hangs = "util.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    while x:\n        pass\n    return x\n>>>>>>> REPLACE\n"
    scripted(monkeypatch, hangs, RIGHT, "I am not sure what to change.", WRONG)
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 2
    hung = report.candidates[0]
    # stopped by the hang limit (its words), not by verify.timeout_s's 120 s (no wall-clock bound asserted here)
    assert hung.outcome == "timeout", hung
    assert ("hung: over 1x the check's run without a change + 2 s, and no output for 1 s (verify.hang_factor"
            in hung.output_tail)
    assert "candidate 1 (round 0, greedy" in "\n".join(outcome.explain.notes)


async def test_a_question_that_asks_for_the_test_to_change_gets_its_test_edit_checked(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify,
                                                                                      focused=False))
    scripted(monkeypatch, WEAKENED, WRONG, WRONG, WRONG)
    ask = "test_helper fails, but helper(1) is meant to be 0: the test is wrong. Update it."
    outcome = await node.turn(_request(repo, verify=True, prompt=ask))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1
    assert [e.path for e in outcome.edits.edits] == ["tests/test_util.py"]
    assert report.verdict().startswith("Checked, but the offered change") and "Not offered" not in outcome.text


async def test_a_search_past_its_time_budget_draws_no_more_and_says_what_it_left(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``verify.budget_s`` spent after the first round: no repair round is drawn, the best candidate so far is
    chosen as always, and the verdict and explain-context say the search stopped and what it left untried."""
    repo = _repo(tmp_path)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, focused=False, budget_s=0.001))
    script = scripted(monkeypatch, WRONG, block("x - 3"), block("x - 4"), block("x - 5"), RIGHT)
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "failed" and report.rounds == 0, report
    assert len(report.candidates) == 4 and len(script.requests) == 3  # the first round's sampled three, no more
    assert report.stopped == "no more candidates drawn after 0 s (verify.budget_s); not tried: 2 repair round(s)"
    assert "; 0 repair round(s); the search stopped at verify.budget_s (" in report.summary()
    assert report.stopped in outcome.explain.notes
    # unlimited (0): the repair round follows and its right answer is offered
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, budget_s=0))
    scripted(monkeypatch, WRONG, block("x - 3"), block("x - 4"), block("x - 5"), RIGHT, block("x - 7"),
             block("x - 8"), block("x - 9"))
    report = (await node.turn(_request(repo, verify=True, thread="again"))).verification
    assert report is not None and report.status == "passed" and report.rounds == 1 and not report.stopped


async def test_an_answer_that_wrote_no_edit_is_asked_for_one_and_its_edit_is_checked(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 0.5B spends most change answers on a table of the files and writes no edit block: one more step, after
    the answer, asks for the change as edit blocks (Aider's architect/editor split); what it writes is the turn's
    change, appended to the answer, and verification checks it as the turn's own."""
    repo = _repo(tmp_path)
    prose = "| File | Function |\n|---|---|\n| util.py | helper |\n\nhelper subtracts one where it should add one."
    script = scripted(monkeypatch, prose, RIGHT, WRONG, WRONG, WRONG)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(_request(repo, verify=True), on_event)
    turn_prompt, step = script.prompts[0], script.prompts[1]
    assert step[:len(turn_prompt)] == turn_prompt  # append-only: the turn's prompt, the answer, the request
    step_text = (await node.engine()).tokenizer.decode(step[len(turn_prompt):])
    assert "helper subtracts one" in step_text and "has no edit block" in step_text
    # its blocks search the lines of what the question names (helper's definition), never the test it names
    assert '"util.py\\n" "<<<<<<< SEARCH\\n" s0' in script.grammars[1] and "tests/" not in script.grammars[1]
    assert 'l0_1 ::= "    return x - 1\\n"' in script.grammars[1]
    assert outcome.text.startswith(prose) and RIGHT.strip() in outcome.text  # the prose kept, the blocks after it
    assert "".join(e.text for e in events if e.kind == "chunk").startswith(prose + "\n\n" + RIGHT[:20])
    assert [e.path for e in outcome.edits.edits] == ["util.py"] and "+    return x + 1" in outcome.edits.diff
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1
    assert [c.outcome for c in report.candidates] == ["passed", "failed", "failed", "failed"]
    assert [c.arm for c in report.candidates] == ["edit-step", "turn", "turn", "turn"]
    assert "candidate 1 (round 0, greedy, grammar, edit-step prompt" in "\n".join(outcome.explain.notes)
    assert all(r["ids"] == turn_prompt for r in script.requests)  # the sampled ones: from the turn's own prompt
    notes = "\n".join(outcome.explain.notes)
    assert "wrote no edit block; asked for one after it, it wrote 1 file edit(s) (util.py;" in notes
    history = await node.history(str(repo), "main")
    assert history[-1].answer.startswith(prose) and RIGHT.strip() in history[-1].answer
    assert (repo / "util.py").read_text() == UTIL
    # off: the answer stands as written (no check runs here: the user said no to running it)
    node.config = msgspec.structs.replace(node.config, planner=msgspec.structs.replace(node.config.planner,
                                                                                       edit_step=False))
    script = scripted(monkeypatch, prose)
    outcome = await node.turn(_request(repo, verify=False, thread="off"))
    assert len(script.prompts) == 1 and outcome.text == prose and not outcome.edits.edits
    assert not any("asked for one after it" in note for note in outcome.explain.notes)


NEIGHBOURS = TEST + "\n\ndef test_helper_elsewhere():\n    assert helper(5) != 2\n"
"""The failing test and one beside it that passes before the fix (and with the right one)."""
ONE_TEST = TERMINAL.replace("tests/test_util.py\nF", "tests/test_util.py::test_helper\nF")


async def test_a_candidate_that_passes_by_breaking_the_failing_test_s_neighbours_ranks_after_a_real_fix(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``return 2`` makes ``test_helper`` pass and defeats it: the failing test's whole file, run with each passing
    candidate, shows ``test_helper_elsewhere`` (passing before) now failing. The real fix is offered; when only
    the defeating change passes, a repair round is drawn from it, told which tests it broke."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL, "tests/test_util.py": NEIGHBOURS})
    defeat = "helper must give 2.\n\n" + block("2")
    scripted(monkeypatch, defeat, RIGHT, WRONG, block("x - 3"))
    outcome = await node.turn(_request(repo, verify=True, terminal=ONE_TEST))
    report = outcome.verification
    assert report is not None and report.command.endswith("tests/test_util.py::test_helper"), report
    assert [c.outcome for c in report.candidates] == ["passed", "passed", "failed", "failed"]
    assert report.candidates[0].broke == ("tests/test_util.py::test_helper_elsewhere",)
    assert report.candidates[1].broke == () and report.chosen == 2 and report.status == "passed"
    assert report.passed_count == 1 and "+    return x + 1" in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)
    assert "passed in" in notes and "but it breaks tests/test_util.py::test_helper_elsewhere (passed before it)" in notes
    # the defeating change alone passes: repaired from, told what it broke; the round's right answer is offered
    script = scripted(monkeypatch, defeat, WRONG, block("x - 3"), block("x - 4"), RIGHT, WRONG, WRONG, WRONG)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify,
                                                                                      focused=False))
    outcome = await node.turn(_request(repo, verify=True, terminal=ONE_TEST, thread="again"))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.rounds == 1, report
    assert report.chosen == 5 and report.candidates[4].arm == "repair"
    repair = (await node.engine()).tokenizer.decode(script.requests[3]["ids"])
    assert "passed, but other tests that passed before now fail: tests/test_util.py::test_helper_elsewhere" in repair
    assert (repo / "util.py").read_text() == UTIL


ELSEWHERE = "from util import helper\n\n\ndef test_helper_keeps_its_sign():\n    assert helper(-5) < 0\n"
"""A test in another file that passes before the fix (and with the right one): the failing file never runs it."""
UNIMPORTABLE = "import no_such_package_here\n\n\ndef test_never_collected():\n    assert no_such_package_here\n"


async def test_a_candidate_that_breaks_a_test_in_another_file_of_the_suite_ranks_after_a_real_fix(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``return abs(x) + 1`` passes ``test_helper`` and every test of its file, and breaks
    ``tests/test_sign.py``, which the check never runs: the project's whole suite, run once without the change
    (less a test file that cannot be imported for want of a package) and with each candidate that passed, holds
    it to that test as well. The real fix is offered."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL, "tests/test_util.py": TEST, "tests/test_sign.py": ELSEWHERE,
                                          "tests/test_extra.py": UNIMPORTABLE})
    scripted(monkeypatch, "helper must be positive.\n\n" + block("abs(x) + 1"), RIGHT, WRONG, block("x - 3"))
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.command.endswith("tests/test_util.py"), report
    assert [c.outcome for c in report.candidates] == ["passed", "passed", "failed", "failed"]
    assert report.candidates[0].broke == ("tests/test_sign.py::test_helper_keeps_its_sign",)
    assert report.candidates[1].broke == () and report.chosen == 2 and report.status == "passed"
    assert "+    return x + 1" in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)
    assert "but it breaks tests/test_sign.py::test_helper_keeps_its_sign (passed before it)" in notes
    assert ("the project's whole suite, run with each candidate that passed the check: `python -m pytest -q "
            "-p no:cacheprovider --ignore=tests/test_extra.py`: failed (exit 1) in ") in notes
    assert report.suite.endswith(" before any change, 1 test(s) failing; left out tests/test_extra.py (its "
                                 "`no_such_package_here` is not installed)"), report.suite
    assert (repo / "util.py").read_text() == UTIL


GOOD_UTIL = "def helper(x):\n    return x + 1\n"


def adds_double(body: str) -> str:
    return (f"util.py\n<<<<<<< SEARCH\n    return x + 1\n=======\n    return x + 1\n\n\ndef double(x):\n"
            f"    return {body}\n>>>>>>> REPLACE\n")


async def test_a_feature_under_passing_tests_is_checked_against_a_test_the_model_wrote_for_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check passes before any change, so it only guards. The model writes a test of the change (Agentless's
    reproduction test), run in the scratch copy after the check: it fails before the change, so candidates are
    drawn and the one that passes both is offered; the test never reaches the workspace."""
    check = "python -m pytest -q -p no:cacheprovider tests/test_util.py"
    repo = make_repo(tmp_path / "repo", {"util.py": GOOD_UTIL, "tests/test_util.py": TEST,
                                         ".contenox.toml": f'[verify]\ncommand = "{check}"\n'})
    ask = "Add a function double(x) to util.py that returns twice x."
    written = "```python\nfrom util import double\n\n\ndef test_double():\n    assert double(2) == 4\n```\n"
    script = scripted(monkeypatch, adds_double("x * 3"), written, *NO_TESTS[1:], adds_double("x * 2"), adds_double("x - 1"),
                      adds_double("x"))
    request = TurnRequest(root=str(repo), prompt=ask, verify=True, env=_request(repo).env)
    outcome = await node.turn(request)
    report = outcome.verification
    assert report is not None and (report.status, report.baseline) == ("passed", "passed"), report
    assert report.reproduction_path == "tests/test_contenox_change.py" and "def test_double" in report.reproduction
    assert "Before your change is checked, write a pytest test" in (await node.engine()).tokenizer.decode(
        script.requests[0]["ids"])  # asked after the turn's answer, from its prompt
    assert [c.outcome for c in report.candidates] == ["passed"] * 4
    assert [c.reproduced for c in report.candidates] == [False, True, False, False] and report.chosen == 2
    assert "+    return x * 2" in outcome.edits.diff and [e.path for e in outcome.edits.edits] == ["util.py"]
    assert report.summary().startswith("verified: `python -m pytest -q -p no:cacheprovider tests/test_util.py` still "
                                       "passes, and the test written for the change (tests/test_contenox_change.py), "
                                       "which failed before it, passes (1 of 4 candidates)")
    assert outcome.text.rstrip().endswith("which failed before it, passes.")
    notes = "\n".join(outcome.explain.notes)
    assert "the test written for the change (tests/test_contenox_change.py) fails before it (failed (exit" in notes
    assert not (repo / "tests/test_contenox_change.py").exists() and (repo / "util.py").read_text() == GOOD_UTIL
    # a test that passes before the change tests nothing it adds: not used, the turn's answer guarded as before
    passing = "```python\nfrom util import helper\n\n\ndef test_helper():\n    assert helper(1) == 2\n```\n"
    scripted(monkeypatch, adds_double("x * 3"), passing, *NO_TESTS[1:])
    outcome = await node.turn(msgspec.structs.replace(request, thread="again"))
    report = outcome.verification
    assert report is not None and report.status == "passed" and len(report.candidates) == 1 and not report.reproduction
    assert report.reproduction_note == ("the test written for the change (tests/test_contenox_change.py) was not "
                                        "used: it passes before the change too (it tests nothing the change adds)")
    assert report.summary().startswith("checked: ")


def pytest_code(assertion: str) -> str:
    return f"```python\nfrom util import double\n\n\ndef test_double():\n    assert {assertion}\n```\n"


async def test_a_right_change_passes_when_most_tests_written_for_it_agree_and_a_wrong_test_alone_cannot_refuse_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agentless keeps the reproduction tests most candidates agree with: the model writes three tests of the
    change at once (one group); one of them expects what was never asked (``double(2) == 5``). Each fails before
    the change and is kept; the turn's right answer passes two of the three, which is enough, and the verdict
    says two of three. With one test drawn, the wrong one alone turns the right answer down."""
    check = "python -m pytest -q -p no:cacheprovider tests/test_util.py"
    repo = make_repo(tmp_path / "repo", {"util.py": GOOD_UTIL, "tests/test_util.py": TEST,
                                         ".contenox.toml": f'[verify]\ncommand = "{check}"\n'})
    request = TurnRequest(root=str(repo), prompt="Add a function double(x) to util.py that returns twice x.",
                          verify=True, env=_request(repo).env)
    assert DRAWN == 3
    script = scripted(monkeypatch, adds_double("x * 2"), pytest_code("double(2) == 4"), pytest_code("double(2) == 5"),
                      pytest_code("double(3) == 6"), adds_double("x * 3"), adds_double("x - 1"), adds_double("x"))
    outcome = await node.turn(request)
    report = outcome.verification
    assert report is not None and (report.status, report.baseline, report.chosen) == ("passed", "passed", 1), report
    assert [r["group"] for r in script.requests[:3]] == [script.requests[0]["group"]] * 3  # drawn side by side
    assert report.reproductions == 3 and "double(2) == 5" in report.written_tests[1]
    assert [c.written_passed for c in report.candidates] == [2, 0, 0, 0]
    assert [c.reproduced for c in report.candidates] == [True, False, False, False]
    assert report.reproduction_note.startswith("3 of the 3 tests written for the change (tests/test_contenox_change.py, "
                                               "each laid there in turn) fail before it")
    assert report.summary().startswith(f"verified: `{check}` still passes, and 2 of the 3 tests written for the change "
                                       "(tests/test_contenox_change.py, each laid there in turn; each failed before "
                                       "it) pass (1 of 4 candidates)")
    assert outcome.text.rstrip().endswith("and 2 of 3 tests written for the change (by the model: read them in "
                                          "explain-context), each of which failed before it, pass.")
    notes = "\n".join(outcome.explain.notes)
    assert "test written for the change 2 of 3 (tests/test_contenox_change.py, by the model):" in notes
    assert "; 2 of the 3 tests written for the change passed <- offered" in notes
    assert not (repo / "tests/test_contenox_change.py").exists() and (repo / "util.py").read_text() == GOOD_UTIL
    # one test drawn, the wrong one: the right answer fails it, as every candidate does
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, written_tests=1, rounds=0))
    scripted(monkeypatch, adds_double("x * 2"), pytest_code("double(2) == 5"), adds_double("x * 3"),
             adds_double("x - 1"), adds_double("x"))
    report = (await node.turn(msgspec.structs.replace(request, thread="one"))).verification
    assert report is not None and report.reproductions == 1 and not report.written_tests
    assert [c.reproduced for c in report.candidates] == [False] * 4
    assert "the test written for the change (tests/test_contenox_change.py) failed with every candidate" in \
        report.summary()


SCALED = "def helper(x):\n    return x + 1\n\n\ndef scaled(x):\n    return helper(x) * 2\n"


async def test_a_change_under_a_passing_check_is_localized_from_the_failing_run_of_the_test_written_for_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check passes before any change (it never calls ``scaled``), so it only guards; the test written for
    the change fails on its assertion. Its failing run is localized as a check's is (the test lives in the scratch
    copy alone, read from there): the function it calls, ``scaled``, is the focused place, its prompt shows the
    written test and its run, and the focused rewrite that passes both is offered. One-token changes, turned on,
    are not tried against it: a test the model wrote is not the project's (``* 2`` to ``* 3`` would pass it as
    readily were it wrong)."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, mutations=8))
    check = "python -m pytest -q -p no:cacheprovider tests/test_util.py"
    repo = make_repo(tmp_path / "repo", {"util.py": SCALED, "tests/test_util.py": TEST,
                                         ".contenox.toml": f'[verify]\ncommand = "{check}"\n'})
    wrong = "util.py\n<<<<<<< SEARCH\n    return helper(x) * 2\n=======\n    return helper(x) * 4\n>>>>>>> REPLACE\n"
    written = "```python\nfrom util import scaled\n\n\ndef test_scaled():\n    assert scaled(1) == 6\n```\n"
    rewrite = "```python\ndef scaled(x):\n    return helper(x) * 3\n```"
    script = scripted(monkeypatch, wrong, written, *NO_TESTS[1:], "no idea", "no idea", "no idea",
                      rewrite, "no idea", "no idea", "no idea")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="scaled(x) should triple helper(x), not double it. "
                                          "Change it.", verify=True, env=_request(repo).env))
    report = outcome.verification
    assert report is not None and (report.status, report.baseline) == ("passed", "passed"), report
    offered = report.candidates[report.chosen - 1] if report.chosen else None
    assert offered is not None and offered.arm == "focused" and offered.reproduced is True, report.candidates
    assert not any(c.arm == "mutation" for c in report.candidates)
    assert report.places[0].startswith("scaled (util.py:5-6")
    focused = (await node.engine()).tokenizer.decode(script.requests[DRAWN + VerifyConfig().candidates - 1]["ids"])
    assert "python -m pytest -q -p no:cacheprovider tests/test_contenox_change.py" in focused
    assert "assert scaled(1) == 6" in focused and "def scaled(x):" in focused
    assert "+    return helper(x) * 3" in outcome.edits.diff and [e.path for e in outcome.edits.edits] == ["util.py"]
    assert (repo / "util.py").read_text() == SCALED and not (repo / "tests/test_contenox_change.py").exists()


async def test_an_edit_step_that_copied_its_lines_unchanged_is_drawn_again_and_the_draw_that_changes_one_kept(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edit step's block replaces its lines with the same lines (the 1.5B's way on h11's export list): drawn
    again from the same prompt, sampled under the same grammar, as one group; the first draw that changes a line
    is the step's, checked as the turn's change."""
    repo = _repo(tmp_path)
    prose = "helper subtracts one where it should add one."
    same = block("x - 1")
    script = scripted(monkeypatch, prose, same, same, RIGHT, WRONG, WRONG, WRONG, WRONG)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(_request(repo, verify=True), on_event)
    step_prompt = script.prompts[1]
    redraws = script.requests[:3]
    assert [r["ids"] for r in redraws] == [step_prompt] * 3  # the step's own prompt, cached
    assert all(r["sampling"] is not None and r["grammar"] == script.grammars[1] for r in redraws)
    assert len({r["sampling"][2] for r in redraws}) == 3 and len({r["group"] for r in redraws}) == 1
    assert [e.path for e in outcome.edits.edits] == ["util.py"] and "+    return x + 1" in outcome.edits.diff
    assert outcome.text.startswith(prose) and RIGHT.strip() in outcome.text and same.strip() not in outcome.text
    assert "".join(e.text for e in events if e.kind == "chunk").endswith(RIGHT[-40:] + "\n\n" +
                                                                        outcome.verification.verdict())
    notes = "\n".join(outcome.explain.notes)
    assert ("its blocks changed nothing: drawn again, sampled under the same grammar, draw 2 of 3 changes a line "
            "and is the step's") in notes
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1
    assert report.candidates[0].arm == "edit-step"
    # every draw copying its lines again: the step wrote nothing that applies, and says so (no check runs here)
    script = scripted(monkeypatch, prose, same, same, same, same)
    outcome = await node.turn(_request(repo, verify=False, thread="again"))
    assert len(script.prompts) == 5 and not outcome.edits.edits
    assert ("drawn again 3 time(s), sampled under the same grammar, and none changed a line that applies"
            in "\n".join(outcome.explain.notes))
    assert (repo / "util.py").read_text() == UTIL


PKG = {"pkg/__init__.py": ("from .exc import BadPayload as BadPayload\nfrom .load import load as load\n\n"
                             "__all__ = [\"BadPayload\", \"load\"]\n"),
       "pkg/exc.py": "class BadPayload(Exception):\n    pass\n",
       "pkg/load.py": "from .exc import BadPayload\n\n\ndef load(data):\n    if not data:\n        raise BadPayload()\n"
                      "    return data\n",
       "tests/test_load.py": ("import pytest\n\n\ndef test_a_large_payload_is_refused():\n"
                              "    from pkg import BadPayload, PayloadTooLarge, load\n"
                              "    assert issubclass(PayloadTooLarge, BadPayload)\n"
                              "    pytest.raises(PayloadTooLarge, load, b'x' * 2000)\n")}
SIZE_LIMIT = ("pkg/exc.py\n<<<<<<< SEARCH\nclass BadPayload(Exception):\n    pass\n=======\n"
              "class BadPayload(Exception):\n"
              "    pass\n\n\nclass PayloadTooLarge(BadPayload):\n    pass\n>>>>>>> REPLACE\n\npkg/load.py\n<<<<<<< SEARCH\n"
              "    return data\n=======\n    if len(data) > 1000:\n        raise PayloadTooLarge()\n    return data\n"
              ">>>>>>> REPLACE\n")


async def test_a_change_across_modules_gets_the_imports_and_the_export_it_left_out_and_passes(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model defines the new error and raises it, but imports it nowhere (small models forget the other
    files' bookkeeping): the import in load.py and the export the question asks for are added, so the
    change passes."""
    repo = make_repo(tmp_path / "repo", PKG)
    scripted(monkeypatch, SIZE_LIMIT, *(EDIT_STEP_NONE,) * 3)
    ask = ("Refuse payloads over 1000 bytes with a new PayloadTooLarge error, a kind of BadPayload, importable "
           "from the package root.")
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_load.py\nF\n"
                "FAILED tests/test_load.py::test_a_large_payload_is_refused - ImportError\n1 failed in 0.01s")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=ask, verify=True, terminal=terminal,
                                          env=_request(repo).env))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1, report
    texts = {e.path: e.new_text for e in outcome.edits.edits}
    assert "from .exc import BadPayload\nfrom .exc import PayloadTooLarge\n" in texts["pkg/load.py"]
    assert texts["pkg/__init__.py"].startswith("from .exc import BadPayload as BadPayload\n"
                                               "from .exc import PayloadTooLarge as PayloadTooLarge\n")
    notes = "\n".join(outcome.explain.notes)
    assert "import of `PayloadTooLarge` added to pkg/load.py: the change uses it, pkg/exc.py defines it" in notes
    assert "`PayloadTooLarge` (pkg/exc.py) exported from its package as the question asks" in notes
    assert ("Beyond the edit blocks, the offered change also has: import of `PayloadTooLarge` added to pkg/load.py: "
            "the change uses it, pkg/exc.py defines it; `PayloadTooLarge` (pkg/exc.py) exported from its package as "
            "the question asks: imported in pkg/__init__.py, listed in pkg/__init__.py's __all__.") in outcome.text
    assert (repo / "pkg" / "load.py").read_text() == PKG["pkg/load.py"]


async def test_a_rename_the_answer_did_not_write_is_opened_at_the_definition_and_carried_to_every_use(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked to rename a definition it names, the edit step begins written in at that definition's line (the
    0.5B otherwise changed the body): the model writes the line renamed, the rename reaches every use, and the
    existing tests guard it."""
    repo = make_repo(tmp_path / "repo", {"util.py": "def helper(x):\n    return x + 1\n", "tests/test_util.py": TEST})
    script = scripted(monkeypatch, "| util.py | `helper` |", " plus_one(x):\n>>>>>>> REPLACE\n", *NO_TESTS)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename helper to plus_one, the tests included.",
                                          verify=True, env=_request(repo).env))
    opened = "util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef"
    tokenizer = (await node.engine()).tokenizer
    assert tokenizer.decode(script.prompts[1]).endswith(opened)  # prefilled after the request, not decoded
    # the new name the question gives and the rest of the line as it is: a rename and nothing else
    assert script.grammars[1] == 'root ::= " " "plus_one" "(x):\\n>>>>>>> REPLACE\\n"'  # no more
    assert opened + " plus_one(x):\n>>>>>>> REPLACE" in outcome.text
    assert sorted(e.path for e in outcome.edits.edits) == ["tests/test_util.py", "util.py"]
    assert "+from util import plus_one" in outcome.edits.diff and "+def plus_one(x):" in outcome.edits.diff
    report = outcome.verification
    assert report is not None and (report.status, report.baseline) == ("passed", "passed")
    assert any("opened at the line of each definition the question asks to rename (util.py: def helper(x):), to "
               "the new names the question gives (plus_one)" in n for n in outcome.explain.notes)
    # a rename changes no behaviour: no test of it is asked for (one written for it fails for its own reasons)
    assert not any("write a pytest test" in tokenizer.decode(p) for p in script.prompts)
    assert report.reproduction_note == "no test of the change asked for: a rename changes no behaviour a test could tell apart"
    assert (repo / "util.py").read_text() == "def helper(x):\n    return x + 1\n"


async def test_a_rename_question_s_own_edit_is_set_aside_for_the_rename_step(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer to a rename question wrote an edit of its own (a body rewritten, the rename missed): the rename
    step follows anyway, asked for the renamed line, and its rename, carried to every use, is the turn's change."""
    repo = make_repo(tmp_path / "repo", {"util.py": "def helper(x):\n    return x + 1\n", "tests/test_util.py": TEST})
    own = "util.py\n<<<<<<< SEARCH\n    return x + 1\n=======\n    return x + 2\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, own, " plus_one(x):\n>>>>>>> REPLACE\n", *NO_TESTS)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename helper to plus_one, the tests included.",
                                          verify=True, env=_request(repo).env))
    tokenizer = (await node.engine()).tokenizer
    assert "Write the rename now as edit blocks" in tokenizer.decode(script.prompts[1])
    assert "+def plus_one(x):" in outcome.edits.diff and "x + 2" not in outcome.edits.diff
    assert sorted(e.path for e in outcome.edits.edits) == ["tests/test_util.py", "util.py"]
    notes = "\n".join(outcome.explain.notes)
    assert "the answer to a rename question wrote its own edit (util.py; set aside for the rename step)" in notes
    assert (repo / "util.py").read_text() == "def helper(x):\n    return x + 1\n"


async def test_an_answer_that_renamed_to_another_name_than_the_question_s_takes_the_rename_step(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer renamed the definition, but not to the name asked (``plusone`` for ``plus_one``): the rename step
    follows, bound to the question's name, and its rename, carried to every use, is the turn's change."""
    repo = make_repo(tmp_path / "repo", {"util.py": "def helper(x):\n    return x + 1\n", "tests/test_util.py": TEST})
    own = "util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef plusone(x):\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, own, " plus_one(x):\n>>>>>>> REPLACE\n", *NO_TESTS)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename helper to plus_one, the tests included.",
                                          verify=True, env=_request(repo).env))
    assert script.grammars[1] == 'root ::= " " "plus_one" "(x):\\n>>>>>>> REPLACE\\n"'
    assert "+def plus_one(x):" in outcome.edits.diff and "plusone" not in outcome.edits.diff
    assert "+from util import plus_one" in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)  # its own rename was carried to the test too, then set aside
    assert ("the answer to a rename question wrote its own edit (util.py, tests/test_util.py; set aside for the "
            "rename step)") in notes
    assert (repo / "util.py").read_text() == "def helper(x):\n    return x + 1\n"


async def test_rename_this_function_opens_the_edit_step_at_the_editor_s_place_after_an_edit_that_did_not_apply(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"Rename this function" names nothing: the definition at the editor's selection is the one renamed; and an
    answer whose edit block does not resolve (its SEARCH is no line of the file) is no edit: the step follows,
    and the note names why the answer's own did not apply."""
    util = "def helper(x):\n    return x + 1\n\n\ndef other(y):\n    return y\n"
    repo = make_repo(tmp_path / "repo", {"util.py": util, "tests/test_util.py": TEST})
    unresolved = "util.py\n<<<<<<< SEARCH\ndef helpr(x):\n=======\ndef plus_one(x):\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, unresolved, " plus_one(x):\n>>>>>>> REPLACE\n", *NO_TESTS)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename this function to plus_one.", verify=True,
                                          open_file=str(repo / "util.py"), selection_lines=(1, 2),
                                          env=_request(repo).env))
    opened = "util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef"
    tokenizer = (await node.engine()).tokenizer
    assert tokenizer.decode(script.prompts[1]).endswith(opened)
    assert sorted(e.path for e in outcome.edits.edits) == ["tests/test_util.py", "util.py"]
    assert "+def plus_one(x):" in outcome.edits.diff and "def other" not in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)
    assert "the answer asked for a change wrote no edit that applies (" in notes
    assert "asked for one after it, it wrote 2 file edit(s)" in notes
    assert (repo / "util.py").read_text() == util


async def test_an_answer_cut_short_inside_an_edit_block_goes_on_from_its_end_and_its_block_is_checked(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer ran out of tokens in the middle of its block's replacement: it goes on once from where it
    stopped (its own tokens the prompt), the block closes, applies and passes; explain-context names it."""
    repo = _repo(tmp_path)
    script = scripted(monkeypatch, "helper is off by one.\n\nutil.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n"
                      "    return x" + CUT, " + 1\n>>>>>>> REPLACE\n", block("x - 3"), block("x - 4"),
                      block("x - 5"))
    outcome = await node.turn(_request(repo, verify=True))
    tokenizer = (await node.engine()).tokenizer
    assert tokenizer.decode(script.prompts[1]).endswith("=======\n    return x")  # the answer so far: the prompt
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1, report
    assert "+    return x + 1" in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)
    assert re.search(r"the answer ran out of its \d+ tokens inside an edit block: continued for \d+ more "
                     r"\(the block closed; \d+ prompt tokens computed\)", notes), notes
    assert (repo / "util.py").read_text() == UTIL


async def test_a_change_answer_cut_short_inside_a_rewritten_function_goes_on_and_the_rewrite_is_checked(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn asked to fix writes the function anew in a code block and runs out of tokens inside it (the 1.5B's
    way: cut short, it does not parse): it goes on, the block closes, and the rewrite is the checked change."""
    repo = _repo(tmp_path)
    scripted(monkeypatch, "helper is off by one.\n\n```python\ndef helper(x):\n    return x" + CUT, " + 1\n```\n",
             block("x - 3"), block("x - 4"), block("x - 5"))
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1, report
    assert "+    return x + 1" in outcome.edits.diff
    assert any(re.search(r"the answer ran out of its \d+ tokens inside a code block: continued for \d+ more "
                         r"\(the block closed;", note) for note in outcome.explain.notes), outcome.explain.notes


async def test_an_answer_cut_short_outside_an_edit_block_is_left_as_it_is(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    scripted(monkeypatch, WRONG + "\nAnother thought" + CUT, RIGHT, block("x - 3"), block("x - 4"))
    outcome = await node.turn(_request(repo, verify=True))
    assert not any("ran out of its" in note for note in outcome.explain.notes)
    report = outcome.verification
    assert report is not None and report.candidates[0].outcome == "failed" and report.chosen == 2


async def test_a_candidate_that_does_not_parse_is_not_checked_and_says_why(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A candidate whose file no longer parses cannot pass: the check (the user's command, maybe minutes long) is
    not run for it, and the parser's words stand where its output would."""
    repo = _repo(tmp_path)
    scripted(monkeypatch, WRONG, block("(x + 1"), RIGHT, block("x +  # one more"))
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(_request(repo, verify=True), on_event)
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 3
    assert [c.outcome for c in report.candidates] == ["failed", "does_not_parse", "passed", "does_not_parse"]
    broken = report.candidates[1]
    assert broken.check_s == 0.0 and broken.output_tail.startswith("util.py, line 2: ")
    assert "return (x + 1" in broken.output_tail
    checks = [e.tool for e in events if e.kind == "tool" and e.tool is not None and e.tool.status == "in_progress"]
    assert [t.id for t in checks] == ["verify-0", "verify-1", "verify-3"]  # before any change, then 1 and 3 only
    notes = "\n".join(outcome.explain.notes)
    assert "candidate 2 (round 0, sampled, grammar, " in notes and "does not parse, not checked: util.py, line 2" in notes
    assert (repo / "util.py").read_text() == UTIL


async def test_a_focused_prompt_of_the_localized_function_draws_the_fix(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    rewritten = "```python\ndef helper(x):\n    return x + 1\n```"
    script = scripted(monkeypatch, WRONG, block("x - 3"), block("x - 4"), block("x - 5"),
                      "```python\ndef helper(x):\n    return x - 9\n```", rewritten, "I cannot tell.", rewritten)
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [c.arm for c in report.candidates] == ["turn"] * 4 + ["focused"] * 4
    assert [c.outcome for c in report.candidates[4:]] == ["failed", "passed", "no_edit", "passed"]
    assert report.chosen == 6 and report.rounds == 0
    assert "+    return x + 1" in outcome.edits.diff and (repo / "util.py").read_text() == UTIL
    focused = script.requests[3:]
    assert [r["sampling"] is None for r in focused] == [True, False, False, False] and len(focused) == 4
    turn_prompt = script.prompts[0]
    assert focused[0]["ids"] != turn_prompt[:len(focused[0]["ids"])]  # a fresh short prompt, not the turn's
    assert len(focused[0]["ids"]) < len(turn_prompt)
    text = (await node.engine()).tokenizer.decode(focused[0]["ids"])
    assert "`helper` in util.py (lines 1-2)" in text and "The failing test" in text and "def test_helper" in text
    assert all('"def helper(x):\\n"' in r["grammar"] for r in focused)  # each answer starts as helper's rewrite
    assert "fails:" in text and "assert" in text  # the failing output it repairs from
    assert "focused prompt" in "\n".join(outcome.explain.notes)


async def test_a_line_of_the_localized_function_filled_in_by_the_model_is_a_candidate(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn's candidates fail: before any focused rewrite, each of the localized function's lines the failing
    run ran (its body first, the def line last) is emptied past its indentation and filled in by the model's
    fill-in-the-middle from the file around it (the FIM markers, the file's path, its stop tokens); a fill like
    the line is no candidate, one that runs on is cut at its line, the same fill twice is checked once, and the
    filling stops at the first line whose fill passes (no rewrite is drawn then)."""
    node.config = msgspec.structs.replace(node.config, verify=VerifyConfig(mutations=0))  # as shipped: lines filled in
    repo = _repo(tmp_path)
    script = scripted(monkeypatch, WRONG, block("x - 3"), block("x - 4"), block("x - 5"),
                      "return x - 1", "return x + 2\n\ndef other():", "return x + 1", "return x + 1")
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    filled = [c for c in report.candidates if c.arm == "infill"]
    assert [(c.line, c.outcome) for c in filled] == [(2, "failed"), (2, "passed")]
    assert [c.arm for c in report.candidates[:4]] == ["turn"] * 4 and len(report.candidates) == 6  # no rewrite
    assert "+    return x + 1" in outcome.edits.diff and (repo / "util.py").read_text() == UTIL
    fills = script.requests[3:]
    assert len(fills) == 4 and [r["sampling"] is None for r in fills] == [True, False, False, False]
    engine = await node.engine()
    stops = {engine.tokenizer.encode(marker)[0] for marker in ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>")}
    assert stops <= set(fills[0]["stops"]) and fills[0]["grammar"] == ""
    assert set(engine.tokenizer.newline_ids()) <= set(fills[0]["stops"])  # a line's fill ends at its line break
    prompt = engine.tokenizer.decode_raw(fills[0]["ids"])
    assert prompt.startswith("<|repo_name|>repo\n<|file_sep|>util.py\n<|fim_prefix|>def helper(x):\n    <|fim_suffix|>")
    assert prompt.endswith("<|fim_middle|>") and "x - 1" not in prompt  # the line itself is the gap
    assert "lines filled in: 1 of 2" in report.places[0]


async def test_a_fill_of_the_def_line_that_renames_the_function_is_no_candidate(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The def line is filled in last; a fill that names the function otherwise breaks every caller (the failing
    test's import first: the 0.5B's fill of dotenv's ``parse_value``), and is never offered: it is not checked,
    and the place's entry says how many were left out. A fill that keeps the name is checked."""
    node.config = msgspec.structs.replace(node.config, verify=VerifyConfig(mutations=0, infill_inserts=0))
    repo = make_repo(tmp_path / "repo", {"util.py": "def helper(x, step=-1):\n    return x + step\n",
                                         "tests/test_util.py": TEST})
    wrong = "util.py\n<<<<<<< SEARCH\n    return x + step\n=======\n    return x + step * 2\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, wrong, wrong, wrong, wrong, *["return x + step"] * 4,
                      "def helper_fixed(x, step=1):", "def helper2(x, step=1):", "def helper(x, step=1):",
                      "def helper(x, step=1):")
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert len(script.requests) == 11  # three sampled, four fills of the body's line, four of the def line
    filled = [c for c in report.candidates if c.arm == "infill"]
    assert [(c.line, c.outcome) for c in filled] == [(1, "passed")]
    assert "helper_fixed" not in "".join(c.diff for c in report.candidates)
    assert "2 fill(s) of the def line that renamed it left out" in report.places[0]
    assert "+def helper(x, step=1):" in outcome.edits.diff


CART = ("BULK = 10\n\n\ndef line_price(price, quantity):\n    total = price * quantity\n"
        "    if quantity > BULK:\n        total = total * 0.9\n    return round(total, 2)\n")
CART_TEST = ("from cart import line_price\n\n\ndef test_small():\n    assert line_price(1.0, 3) == 3.0\n\n\n"
             "def test_bulk_starts_at_ten():\n    assert line_price(1.0, 10) == 9.0\n\n\n"
             "def test_big():\n    assert line_price(1.0, 20) == 18.0\n")


async def test_a_one_token_change_of_a_line_the_failing_run_ran_is_tried_before_the_model_fills_lines_in(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn's candidates fail (the model rewrote the wrong line). Before any line is filled in, the node
    tries one-token changes of the lines the failing run ran, most suspicious first, each checked in the scratch
    copy: ``>`` to ``>=`` passes. That line is then filled in by the model (its own fix would rank first); its
    fill fails, so the node's change is offered, said to be the node's and not the model's (in the answer, its
    verdict and explain-context); nothing else is drawn; the user's file untouched."""
    node.config = msgspec.structs.replace(node.config, verify=VerifyConfig(mutations=8))  # fills on, as shipped
    repo = make_repo(tmp_path / "repo", {"cart.py": CART, "tests/test_cart.py": CART_TEST})
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_cart.py\n.F.\n"
                "FAILED tests/test_cart.py::test_bulk_starts_at_ten - assert 10.0 == 9.0\n1 failed, 2 passed in 0.01s")
    wrong = "cart.py\n<<<<<<< SEARCH\n        total = total * 0.9\n=======\n        total = total * 0.8\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, wrong, wrong, wrong, wrong, *["if quantity < BULK:"] * 4)
    outcome = await node.turn(msgspec.structs.replace(
        _request(repo, verify=True, terminal=terminal), prompt="The bulk discount should start at 10 items. Fix it."))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    mutated = [c for c in report.candidates if c.arm == "mutation"]
    assert mutated and mutated[-1].outcome == "passed" and report.chosen == mutated[-1].index
    assert (mutated[-1].line, mutated[-1].change) == (6, "`>` to `>=`")
    assert all(c.tokens == 0 and c.decode_s == 0.0 for c in mutated)
    filled = [c for c in report.candidates if c.arm == "infill"]
    assert [(c.line, c.outcome) for c in filled] == [(6, "failed")] and report.candidates[-1].arm == "infill"
    assert not any(c.arm in ("insert", "focused", "line") for c in report.candidates)
    assert len(script.requests) == 7  # the turn's sampled candidates, then the line's four fills
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+    if quantity >= BULK:"] and (repo / "cart.py").read_text() == CART
    assert "found by Contenox, not written by the model: line 6, `>` to `>=`" in outcome.text
    assert "(a one-token change Contenox tried, not the model's: line 6, `>` to `>=`)" in outcome.text
    notes = "\n".join(outcome.explain.notes)
    assert "the node's one-token change, no model (line 6: `>` to `>=`), 0 tokens" in notes
    assert "one-token changes tried: " in notes


SLUG = ('import unicodedata\n\n\ndef slugify(text):\n    text = unicodedata.normalize("NFC", text)\n'
        '    return text.encode("ascii", "ignore").decode().lower()\n')


async def test_the_literal_the_question_names_is_tried_in_place_of_a_string_of_its_kind(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial: "slugify drops accented letters. It should use NFKD. Fix it.", and none of the 0.5B's 88
    candidates wrote `NFKD`. The question's literal words are one-token changes too: `"NFC"` to `"NFKD"` passes,
    the model's fills of that line do not, so the node's change is offered, said to be the node's."""
    node.config = msgspec.structs.replace(node.config, verify=VerifyConfig(mutations=8))
    repo = make_repo(tmp_path / "repo", {"slug.py": SLUG, "tests/test_slug.py": (
        "from slug import slugify\n\n\ndef test_accents():\n    assert slugify('Crème') == 'creme'\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_slug.py\nF\n"
                "FAILED tests/test_slug.py::test_accents - AssertionError: assert 'crme' == 'creme'\n"
                "1 failed in 0.01s")
    wrong = ('slug.py\n<<<<<<< SEARCH\n    return text.encode("ascii", "ignore").decode().lower()\n=======\n'
             '    return text.lower()\n>>>>>>> REPLACE\n')
    scripted(monkeypatch, wrong, wrong, wrong, wrong, *['text = unicodedata.normalize("NFC", text.lower())'] * 4)
    outcome = await node.turn(msgspec.structs.replace(
        _request(repo, verify=True, terminal=terminal),
        prompt="slugify drops accented letters. It should use NFKD. Fix it."))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    offered = report.candidates[report.chosen - 1]
    assert (offered.arm, offered.line, offered.change) == ("mutation", 5, '`"NFC"` to `"NFKD"` (the question\'s word)')
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ['+    text = unicodedata.normalize("NFKD", text)'] and (repo / "slug.py").read_text() == SLUG
    assert "found by Contenox, not written by the model" in outcome.text


async def test_the_model_s_own_fill_of_the_line_a_one_token_change_showed_is_offered_over_the_node_s(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A passing one-token change says which line is wrong; the model's fill of that line that passes too is
    offered (the model's fix, not the node's guess), the one-token change listed beside it."""
    node.config = msgspec.structs.replace(node.config, verify=VerifyConfig(mutations=8))
    repo = make_repo(tmp_path / "repo", {"cart.py": CART, "tests/test_cart.py": CART_TEST})
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_cart.py\n.F.\n"
                "FAILED tests/test_cart.py::test_bulk_starts_at_ten - assert 10.0 == 9.0\n1 failed, 2 passed in 0.01s")
    wrong = "cart.py\n<<<<<<< SEARCH\n        total = total * 0.9\n=======\n        total = total * 0.8\n>>>>>>> REPLACE\n"
    scripted(monkeypatch, wrong, wrong, wrong, wrong, "if quantity >= BULK:  # ten and up", *["if quantity < BULK:"] * 3)
    outcome = await node.turn(msgspec.structs.replace(
        _request(repo, verify=True, terminal=terminal), prompt="The bulk discount should start at 10 items. Fix it."))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    offered = report.candidates[report.chosen - 1]
    assert (offered.arm, offered.line, offered.outcome) == ("infill", 6, "passed")
    assert any(c.arm == "mutation" and c.outcome == "passed" for c in report.candidates)
    assert "+    if quantity >= BULK:  # ten and up" in outcome.edits.diff
    assert "not written by the model" not in outcome.text and "Contenox tried" not in outcome.text


async def test_a_line_the_bug_took_out_is_put_back_by_the_model_filling_in_an_empty_line(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug took a line out (``y += 1``): no line's own fill can add it. An empty line put in after a whole
    statement is filled in by the model from the file around it; a fill like the line before or after it is no
    candidate; the one that passes is offered, the function one line longer, the user's file untouched."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, infill=0, infill_inserts=2))
    source = "def helper(x):\n    y = x + 1\n    return y\n"
    repo = make_repo(tmp_path / "repo", {"util.py": source, "tests/test_util.py": TEST.replace("== 2", "== 3")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_util.py\nF\n"
                "FAILED tests/test_util.py::test_helper - assert 2 == 3\n1 failed in 0.01s")
    wrong = "util.py\n<<<<<<< SEARCH\n    return y\n=======\n    return y - 1\n>>>>>>> REPLACE\n"
    fills = ["y = x + 1", "y += 1", "return y", ""]  # each line put in is asked the same (the order is the trace's)
    script = scripted(monkeypatch, wrong, wrong, wrong, wrong, *fills, *fills)
    outcome = await node.turn(msgspec.structs.replace(_request(repo, verify=True, terminal=terminal),
                                                      prompt="helper(1) should be 3. Fix it."))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    put_in = [c for c in report.candidates if c.arm == "insert"]
    assert put_in and put_in[-1].outcome == "passed" and put_in[-1].line == 3
    assert all(c.outcome != "passed" for c in put_in[:-1]) and len(put_in) <= 3  # "y = x + 1" next to itself: none
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+    y += 1"] and (repo / "util.py").read_text() == source
    prompts = [(await node.engine()).tokenizer.decode_raw(r["ids"]) for r in script.requests[4:]]
    assert any(p.endswith("    y = x + 1\n    <|fim_suffix|>\n    return y\n<|fim_middle|>") for p in prompts), prompts
    breaks = set((await node.engine()).tokenizer.newline_ids())
    assert all(not breaks & set(r["stops"]) for r in script.requests[4:])  # a line put in may open a block
    assert "lines put in: " in report.places[0] and "lines filled in" not in report.places[0]


UNITS = 'UNITS = {\n    "h": 3600,\n    "m": 60,\n}\n\n\ndef unit_seconds(unit):\n    return UNITS[unit]\n'
UNITS_TEST = ('from units import unit_seconds\n\n\ndef test_hours():\n    assert unit_seconds("h") == 3600\n\n\n'
              'def test_seconds():\n    assert unit_seconds("s") == 1\n\n\n'
              'def test_days():\n    assert unit_seconds("d") == 86400\n')
UNITS_RUN = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_units.py\n.FF\n"
             "tests/test_units.py:9: in test_seconds\n    assert unit_seconds(\"s\") == 1\n"
             "units.py:8: in unit_seconds\n    return UNITS[unit]\nE   KeyError: 's'\n"
             "FAILED tests/test_units.py::test_seconds - KeyError: 's'\n"
             "FAILED tests/test_units.py::test_days - KeyError: 'd'\n2 failed, 1 passed in 0.01s")


async def test_entries_a_table_lacks_are_put_in_among_its_own_and_a_search_that_does_no_better_offers_nothing(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial ("Add support for seconds and days", the 0.5B): the fix is two entries of a table the function
    reads, which no line of the function, nor any fill of one line, can add; 134 candidates failed and the one
    offered changed an error message (as many failing as before). Lines are now put in among a multi-line
    table's entries too, a fill bringing as many entries as it writes at their column; and a change the node's
    search found that does no better than the code as it is is not offered (the turn's own answer still is)."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, infill=0, infill_inserts=1, localize=False, places=1, lines=0, rounds=0))
    repo = make_repo(tmp_path / "repo", {"units.py": UNITS, "tests/test_units.py": UNITS_TEST})
    ask = "Add support for seconds (s) and days (d) to unit_seconds."
    doubles = "units.py\n<<<<<<< SEARCH\n    return UNITS[unit]\n=======\n    return UNITS[unit] * 2\n>>>>>>> REPLACE\n"
    entries = '"s": 1,\n    "d": 86400,\n}'  # a fill runs on to the table's end: its entries are kept, not the brace
    script = scripted(monkeypatch, doubles, doubles, doubles, doubles, *["pass"] * 4, entries, *["}"] * 3)
    request = msgspec.structs.replace(_request(repo, verify=True, terminal=UNITS_RUN), prompt=ask)
    outcome = await node.turn(request)
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    chosen = report.candidates[report.chosen - 1]
    assert (chosen.arm, chosen.line, chosen.files) == ("insert", 3, ("units.py",))
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ['+    "s": 1,', '+    "d": 86400,'] and (repo / "units.py").read_text() == UNITS
    prompts = [(await node.engine()).tokenizer.decode_raw(r["ids"]) for r in script.requests[3:]]
    assert any('    "h": 3600,\n    <|fim_suffix|>\n    "m": 60,' in p for p in prompts), prompts
    assert report.places[1].startswith("UNITS (units.py:1-4, a module-level value `unit_seconds` uses")
    assert "lines put in: 1 of 2" in report.places[1]

    # every fill does no better (the same two failing, one passing) and the turn's own answers do worse: the
    # closest is the node's, and it fixed nothing the check shows: nothing is offered, the turn's prose kept
    rewrite = "```python\ndef unit_seconds(unit):\n    return UNITS[unit] * 2\n```"
    table = "```python\nUNITS = {}\n```"
    scripted(monkeypatch, "It doubles.\n\n" + doubles, doubles, doubles, doubles, *["pass"] * 4,
             *['"x": 1,'] * 4, *[rewrite] * 4, *[table] * 4)
    again = await node.turn(msgspec.structs.replace(request, thread="again"))
    report = again.verification
    assert report is not None and report.status == "failed", report
    chosen = report.candidates[report.chosen - 1]
    assert chosen.arm == "insert" and (chosen.failing, chosen.passing) == (2, 1)
    assert report.withheld == (f"no candidate did better than the code as it is: the best, candidate {chosen.index}, "
                               "leaves 2 failing and 1 passing, as before any change"), report.withheld
    assert not again.edits.edits and again.text.startswith("It doubles.") and "<<<<<<< SEARCH" not in again.text
    assert again.text.endswith("as before any change (`python -m pytest -q -p no:cacheprovider --tb=short "
                               "tests/test_units.py`).")


async def test_a_change_that_fixes_one_of_two_failing_tests_is_built_on_and_offered_with_the_one_drawn_on_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trial's last step ("Add support for seconds (s) and days (d)", the 0.5B): a fill wrote `"s": 1`, one
    of the two failing tests passed with it, and no candidate wrote `"d"` too. The search now runs again on top of
    the closest candidate when it made some failing tests pass: its run localized anew, each candidate written
    over the table as that change leaves it, checked with it, and the passing one offered with both entries; all
    of it before the repair rounds."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, infill=0, infill_inserts=1, localize=False, places=1, lines=0, rounds=2))
    repo = make_repo(tmp_path / "repo", {"units.py": UNITS, "tests/test_units.py": UNITS_TEST})
    ask = "Add support for seconds (s) and days (d) to unit_seconds."
    doubles = "units.py\n<<<<<<< SEARCH\n    return UNITS[unit]\n=======\n    return UNITS[unit] * 2\n>>>>>>> REPLACE\n"
    rewrite = "```python\ndef unit_seconds(unit):\n    return UNITS[unit] * 2\n```"
    # the turn's 4; a line put in in unit_seconds (4) and in the table (4), then both rewritten (4 each); on top of
    # `"s": 1`, a line put in in each again
    script = scripted(monkeypatch, doubles, doubles, doubles, doubles, *["pass"] * 4, '"s": 1,', *["}"] * 3,
                      *[rewrite] * 8, *["pass"] * 4, '"d": 86400,', *["}"] * 3)
    request = msgspec.structs.replace(_request(repo, verify=True, terminal=UNITS_RUN), prompt=ask)
    outcome = await node.turn(request)
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    chosen = report.candidates[report.chosen - 1]
    under = report.candidates[chosen.on - 1]
    assert (under.arm, under.outcome, under.failing, under.passing) == ("insert", "failed", 1, 2)
    assert (chosen.arm, chosen.outcome) == ("insert", "passed")
    # before any repair round (under a failing check they almost never pass, and they spent the 1.5B's budget)
    assert report.rounds == 0 and not any(c.arm == "repair" for c in report.candidates)
    ons = [c.on for c in report.candidates]  # the first search's, then the one on top of candidate 6
    first = ons.index(6)
    assert under.index == 6 and first > 6 and ons == [0] * first + [6] * (len(ons) - first), ons
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ['+    "d": 86400,', '+    "s": 1,'] and (repo / "units.py").read_text() == UNITS  # put in after h
    assert [e.old_text for e in outcome.edits.edits] == [UNITS]  # offered over the user's file as it is
    # the second fill was asked over the table as the first left it
    prompts = [(await node.engine()).tokenizer.decode_raw(r["ids"]) for r in script.requests]
    assert any('"s": 1,\n    <|fim_suffix|>' in p or '<|fim_suffix|>\n    "s": 1,' in p for p in prompts), prompts
    assert outcome.text.startswith(f"Found in two steps.\n\nFirst, candidate {under.index}'s change, with which 1 of "
                                   "the 2 tests that failed before still failed"), outcome.text
    assert f"on top of candidate {under.index}" in "\n".join(describe_verification(report))


VARIABLES = ('import re\n\n_pattern = re.compile(\n    r"""\n    (?P<name>[a-z]+)\n    =\n    (?P<value>[0-9])\n'
             '    """,\n    re.VERBOSE,\n)\n\n\ndef parse(text):\n    match = _pattern.match(text)\n'
             '    return (match.group("name"), int(match.group("value")))\n')


async def test_a_module_level_value_the_localized_function_uses_is_a_place_of_its_own(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug is in a module-level regex the function uses, which no rewrite of the function reaches: after the
    function's candidates, the value is a focused place of its own (Agentless localizes to global variables too),
    and its rewrite replaces the assignment alone."""
    repo = make_repo(tmp_path / "repo", {"variables.py": VARIABLES, "tests/test_variables.py": (
        "from variables import parse\n\n\ndef test_parse():\n    assert parse('a=12') == ('a', 12)\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_variables.py\nF\n"
                "tests/test_variables.py:5: in test_parse\n    assert parse('a=12') == ('a', 12)\n"
                "E   AssertionError: assert ('a', 1) == ('a', 12)\n1 failed in 0.01s")
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, trace=False, localize=False, lines=0))
    wrong = ("variables.py\n<<<<<<< SEARCH\n    match = _pattern.match(text)\n=======\n"
             "    match = _pattern.search(text)\n>>>>>>> REPLACE\n")
    copy = "```python\n" + VARIABLES.split("\n\n\n")[1] + "```"
    fixed = "```python\n" + VARIABLES.split("\n\n\n")[0].split("\n\n", 1)[1].replace("[0-9])", "[0-9]+)") + \
        "\n\n\nprint(parse('a=12'))\n```"  # what the model writes after the assignment is no part of it
    script = scripted(monkeypatch, wrong, wrong, wrong, wrong, copy, copy, copy, copy, fixed, copy, copy, copy)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_parse fails. Fix it.", terminal=terminal,
                                          verify=True, env=_request(repo).env))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [c.arm for c in report.candidates] == ["turn"] * 4 + ["focused"] * 8 and report.chosen == 9
    assert report.places[1].startswith("_pattern (variables.py:3-10, a module-level value `parse` uses; used by "
                                       "`parse`)"), report.places
    value = (await node.engine()).tokenizer.decode(script.requests[7]["ids"])
    assert "`_pattern` in variables.py (lines 3-10)" in value and "whole corrected definition" in value
    added = [line for line in outcome.edits.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+    (?P<value>[0-9]+)"]  # the assignment alone
    assert (repo / "variables.py").read_text() == VARIABLES


CHAIN = ("def total(x):\n    y = scale(x)\n    return y + shift(x)\n\n\ndef scale(x):\n    y = x * 1\n    return y\n\n\n"
         "def shift(x):\n    y = clamp(x + 1)\n    return y\n\n\ndef clamp(x):\n    y = min(x, 0)\n    return y\n")


async def test_the_model_picks_the_function_to_rewrite_among_the_places_found(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug is two calls below the assertion (total -> shift -> clamp): the places found along the calls are
    offered to the model numbered, its picks (a number each, under a grammar: the greedy one and sampled ones)
    are counted, and the greedy pick is rewritten first."""
    repo = make_repo(tmp_path / "repo", {"util.py": CHAIN, "tests/test_util.py": (
        "from util import total\n\n\ndef test_total():\n    assert total(1) == 3\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_total\n    assert total(1) == 3\nE   assert 1 == 3\n1 failed in 0.01s")
    right = "```python\ndef clamp(x):\n    return x\n```"
    script = scripted(monkeypatch, "The sum is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", "4", "1", "4", "4", right,
                      "```python\ndef clamp(x):\n    return 0\n```", "no idea", "no idea",
                      *["```python\ndef total(x):\n    return 0\n```"] * 4)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="This test fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    localizing = script.requests[3]
    assert all(r["grammar"] == 'root ::= "4" | "3" | "2" | "1"' for r in script.requests[3:7])
    assert localizing["sampling"] is None and all(r["sampling"] is not None for r in script.requests[4:7])
    asked = (await node.engine()).tokenizer.decode(localizing["ids"])
    assert "[1] `total` in util.py" in asked and "[4] `clamp` in util.py (lines 16-18)" in asked
    assert [p.split(" (")[0] for p in report.places] == ["clamp"]  # the pick passed: no other place is drawn
    assert "picked by the model of 4 found (3 of 4 picks)" in report.places[0]
    assert all('"def clamp(x):\\n"' in r["grammar"] for r in script.requests[7:11]) and len(script.requests) == 11
    assert "+    return x" in outcome.edits.diff and (repo / "util.py").read_text() == CHAIN
    assert any(n.startswith("focused place 1: clamp (util.py:16-18") for n in outcome.explain.notes)


async def _one_place_picked(node: Node, monkeypatch: pytest.MonkeyPatch, repo: Path, terminal: str,
                            picks: tuple[str, ...], right: str, prompt: str) -> tuple[Any, Candidates]:
    """A fix turn whose own candidates propose nothing, then the model's ``picks`` of the places found and one
    place's rewrites (``right`` first), one place tried."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, places=1))
    script = scripted(monkeypatch, "The sum is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", *picks, right,
                      *["no idea"] * 3)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=prompt, terminal=terminal, env=env, verify=True))
    return outcome, script


async def test_a_place_the_question_names_is_tried_before_the_model_s_picks_when_the_trace_ties_them(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One failing test and no passing one: the trace ranks ``total``, ``scale``, ``shift`` and ``clamp`` alike.
    The question says the clamp looks wrong, so ``clamp`` is tried first, before the model's picks (``scale``,
    greedy and by most votes); its rewrite passes and no other place is drawn."""
    repo = make_repo(tmp_path / "repo", {"util.py": CHAIN, "tests/test_util.py": (
        "from util import total\n\n\ndef test_total():\n    assert total(1) == 3\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_total\n    assert total(1) == 3\nE   assert 1 == 3\n1 failed in 0.01s")
    outcome, script = await _one_place_picked(node, monkeypatch, repo, terminal, ("2", "2", "2", "1"),
                                              "```python\ndef clamp(x):\n    return x\n```",
                                              "This test fails: the clamp looks wrong. Fix it.")
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [f.split(" (")[0] for f in report.found] == ["total", "scale", "shift", "clamp"]
    assert [p.split(" (")[0] for p in report.places] == ["clamp"]
    assert "its name uses 1 of the question's words" in report.places[0] and "picked" not in report.places[0]
    assert all('"def clamp(x):\\n"' in r["grammar"] for r in script.requests[7:11]) and len(script.requests) == 11
    assert "+    return x" in outcome.edits.diff and (repo / "util.py").read_text() == CHAIN


async def test_where_the_trace_ranks_its_ties_go_by_the_model_s_picks_whatever_the_question_names(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A passing test beside the failing one runs ``base`` too: the trace ranks (not blind), and ``high`` and
    ``low``, which only the failing test runs, tie above it. The question names ``low``, the model picks ``high``:
    the pick goes first (the question's words order only a blind trace's ties), and its rewrite passes."""
    repo = make_repo(tmp_path / "repo", {"calc.py": (
        "def low(x):\n    return x - 1\n\n\ndef high(x):\n    return x + 2\n\n\ndef base():\n    return 1\n"),
        "tests/test_calc.py": ("from calc import base, high, low\n\n\ndef test_base():\n    assert base() == 1\n\n\n"
                               "def test_both():\n    assert high(low(base())) == 1\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_calc.py\n.F\n"
                "tests/test_calc.py:9: in test_both\n    assert high(low(base())) == 1\nE   assert 2 == 1\n"
                "1 failed, 1 passed in 0.01s")
    outcome, script = await _one_place_picked(node, monkeypatch, repo, terminal, ("1", "1", "2", "1"),
                                              "```python\ndef high(x):\n    return x + 1\n```",
                                              "test_both fails: low looks wrong. Fix it.")
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [f.split(" (")[0] for f in report.found] == ["high", "low", "base"]
    assert [p.split(" (")[0] for p in report.places] == ["high"]
    assert "picked by the model of 3 found (3 of 4 picks)" in report.places[0]
    assert "question's words" not in report.places[0]
    assert all('"def high(x):\\n"' in r["grammar"] for r in script.requests[7:11]) and len(script.requests) == 11

RANGE_JS = ("const isX = id => !id || id === 'x'\n\n"
            "const replaceCaret = (comp) => {\n"
            "  return comp.replace(/\\^(\\d+)/, (_, M) => {\n"
            "    return `>=${M}.0.0 <${+M + 2}.0.0`\n"
            "  })\n"
            "}\n\n"
            "const replaceTilde = (comp) => {\n"
            "  return comp.replace(/~(\\d+)/, (_, M) => `>=${M}.0.0 <${M}.1.0`)\n"
            "}\n\n"
            "const desugar = (comp) => replaceTilde(replaceCaret(comp))\n\n"
            "module.exports = { desugar, replaceCaret, replaceTilde, isX }\n")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_a_javascript_check_is_traced_by_v8_and_the_function_the_question_names_is_rewritten(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """semver's tasks: a ``node -e`` check prints no frame of the project. Its first run writes V8's coverage:
    ``replaceCaret``, ``replaceTilde`` and ``desugar`` ran (``isX`` did not), one run and no passing one, so
    they are ordered by the words of the question their names use (the caret first); the model picks among
    them, and the picked function is asked for as JavaScript, its rewrite laid over its own lines."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, lines=0))
    repo = make_repo(tmp_path / "repo", {"lib/range.js": RANGE_JS})
    check = ("node -e \"const assert = require('assert'); const r = require('./lib/range'); "
             "assert.strictEqual(r.desugar('^1'), '>=1.0.0 <2.0.0')\"")
    terminal = (f"$ {check}\nnode:assert:90\n  throw new AssertionError(obj);\n  ^\n\n"
                "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n'>=1.0.0 <3.0.0' !== "
                "'>=1.0.0 <2.0.0'\n\n    at [eval]:1:88\n    at runScriptInThisContext (node:internal/vm:209:10)\n")
    right = ("```javascript\nconst replaceCaret = (comp) => {\n  return comp.replace(/\\^(\\d+)/, (_, M) => {\n"
             "    return `>=${M}.0.0 <${+M + 1}.0.0`\n  })\n}\nconsole.log(replaceCaret('^1'))\n```")
    script = scripted(monkeypatch, "The caret is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea",
                      "1", "1", "2", "1", right, *["no idea"] * 3)
    outcome = await node.turn(TurnRequest(
        root=str(repo), prompt="desugar('^1') gives <3.0.0: the caret range's upper bound is wrong. Fix it.",
        terminal=terminal, env={"PATH": os.environ.get("PATH", "")}, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert report.traced == 3  # replaceCaret, replaceTilde, desugar: isX never ran
    tokenizer = (await node.engine()).tokenizer
    asked = tokenizer.decode(script.requests[3]["ids"])
    assert "JavaScript developer" in asked and "Python" not in asked
    assert "[1] `replaceCaret` in lib/range.js (lines 3-7):\n```javascript\n" in asked
    assert asked.index("`desugar`") < asked.index("`replaceTilde`")  # "desugar" is the question's word too
    assert [p.split(" (")[0] for p in report.places] == ["replaceCaret"]
    assert all(r["grammar"].startswith('root ::= "```javascript\\n" "const replaceCaret = (comp) => {\\n"')
               for r in script.requests[7:11])
    # the rewrite alone (what the model wrote after the function is not laid in), over the function's own lines
    assert "+    return `>=${M}.0.0 <${+M + 1}.0.0`" in outcome.edits.diff and "console.log" not in outcome.edits.diff
    assert (repo / "lib/range.js").read_text() == RANGE_JS
    assert sorted(p.name for p in repo.iterdir()) == [".git", "lib"]  # the coverage was written elsewhere


LIB_JS = "const add = (a, b) => a + b + 1\nconst neg = (x) => -x\n\nmodule.exports = { add, neg }\n"
LIB_TEST_JS = ("const test = require('node:test')\nconst assert = require('node:assert')\n"
               "const { add, neg } = require('../lib')\n\n"
               "test('neg', () => { assert.strictEqual(neg(2), -2) })\n"
               "test('add', () => { assert.strictEqual(add(2, 3), 5) })\n")


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed")
async def test_a_change_that_passes_a_node_one_off_check_is_held_to_the_projects_own_tests(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """semver's caret task: the 1.5B's change passed the ``node -e`` check by taking ``parseRange``'s ``return``
    out, and was offered as verified. A change that passes a Node one-off check now runs the project's own
    ``npm test`` too: one that breaks a test that passed before is not verified, and names it."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, focused=False, rounds=0, reproduce=False))
    repo = make_repo(tmp_path / "repo", {
        "lib.js": LIB_JS, "test/lib.test.js": LIB_TEST_JS,
        "package.json": '{"name": "lib", "version": "1.0.0", "scripts": {"test": "node --test"}}\n'})
    check = "node -e \"const assert = require('assert'); assert.strictEqual(require('./lib').add(1, 1), 2)\""
    terminal = (f"$ {check}\nnode:assert:90\n  throw new AssertionError(obj);\n  ^\n\n"
                "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n3 !== 2\n")
    wrong = ("lib.js\n<<<<<<< SEARCH\nconst add = (a, b) => a + b + 1\nconst neg = (x) => -x\n=======\n"
             "const add = (a, b) => a + b\nconst neg = (x) => x\n>>>>>>> REPLACE\n")
    request = TurnRequest(root=str(repo), prompt="add(1, 1) gives 3. Fix it.", terminal=terminal,
                          env={"PATH": os.environ.get("PATH", "")}, verify=True)
    scripted(monkeypatch, "add adds one too many.\n\n" + wrong, *["no idea"] * 3)
    outcome = await node.turn(request)
    report = outcome.verification
    assert report is not None and report.status == "failed", report
    offered = report.candidates[report.chosen - 1]
    assert offered.outcome == "passed" and offered.broke == ("neg",), offered
    assert report.summary().startswith(f"not verified: `{check}` passed with the change, but it breaks neg, "
                                       "which passed before it"), report.summary()
    # the right change among them is offered, verified: it breaks nothing the project's tests hold
    right = "lib.js\n<<<<<<< SEARCH\nconst add = (a, b) => a + b + 1\n=======\nconst add = (a, b) => a + b\n>>>>>>> REPLACE\n"
    scripted(monkeypatch, "add adds one too many.\n\n" + wrong, right, "no idea", "no idea")
    again = await node.turn(msgspec.structs.replace(request, thread="again"))
    report = again.verification
    assert report is not None and report.status == "passed", report
    assert report.chosen == 2 and report.candidates[1].broke == () and report.candidates[0].broke == ("neg",)
    assert (repo / "lib.js").read_text() == LIB_JS


GREET = "const greet = (name) => `hello ${name}`\n\nmodule.exports = { greet }\n"
GREET_PACKAGE = '{"name": "greet", "version": "1.0.0", "scripts": {"test": "tap test/*.js"}}\n'
SHOUT_ASK = "Give greet an optional second argument, shout, that upper-cases the whole greeting."


def greet_block(new: str) -> str:
    return f"lib/greet.js\n<<<<<<< SEARCH\nconst greet = (name) => `hello ${{name}}`\n=======\n{new}\n>>>>>>> REPLACE\n"


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed")
async def test_a_javascript_project_whose_tests_cannot_run_is_checked_with_a_node_script_the_model_wrote(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """semver's edit tasks: ``npm test`` wants ``tap``, which is not installed, so the project's check cannot
    run. The model then writes a Node script of the change; it fails before the change (the shout is not
    there), so it is the check: the turn's own edit fails it, a sampled candidate passes, and that one is
    offered, said to be verified by a test the model wrote. The script lives in the scratch copy alone."""
    repo = make_repo(tmp_path / "repo", {"lib/greet.js": GREET, "package.json": GREET_PACKAGE})
    script_test = ("```javascript\nconst assert = require('assert')\nconst { greet } = require('./lib/greet')\n"
                   "assert.strictEqual(greet('bo'), 'hello bo')\nassert.strictEqual(greet('bo', true), 'HELLO BO')\n```")
    right = greet_block("const greet = (name, shout) => shout ? `hello ${name}`.toUpperCase() : `hello ${name}`")
    script = scripted(monkeypatch, "Add the flag.\n\n" + greet_block("const greet = (name, shout) => `hello ${name}`"),
                      script_test, *NO_TESTS[1:], right, "no idea", "no idea")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=SHOUT_ASK, env={"PATH": os.environ.get("PATH", "")},
                                          verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert (report.command, report.command_source) == ("node contenox-change.test.js", "written")
    assert report.command_detail.startswith("`npm test` could not run before any change: command not found")
    assert report.summary().startswith("verified by a test the model wrote for the change, not the project's: "
                                       "`node contenox-change.test.js` passed (1 of 4 candidates) (`npm test` could "
                                       "not run before any change: ")
    assert any(n.startswith("check command: `node contenox-change.test.js` (from a test the model wrote for the "
                            "change: `npm test` could not run before any change: ") for n in outcome.explain.notes)
    assert "greet('bo', true)" in report.reproduction and report.reproduction_path == "contenox-change.test.js"
    assert [c.outcome for c in report.candidates][:2] == ["failed", "passed"] and report.chosen == 2
    assert "toUpperCase()" in outcome.edits.diff and (repo / "lib/greet.js").read_text() == GREET
    assert sorted(p.name for p in repo.iterdir()) == [".git", "lib", "package.json"]
    asked = (await node.engine()).tokenizer.decode(script.requests[0]["ids"])
    # the script was asked for after the turn's answer, its require shown with the file the answer edited
    assert "one Node.js script" in asked and "(`require('./lib/greet')`)" in asked


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed")
async def test_node_scripts_written_for_the_change_are_the_check_together_and_half_of_them_passing_verifies(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """semver's ``satisfies`` task: the 1.5B's one script expected a throw the task never asked for, and the
    right answer was offered "not verified". Three scripts are written; one expects the greeting unchanged when
    shouting (wrong). All fail before the change; the turn's right answer passes two of three: verified, and the
    answer says the tests are the model's."""
    repo = make_repo(tmp_path / "repo", {"lib/greet.js": GREET, "package.json": GREET_PACKAGE})

    def script_of(*asserts: str) -> str:
        return ("```javascript\nconst assert = require('assert')\nconst { greet } = require('./lib/greet')\n"
                + "".join(f"assert.strictEqual({a})\n" for a in asserts) + "```")

    right = greet_block("const greet = (name, shout) => shout ? `hello ${name}`.toUpperCase() : `hello ${name}`")
    scripted(monkeypatch, "Add the flag.\n\n" + right, script_of("greet('bo', true), 'HELLO BO'"),
             script_of("greet('bo', true), 'hello bo'", "greet('x', false), 'hello X'"),
             script_of("greet('al', true), 'HELLO AL'", "greet('al'), 'hello al'"), "no idea", "no idea", "no idea")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=SHOUT_ASK, env={"PATH": os.environ.get("PATH", "")},
                                          verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1, report
    assert (report.command, report.command_source, report.reproductions) == ("node contenox-change.test.js",
                                                                               "written", 3)
    assert report.candidates[0].written_passed == 2 and report.candidates[0].outcome == "passed"
    assert report.summary().startswith("verified by tests the model wrote for the change, not the project's: "
                                       "`node contenox-change.test.js` passed for 2 of the 3 written")
    assert outcome.text.rstrip().endswith("`node contenox-change.test.js` passes in a scratch copy for 2 of the 3 "
                                          "written, each of which failed before it.")
    assert "Verified by tests the model wrote for the change, not the project's" in outcome.text
    assert sorted(p.name for p in repo.iterdir()) == [".git", "lib", "package.json"]


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed")
async def test_a_node_script_that_passes_before_the_change_is_not_used_and_the_skip_says_why(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"lib/greet.js": GREET, "package.json": GREET_PACKAGE})
    scripted(monkeypatch, "Add the flag.\n\n" + greet_block("const greet = (name, shout) => `hello ${name}`"),
             "```javascript\nconst assert = require('assert')\nassert.strictEqual(require('./lib/greet').greet('bo'), "
             "'hello bo')\n```", *NO_TESTS[1:])
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=SHOUT_ASK, env={"PATH": os.environ.get("PATH", "")},
                                          verify=True))
    report = outcome.verification
    assert report is not None and report.status == "skipped" and report.command == "npm test", report
    assert report.reproduction_note == ("the test written for the change (contenox-change.test.js) was not used: it "
                                        "passes before the change too (it tests nothing the change adds)")
    assert sorted(p.name for p in repo.iterdir()) == [".git", "lib", "package.json"]


CACHES = ("class Cache:\n    def __init__(self):\n        self.data = {}\n\n    def get(self, key):\n"
          "        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n\n\n"
          "class LRU(Cache):\n    def get(self, key):\n        value = self.data[key]\n        return value + 1\n\n\n"
          "class FIFO(Cache):\n    def get(self, key):\n        value = self.data[key]\n        return value + 1\n")


async def test_a_method_several_classes_define_is_rewritten_in_the_test_s_class(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three classes define ``get``; the test's object is an ``LRU``: the focused place is ``LRU.get`` and its
    rewrite replaces those lines (read by name, a rewrite of ``get`` resolved nowhere), not ``FIFO``'s twin; what
    the model wrote after the function is left out. The check's first run is not traced here (the trace would
    add ``__init__`` and ``put``, which the test ran, and a pick among them: the next tests' subject)."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, trace=False))
    repo = make_repo(tmp_path / "repo", {"caches.py": CACHES, "tests/test_caches.py": (
        "from caches import LRU\n\n\ndef test_get():\n    c = LRU()\n    c.put(1, 1)\n    assert c.get(1) == 1\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_caches.py\nF\n"
                "tests/test_caches.py:7: in test_get\n    assert c.get(1) == 1\nE   assert 2 == 1\n1 failed in 0.01s")
    rewrite = ("```python\n    def get(self, key):\n        value = self.data[key]\n        return value\n\n"
               "# usage (the model went on past the function: not part of the rewrite)\nprint(LRU().get(1))\n```")
    scripted(monkeypatch, "get adds one.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", rewrite, "no idea", "no idea", "no idea")
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_get fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [p.split(" (")[0] for p in report.places] == ["get"] and "caches.py:13-15" in report.places[0]
    (edit,) = outcome.edits.edits
    assert edit.new_text == CACHES.replace("        return value + 1\n\n\nclass FIFO", "        return value\n\n\nclass FIFO")
    assert report.changed == ("`LRU.get` in caches.py",) and (repo / "caches.py").read_text() == CACHES
    assert "        return value\n```" in outcome.text and "print(LRU()" not in outcome.text  # shown as applied
    # the turn's own prose reasoned about another change: the answer names the place the passing change is in
    assert outcome.text.startswith("The change is in `LRU.get` in caches.py:\n\n```python\n    def get(self, key):")
    assert "get adds one." not in outcome.text


async def test_the_places_are_tried_in_turn_until_one_passes(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The greedy pick's candidates all fail: the place most of the sampled picks named is drawn next (before
    the first found, which one pick named), and the round stops at its passing one (with three places allowed,
    the third is not drawn). No line is picked here (``lines = 0``: the next test's subject)."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, places=3,
                                                                                      lines=0))
    repo = make_repo(tmp_path / "repo", {"util.py": CHAIN, "tests/test_util.py": (
        "from util import total\n\n\ndef test_total():\n    assert total(1) == 3\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_total\n    assert total(1) == 3\nE   assert 1 == 3\n1 failed in 0.01s")
    script = scripted(monkeypatch, "The sum is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", "4", "3", "3", "1",
                      *["```python\ndef clamp(x):\n    return 0\n```"] * 4,
                      "```python\ndef shift(x):\n    return x + 1\n```", *["no idea"] * 3, *["no idea"] * 12)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="This test fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    asked = (await node.engine()).tokenizer.decode(script.requests[3]["ids"])
    assert "[3] `shift` in util.py" in asked and "[1] `total` in util.py" in asked
    assert [p.split(" (")[0] for p in report.places] == ["clamp", "shift"]  # the greedy pick, then the most voted
    assert "picked by the model of 4 found (1 of 4 picks)" in report.places[0]
    assert "picked by the model (2 of 4 picks)" in report.places[1]
    assert [f.split(" (")[0] for f in report.found] == ["total", "scale", "shift", "clamp"]  # in the order found
    assert "places found along the failing run: total (util.py:1-3), scale (util.py:6-8)" in "\n".join(
        outcome.explain.notes)
    assert [c.outcome for c in report.candidates if c.arm == "focused"] == ["failed"] * 4 + [
        "passed", "no_edit", "no_edit", "no_edit"]
    assert len(script.requests) == 15  # turn 4, the picks 4, two places of 4: the remaining places are not drawn
    assert all('"def shift(x):\\n"' in r["grammar"] for r in script.requests[11:15])
    assert "+    return x + 1" in outcome.edits.diff and (repo / "util.py").read_text() == CHAIN


DISPATCH = ("def double(x):\n    return x * 3\n\n\nOPS = {\"double\": double}\n\n\n"
            "def run(op, x):\n    return OPS[op](x)\n")


async def test_a_function_only_the_trace_of_the_failing_run_reaches_is_a_place(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` reaches ``double`` through a table, which neither the traceback nor reading the test names: the
    check's first run is traced, and ``double``, which the failing test ran two calls below it, is the next
    place tried; its rewrite passes."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, lines=0))
    repo = make_repo(tmp_path / "repo", {"util.py": DISPATCH, "tests/test_util.py": (
        "from util import run\n\n\ndef test_run():\n    assert run(\"double\", 2) == 4\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_run\n    assert run(\"double\", 2) == 4\nE   assert 6 == 4\n"
                "1 failed in 0.01s")
    script = scripted(monkeypatch, "run is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", *["no idea"] * 4,
                      "```python\ndef double(x):\n    return x * 2\n```", *["no idea"] * 3)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_run fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert [p.split(" (")[0] for p in report.places] == ["run", "double"]
    assert "util.py:1-2, ran in the failing test, 2 calls below the test" in report.places[1]
    assert all('"def double(x):\\n"' in r["grammar"] for r in script.requests[7:11])
    assert "+    return x * 2" in outcome.edits.diff and (repo / "util.py").read_text() == DISPATCH
    assert sorted(p.name for p in repo.iterdir()) == [".git", "tests", "util.py"]  # the trace left nothing here
    assert report.traced == 2 and ("the check's first run traced: 2 function(s) of the workspace ran in the "
                                   "failing test(s)") in outcome.explain.notes


LIMIT = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return lo\n    return x\n\n\n"
         "def widen(x):\n    return x * 1\n\n\ndef limit(x):\n    return clamp(widen(x), 0, 10)\n")


async def test_the_failing_tests_file_run_traced_puts_the_line_only_failing_tests_reach_first(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check names one test; its own trace ranks ``limit``, ``clamp`` and ``widen`` alike (the one test ran
    them all). The test's whole file is then run traced (consented with the turn): ``clamp``'s line 5 runs only
    in the failing test, so ``clamp`` is tried first, before the model's pick (``limit``, which the passing
    ``test_mid`` runs too), and its rewrite passes."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, places=1))
    repo = make_repo(tmp_path / "repo", {"calc.py": LIMIT, "tests/test_calc.py": (
        "from calc import clamp, limit\n\n\ndef test_low():\n    assert clamp(-1, 0, 10) == 0\n\n\n"
        "def test_mid():\n    assert limit(5) == 5\n\n\ndef test_high():\n    assert limit(11) == 10\n")})
    check = "python -m pytest -q -p no:cacheprovider --tb=short tests/test_calc.py::test_high"
    terminal = (f"$ {check}\nF\ntests/test_calc.py:13: in test_high\n    assert limit(11) == 10\n"
                "E   assert 0 == 10\n1 failed in 0.01s")
    right = ("```python\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n"
             "        return hi\n    return x\n```")
    script = scripted(monkeypatch, "limit is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", "2", "2", "2", "3", right,
                      *["no idea"] * 3)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_high fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert report.spectrum.startswith("`python -m pytest -q -p no:cacheprovider --tb=short tests/test_calc.py`: "
                                      "failed (exit 1) in ") and report.spectrum.endswith(", 1 of 3 tests failing")
    assert ("the failing tests' files run traced (passing tests beside failing ones): " + report.spectrum
            ) in outcome.explain.notes
    assert [p.split(" (")[0] for p in report.places] == ["clamp"]
    assert "suspicion 1.00 by the trace" in report.places[0] and "picked by the model" not in report.places[0]
    asked = (await node.engine()).tokenizer.decode(script.requests[3]["ids"])
    # offered most suspicious first; the model picked limit, which the trace ranks below clamp
    assert "[1] `clamp` in calc.py" in asked and "[2] `limit` in calc.py" in asked
    assert all('"def clamp(x, lo, hi):\\n"' in r["grammar"] for r in script.requests[7:11])
    assert "+        return hi" in outcome.edits.diff and (repo / "calc.py").read_text() == LIMIT
    assert sorted(p.name for p in repo.iterdir()) == [".git", "calc.py", "tests"]


SCALE = "def scale(x):\n    \"\"\"x scaled.\"\"\"\n    # the factor\n    y = x * 2\n    return y + 1\n"


async def test_the_model_picks_a_line_and_the_line_alone_is_redrawn_until_it_changes(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The function rewrites come back unchanged (one with a comment changed): the model then picks the line to change among the function's
    code lines (its numbers in the file; not the docstring, the comment), and each picked line in turn (the
    greedy pick first, then by votes) is drawn under a grammar that admits no copy of it: the lines before it
    are written into the answer (prefilled, not decoded), the model draws the line and the one after it, and
    the rest of the function is added to what it drew."""
    repo = make_repo(tmp_path / "repo", {"util.py": SCALE, "tests/test_util.py": (
        "from util import scale\n\n\ndef test_scale():\n    assert scale(1) == 2\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_scale\n    assert scale(1) == 2\nE   assert 3 == 2\n1 failed in 0.01s")
    copy = f"```python\n{SCALE}```"
    fixed_5 = "    return y\n```"  # line 5, the last: drawn to the closing fence
    wrong_4 = "    y = x * 3\n    return y + 1\n"  # line 4, then line 5 as it is, which ends the draw
    recommented = copy.replace("# the factor", "# the factor, corrected")  # a comment changed: still a copy
    script = scripted(monkeypatch, "scale is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", *[copy] * 3, recommented,
                      "4", "5", "5", "4", *[wrong_4] * 4, wrong_4, fixed_5, fixed_5,
                      "    return y + 1\n```")  # a copy (the grammar lets one through a non-ASCII character)
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, places=1))
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_scale fails. Fix it.", terminal=terminal,
                                          env=env, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    lines = [c for c in report.candidates if c.arm == "line"]
    assert [(c.line, c.outcome) for c in lines] == [(4, "failed")] * 4 + [(5, "failed"), (5, "passed"),
                                                                            (5, "passed"), (5, "no_edit")]
    assert [c.outcome for c in report.candidates if c.arm == "focused"] == ["no_edit"] * 4
    pick = script.requests[7]
    assert pick["grammar"] == 'root ::= "5" | "4" | "1"' and pick["sampling"] is None  # code lines, by number
    tokenizer = (await node.engine()).tokenizer
    asked = tokenizer.decode(pick["ids"])
    assert "4 |     y = x * 2" in asked and "Which line of `scale` is wrong?" in asked
    first, second = script.requests[11], script.requests[15]  # the greedy pick (4) first, then 5 (two votes)
    # the answer is begun with the lines before the picked one: in the prompt, not in the grammar
    assert tokenizer.decode(first["ids"]).endswith('.\nassistant\n```python\ndef scale(x):\n'
                                                   '    """x scaled."""\n    # the factor\n')
    assert first["grammar"].startswith('root ::= "    " d0 "\\n" more{0,2} "    return y + 1\\n"\n')
    assert 'd0 ::= [^y \\t\\n] rest | "y" d1' in first["grammar"]  # the picked line: anything but itself
    assert second["grammar"].startswith('root ::= "    " d0 "\\n" more{0,2} "```"\n')  # the last line
    assert tokenizer.decode(second["ids"]).endswith("    y = x * 2\n")
    assert "Line 5 of `scale` is what makes the check fail" in tokenizer.decode(second["ids"])
    # one test, no passing one: the trace tells no line from another (none is said suspicious); the picks order them
    assert "lines to change: 4 (2 of 4 picks), 5 (2 of 4 picks)" in report.places[0]
    assert "+    return y\n" in outcome.edits.diff and (repo / "util.py").read_text() == SCALE
    assert "-    y = x * 2" not in outcome.edits.diff  # the rest of the function was kept as it is
    assert any("line prompt (line 5)" in n for n in outcome.explain.notes)


BRANCHED = "def scale(x):\n    \"\"\"x scaled.\"\"\"\n    if x < 0:\n        return 0\n    y = x * 2\n    return y + 1\n"


async def test_the_line_to_change_is_picked_among_the_lines_the_failing_run_ran(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failing test calls ``scale(1)``: the trace saw lines 3, 5 and 6 run, never the ``return 0`` of the
    negative branch, which cannot have made it fail; the model picks among those (and the def line, whose
    defaults ran at import), and the picked line's candidate passes."""
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(node.config.verify, places=1,
                                                                                      lines=1))
    repo = make_repo(tmp_path / "repo", {"util.py": BRANCHED, "tests/test_util.py": (
        "from util import scale\n\n\ndef test_scale():\n    assert scale(1) == 2\n")})
    terminal = ("$ python -m pytest -q -p no:cacheprovider --tb=short tests/test_util.py\nF\n"
                "tests/test_util.py:5: in test_scale\n    assert scale(1) == 2\nE   assert 3 == 2\n1 failed in 0.01s")
    copy = f"```python\n{BRANCHED}```"
    script = scripted(monkeypatch, "scale is off.", EDIT_STEP_NONE, "no idea", "no idea", "no idea", *[copy] * 4,
                      "5", "5", "5", "5", "    y = x * 1\n    return y + 1\n", *["no idea"] * 3)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="test_scale fails. Fix it.", terminal=terminal,
                                          env={"PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                                        os.environ.get("PATH", "")])}, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    assert script.requests[7]["grammar"] == 'root ::= "6" | "5" | "3" | "1"'  # not 4: it never ran
    assert "+    y = x * 1" in outcome.edits.diff and (repo / "util.py").read_text() == BRANCHED


async def test_a_failing_script_the_workspace_lacks_is_not_run_and_the_skip_says_why(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal holds the user's own ``python repro.py`` (kept outside the repository): it would fail with
    every candidate alike, so it is not the check; with no other command, verification is skipped, saying so."""
    repo = make_repo(tmp_path / "repo", {"util.py": UTIL})
    scripted(monkeypatch, WRONG)
    terminal = ('$ python repro.py\nTraceback (most recent call last):\n  File "/home/me/repro.py", line 3, in '
                "<module>\n    assert helper(1) == 2\nAssertionError")
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=ASK, terminal=terminal, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "skipped", report
    assert report.reason == ("no check command: the failing run's `python repro.py` was not used: repro.py is not in "
                             "the workspace, no [verify] command, and no test runner detected")
    assert (repo / "util.py").read_text() == UTIL


async def test_consent_is_asked_once_and_remembered(node: Node, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    scripted(monkeypatch, WRONG, WRONG)
    nobody = await node.turn(_request(repo))
    assert nobody.verification is not None and nobody.verification.status == "skipped"
    assert "needs your consent" in nobody.verification.reason

    class Asker:
        def __init__(self, answer: bool) -> None:
            self.answer, self.asked = answer, 0
            self.scopes: list[str] = []

        async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None:
            self.asked += 1
            self.scopes.append(scope)
            return self.answer

        async def run_command(self, call_id: str, command: str, cwd: str) -> Any:
            raise AssertionError("no agent command in a change turn")

    yes = Asker(True)
    scripted(monkeypatch, WRONG, RIGHT, WRONG, WRONG)
    allowed = await node.turn(_request(repo), commands=yes)
    # asked once: the question for the check says it covers the project's other tests run the same way, so the
    # whole suite a passing candidate is held to runs on that answer
    assert yes.asked == 1 and allowed.verification is not None and allowed.verification.status == "passed"
    assert "`python -m pytest -q -p no:cacheprovider` with other test files" in yes.scopes[0], yes.scopes
    assert allowed.verification.suite.startswith("`python -m pytest -q -p no:cacheprovider`"), allowed.verification
    no = Asker(False)
    scripted(monkeypatch, WRONG, RIGHT, WRONG, WRONG)
    again = await node.turn(_request(repo), commands=no)
    assert no.asked == 0 and again.verification is not None and again.verification.status == "passed"
    scripted(monkeypatch, WRONG)
    refused = await node.turn(_request(repo, verify=False), commands=no)
    assert refused.verification is not None and refused.verification.status == "skipped"


async def test_a_hanging_check_is_stopped_and_named(node: Node, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, check="sleep 600")
    node.config = msgspec.structs.replace(node.config, verify=msgspec.structs.replace(
        node.config.verify, timeout_s=1.0, rounds=0))
    scripted(monkeypatch, WRONG, RIGHT, WRONG, WRONG)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=ASK, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "failed"
    assert report.command_source == "workspace"
    assert {c.outcome for c in report.candidates} == {"timeout"} and report.baseline == "timeout"
    assert all(c.check_s < 120 for c in report.candidates)  # stopped at verify.timeout_s, far from 600 s


async def test_cancelling_a_verifying_turn_stops_its_check(node: Node, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, check="sleep 600")
    scripted(monkeypatch, WRONG, RIGHT, WRONG, WRONG)
    checking = asyncio.Event()

    async def on_event(event: TurnEvent) -> None:
        if event.kind == "tool" and event.tool is not None and event.tool.status == "in_progress":
            checking.set()

    turn = asyncio.ensure_future(node.turn(TurnRequest(root=str(repo), prompt=ASK, verify=True), on_event))
    await asyncio.wait_for(checking.wait(), 60)
    started = asyncio.get_running_loop().time()
    turn.cancel()
    with pytest.raises(Cancelled):
        await turn
    assert asyncio.get_running_loop().time() - started < 120  # the check stopped, far from its 600 s
    assert not list((node.config.state_dir / "workspaces").glob("*/scratch"))


async def test_a_check_that_passed_before_the_change_only_guards_the_answer(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Existing tests that already pass cannot tell a right change from a harmless wrong one: the turn's own
    answer is checked (no sampled candidate could beat it by passing), and the report says what was shown."""
    repo = make_repo(tmp_path / "repo", {"util.py": "def helper(x):\n    return x + 1\n", "tests/test_util.py": TEST})
    docstring = 'util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef helper(x):\n    """Add one."""\n>>>>>>> REPLACE\n'
    script = scripted(monkeypatch, docstring, *NO_TESTS)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Add a docstring to helper.", verify=True,
                                          env=_request(repo).env))
    report = outcome.verification
    assert report is not None and (report.status, report.baseline, report.chosen) == ("passed", "passed", 1)
    assert [c.outcome for c in report.candidates] == ["passed"]
    # the tests asked for (the greedy one first), no candidate
    assert len(script.requests) == DRAWN and script.requests[0]["sampling"] is None
    assert report.reproduction_note.startswith(f"asked for {DRAWN} tests of the change, the model wrote none that "
                                               "parses")
    assert report.command == "python -m pytest -q -x tests/test_util.py" and report.command_source == "detected"
    assert "nothing broke, but the check cannot tell" in report.summary()
    assert report.verdict() == "" and "Verified:" not in outcome.text  # it made nothing pass that failed
    # an answer that breaks the passing check is repaired; the round's greedy answer wins over sampled ones
    breaking = "util.py\n<<<<<<< SEARCH\n    return x + 1\n=======\n    return x + 2\n>>>>>>> REPLACE\n"
    script = scripted(monkeypatch, breaking, *NO_TESTS, docstring, docstring.replace("Add one.", "Plus one."), breaking,
                      docstring.replace("Add one.", "One more."))
    again = await node.turn(TurnRequest(root=str(repo), prompt="Add a docstring to helper.", verify=True,
                                        env=_request(repo).env))
    report = again.verification
    assert report is not None and report.status == "passed" and report.rounds == 1
    assert report.chosen == 2 and not report.candidates[1].sampled
    assert "not verified: the change breaks" not in report.summary()


async def test_a_change_that_reads_a_name_nothing_defines_is_not_checked_and_the_repair_is_told_the_name(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B's ``rename_key`` read ``line_out``, a local of the function it copied, under tests that passed
    before and after it, and was offered as checked: such a change raises NameError where it runs. It is not
    checked; the repair round is told the name and its line, and the repaired change is the one offered."""
    source = "def helper(x):\n    return x + 1\n\n\ndef twice(x):\n    y = x * 2\n    return y\n"
    repo = make_repo(tmp_path / "repo", {"util.py": source, "tests/test_util.py": TEST})
    add = "util.py\n<<<<<<< SEARCH\n    y = x * 2\n    return y\n=======\n    y = x * 2\n    return y\n\n\n" \
          "def thrice(x):\n    return {}\n>>>>>>> REPLACE\n"
    unbound, right = add.format("y + x"), add.format("x * 3")
    script = scripted(monkeypatch, unbound, *NO_TESTS, right, right, unbound, right)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Add thrice(x) after twice: three times x.",
                                          verify=True, env=_request(repo).env))
    report = outcome.verification
    assert report is not None and (report.status, report.baseline, report.rounds) == ("passed", "passed", 1)
    first = report.candidates[0]
    assert (first.outcome, first.check_s) == ("undefined_name", 0.0)
    assert first.output_tail == ("util.py, line 11: undefined name 'y' (not defined or imported where it is read)\n"
                                 "    return y + x")
    assert report.chosen == 2 and report.candidates[1].outcome == "passed"
    repair = (await node.engine()).tokenizer.decode(script.requests[DRAWN]["ids"])
    assert "it reads a name that nothing defines or imports where it is read" in repair
    assert "undefined name 'y'" in repair and "    return y + x" in repair
    notes = "\n".join(outcome.explain.notes)
    assert "candidate 1 (round 0, greedy, " in notes and "reads a name nothing defines, not checked: util.py, line 11" in notes
    assert (repo / "util.py").read_text() == source


async def test_a_change_that_leaves_a_function_ending_without_its_value_is_not_checked_and_the_repair_is_told(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B's three candidates that passed semver's one-off caret check each took ``return result`` out of
    ``parseRange`` (the check's second call was served by the cache the first one filled). A change that leaves a
    function returning a value on some paths and reaching its end on others (ESLint's consistent-return) is not
    checked; the repair is told the function, and the change that keeps the return is the one offered."""
    source = ("calls = []\n\n\ndef record(x):\n    if x is None:\n        return None\n    calls.append(x - 1)\n"
              "    return calls[-1]\n")
    test = "from util import calls, record\n\n\ndef test_record():\n    record(3)\n    assert calls == [4]\n"
    repo = make_repo(tmp_path / "repo", {"util.py": source, "tests/test_util.py": test})
    terminal = ("$ python -m pytest -q -p no:cacheprovider tests/test_util.py\nF\n"
                "FAILED tests/test_util.py::test_record - assert [2] == [4]\n1 failed in 0.01s")
    old = "    calls.append(x - 1)\n    return calls[-1]\n"
    drops = f"util.py\n<<<<<<< SEARCH\n{old}=======\n    calls.append(x + 1)\n>>>>>>> REPLACE\n"
    keeps = f"util.py\n<<<<<<< SEARCH\n{old}=======\n    calls.append(x + 1)\n    return calls[-1]\n>>>>>>> REPLACE\n"
    ask = "test_record fails: record(3) should record 4. Fix it."
    scripted(monkeypatch, drops, drops, drops, drops, keeps, keeps, keeps, keeps)
    outcome = await node.turn(_request(repo, prompt=ask, terminal=terminal, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed", report
    first = report.candidates[0]
    assert (first.outcome, first.check_s) == ("drops_return", 0.0)
    assert first.output_tail == ("util.py: `record` (line 4) returns a value on some paths and now reaches its end "
                                 "without one")
    assert report.candidates[report.chosen - 1].outcome == "passed" and "return calls[-1]" in outcome.text
    assert "+    return calls[-1]" not in outcome.edits.diff and "-    return calls[-1]" not in outcome.edits.diff
    notes = "\n".join(outcome.explain.notes)
    assert ("leaves a function that returns a value able to end without one, not checked: util.py: `record`"
            in notes)
    assert (repo / "util.py").read_text() == source
    # none that keeps it: the repair rounds are told the function; the closest is offered, said not checked
    script = scripted(monkeypatch, *(drops,) * 60)
    again = await node.turn(_request(repo, prompt=ask, terminal=terminal, verify=True))
    report = again.verification
    assert report is not None and report.status == "failed" and report.chosen == 1 and report.rounds >= 1, report
    repairs = [text for r in script.requests if "I applied that edit" in (
        text := (await node.engine()).tokenizer.decode(r["ids"]))]
    assert repairs and "it leaves a function that returns a value able to reach its end without returning one" in \
        repairs[-1] and "`record` (line 4)" in repairs[-1]
    assert report.summary().startswith("not verified: the change offered was not checked: it leaves a function "
                                       "that returns a value able to end without one (util.py: `record` (line 4)")


async def test_a_harmless_change_that_passes_a_guard_without_the_definition_asked_for_does_not_end_the_search(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B's repair of its `rename_key` (which read a name nothing defined) held a one-line change elsewhere
    that passed the check, which passed before too, and ended the search: offered, it added no `rename_key`. Such
    a pass does not end the search, the change that adds the definition ranks before it (the one repaired), and
    when none does both, the closest is offered with why it was not checked."""
    source = "def helper(x):\n    return x + 1\n\n\ndef twice(x):\n    y = x * 2\n    return y\n"
    repo = make_repo(tmp_path / "repo", {"util.py": source, "tests/test_util.py": TEST})
    add = "util.py\n<<<<<<< SEARCH\n    y = x * 2\n    return y\n=======\n    y = x * 2\n    return y\n\n\n" \
          "def thrice(x):\n    return {}\n>>>>>>> REPLACE\n"
    unbound, right = add.format("y + x"), add.format("x * 3")
    harmless = 'util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef helper(x):\n    """One more."""\n>>>>>>> REPLACE\n'
    ask = "Add thrice(x) after twice: three times x."
    script = scripted(monkeypatch, unbound, *NO_TESTS, unbound, harmless, unbound, harmless, right, unbound, unbound,
                      unbound)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=ask, verify=True, env=_request(repo).env))
    report = outcome.verification
    assert report is not None and (report.status, report.rounds) == ("passed", 2), report
    assert [c.outcome for c in report.candidates] == ["undefined_name", "undefined_name", "passed", "undefined_name",
                                                      "passed", "passed", "undefined_name", "undefined_name",
                                                      "undefined_name"]
    assert report.chosen == 6 and "+def thrice(x):" in outcome.edits.diff and "One more" not in outcome.edits.diff
    assert len(script.requests) == DRAWN + 8
    # none that adds it passes: the closest that adds it is offered, said not checked
    scripted(monkeypatch, unbound, *NO_TESTS, unbound, harmless, unbound, harmless, unbound, harmless, harmless, unbound)
    again = await node.turn(TurnRequest(root=str(repo), prompt=ask, verify=True, env=_request(repo).env))
    report = again.verification
    assert report is not None and report.status == "failed" and report.chosen == 1
    assert report.summary().startswith("not verified: the change offered was not checked: it reads a name nothing "
                                       "defines (util.py, line 11: undefined name 'y' (not defined or imported where "
                                       "it is read)); of 9 candidates, none that passed `python -m pytest -q -x "
                                       "tests/test_util.py` makes the change asked for")
    assert "+def thrice(x):" in again.edits.diff and (repo / "util.py").read_text() == source


async def test_a_grammar_candidate_that_changes_nothing_is_drawn_again(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    unchanged = block("x - 1")  # SEARCH copied as its replacement: no change
    script = scripted(monkeypatch, WRONG, unchanged, WRONG, WRONG, RIGHT)
    outcome = await node.turn(_request(repo, verify=True))
    report = outcome.verification
    assert report is not None and report.status == "passed"
    assert len(script.requests) == 4  # three sampled, then the unchanged one again
    seeds = [r["sampling"][2] for r in script.requests]
    assert seeds[3] == seeds[0] + 500 and script.requests[3]["grammar"] == script.requests[0]["grammar"]
    assert [c.outcome for c in report.candidates][:4] == ["failed", "passed", "failed", "failed"]


FIX = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper(x):\n-    return x - 1\n+    return x + 1\n")
CHECK = "python -m pytest -q -p no:cacheprovider tests/test_util.py"


async def test_an_agent_turn_checks_its_edit_in_the_scratch_copy_under_the_same_consent(
        tmp_path: Path, fim_model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool loop and verified fixes share the scratch copy, the consent and the command runner: a command
    the model runs after proposing an edit tests that edit in the scratch copy (asked once, as a check command
    is), never the user's files; the edit it proposed is then verified with the remembered consent (and the whole
    suite it is held to once it passed, asked once on its own)."""
    from contenox.node.contract import CommandResult
    from support.agent_kit import call

    home = certified_home(tmp_path / "home", fim_model)  # certified: the turn is an agent turn
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    repo = _repo(tmp_path)
    script = scripted(monkeypatch, call("run_command", command=CHECK), call("propose_edit", path="util.py", diff=FIX),
                      call("run_command", command=CHECK), "helper now adds one; the test passes.",
                      "I am not sure.", "I am not sure.", "I am not sure.")

    class Client:
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.terminal: list[str] = []

        async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None:
            self.asked.append(command)
            return True

        async def run_command(self, call_id: str, command: str, cwd: str) -> CommandResult:
            self.terminal.append(command)  # the user's terminal, the files as they are: the test fails
            return CommandResult(ran=True, exit_code=1, output="F\n1 failed in 0.01s")

    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    client = Client()
    config = load_config(home)
    node = Node(config)
    try:
        outcome = await node.turn(_request(repo), on_event, commands=client)
    finally:
        await node.close()
    # before any edit: the client's terminal; after the edit: the scratch copy, with the edit, asked once (the whole
    # suite the verified edit is held to after it passed is covered by that answer: the same runner and options)
    assert client.terminal == [CHECK] and client.asked == [CHECK]
    ended = [e.tool for e in events if e.kind == "tool" and e.tool is not None and e.tool.status != "in_progress"]
    scratch_run = next(t for t in ended if "scratch copy" in t.title)
    assert scratch_run.status == "completed" and scratch_run.title.endswith("(exit code 0)"), scratch_run
    assert "1 passed" in scratch_run.output and "the user's files are unchanged" in scratch_run.output
    assert outcome.tool_steps == 3 and outcome.text.startswith("helper now adds one; the test passes.\n\nVerified: ")
    # the agent's edit verified: the same command, the consent remembered (not asked again)
    report = outcome.verification
    assert report is not None and report.status == "passed" and report.chosen == 1, report
    assert report.command == CHECK and report.candidates[0].files == ("util.py",)
    # sampled candidates drawn after the steps (they saw the results), as one group
    assert len(script.requests) == 3 and all(r["ids"] == script.prompts[3] for r in script.requests)
    [edit] = outcome.edits.edits
    assert edit.path == "util.py" and edit.new_text == UTIL.replace("x - 1", "x + 1")
    assert (repo / "util.py").read_text() == UTIL and git(repo, "status", "--porcelain") == ""
    assert (config.state_dir / "workspaces").is_dir() and not list((config.state_dir / "workspaces").glob("*/scratch"))


async def test_an_edit_written_to_a_question_about_how_the_code_works_is_offered_unchecked_with_its_prose(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The question asks how the code works, not for a change: an edit the answer writes anyway is not verified (no
    check runs, no candidate replaces the explanation), and explain-context says so."""
    repo = _repo(tmp_path)
    answer = "helper subtracts one from its argument.\n\n" + block("x + 1")
    script = scripted(monkeypatch, answer)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="How does helper work? Walk me through it.",
                                          verify=True, env=_request(repo).env))
    assert outcome.verification is None and len(script.prompts) == 1 and not script.requests
    assert outcome.text == answer and [e.path for e in outcome.edits.edits] == ["util.py"]
    assert ("not verified: the question asks to see or to be told how the code works, not for a change; the edit "
            "the answer wrote anyway is offered as written, unchecked") in outcome.explain.notes
    assert (repo / "util.py").read_text() == UTIL


async def test_a_how_it_works_answer_is_followed_by_the_calls_read_from_the_source(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"How does outer() get its value?": after the answer, the calls `outer` makes, read from the source and marked
    as the node's, streamed like the rest and named in explain-context; the citations checked are the model's;
    a question that asks no how, or planner.answer_calls = 0, adds none."""
    repo = make_repo(tmp_path / "repo", {"calc.py": "def outer(x):\n    return inner(x) + 1\n\n\n"
                                                    "def inner(x):\n    return scale(x) * 2\n\n\n"
                                                    "def scale(x):\n    return x\n"})
    answer = "It adds one to what another function returns."
    scripted(monkeypatch, answer)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    ask = "How does outer() get its value? Walk me through the calls."
    outcome = await node.turn(TurnRequest(root=str(repo), prompt=ask), on_event)
    section = ("The calls `outer` makes, read from the source by Contenox (not run):\n\n```text\n"
               "outer (calc.py:1)\n  -> inner (calc.py:5)\n    -> scale (calc.py:9)\n```")
    assert outcome.text == f"{answer}\n\n{section}"
    assert [e.text for e in events if e.kind == "chunk"][-1] == f"\n\n{section}"
    assert any(note.startswith("calls: the calls outer makes, read from the source (3 lines, at most "
                               "planner.answer_calls = 30)") for note in outcome.explain.notes)
    assert outcome.explain.citations is not None and outcome.explain.citations.files_real == ()
    scripted(monkeypatch, answer)
    assert (await node.turn(TurnRequest(root=str(repo), prompt="Where is outer() used?"))).text == answer
    node.config = msgspec.structs.replace(node.config, planner=msgspec.structs.replace(node.config.planner,
                                                                                         answer_calls=0))
    scripted(monkeypatch, answer)
    assert (await node.turn(TurnRequest(root=str(repo), prompt=ask))).text == answer


async def test_a_trace_question_s_verified_fix_is_followed_by_the_calls_it_asked_to_trace(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"Trace the test down to the code that computes it" over a failing run: the turn verifies (the fix offered is
    the checked one) and the trace asked for follows the verdict, read from the user's source."""
    repo = _repo(tmp_path)
    scripted(monkeypatch, WRONG, RIGHT, "I am not sure what to change.", WRONG)
    ask = "test_helper fails: helper(1) should be 2. Trace the test down to the code that computes it."
    outcome = await node.turn(_request(repo, verify=True, prompt=ask))
    assert outcome.verification is not None and outcome.verification.status == "passed"
    section = ("The calls `test_helper` makes, read from the source by Contenox (not run):\n\n```text\n"
               "test_helper (tests/test_util.py:4)\n  -> helper (util.py:1)\n```")
    assert outcome.text.endswith(outcome.verification.verdict() + "\n\n" + section)
    assert [e.path for e in outcome.edits.edits] == ["util.py"] and "+    return x + 1" in outcome.edits.diff


async def test_a_move_question_is_answered_with_the_node_s_move_said_in_the_answer(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"Move src/pkg/lists.py into src/pkg/text/": the model writes no edit block, the node makes the move (the old
    file deleted, the new one created, the imports following), no edit step is asked for, and the answer says what
    the offered change holds, unverified (no check command) as well; the user's files stay as they were."""
    files = {"src/pkg/__init__.py": "", "src/pkg/util.py": "X = 1\n", "src/pkg/lists.py": "from .util import X\n",
             "app.py": "from pkg.lists import X\n"}
    repo = make_repo(tmp_path / "repo", files)
    answer = "Moving it is fine; its imports must follow."
    script = scripted(monkeypatch, answer)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Move src/pkg/lists.py into src/pkg/text/."))
    assert len(script.prompts) == 1  # no edit step: the change needed no model
    assert {e.path: e.new_text for e in outcome.edits.edits} == {
        "src/pkg/lists.py": None, "src/pkg/text/lists.py": "from ..util import X\n",
        "app.py": "from pkg.text.lists import X\n"}
    assert outcome.verification is not None and outcome.verification.status == "skipped"
    assert outcome.text == (f"{answer}\n\nBeyond the edit blocks, the offered change also has: file src/pkg/lists.py "
                            "moved to src/pkg/text/lists.py, as the question asks: 2 import(s) follow: "
                            "src/pkg/text/lists.py (1), app.py (1).")
    assert all((repo / path).read_text() == text for path, text in files.items())
    assert not (repo / "src/pkg/text").exists()


async def test_names_the_answer_gave_without_their_file_are_located_after_it(
        node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer names `helper()` and `test_helper` but no file: one sentence after it, marked as the node's, gives
    where each is defined; streamed like the rest, named in explain-context; off in the config, nothing is added."""
    repo = _repo(tmp_path)
    answer = "`test_helper` calls `helper()`, which subtracts one."
    scripted(monkeypatch, answer)
    events: list[TurnEvent] = []

    async def on_event(event: TurnEvent) -> None:
        events.append(event)

    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Where is helper used?"), on_event)
    sentence = ("Where the names above are defined (found by Contenox): `test_helper` (tests/test_util.py:4), "
                "`helper` (util.py:1).")
    assert outcome.text == f"{answer}\n\n{sentence}"
    assert [e.text for e in events if e.kind == "chunk"][-1] == f"\n\n{sentence}"
    assert ("locations: the answer named 2 definition(s) without their files; where each is defined was added after "
            "it (planner.locations)") in outcome.explain.notes
    # the citations checked are the model's: the sentence's files are the node's facts, not the answer's claims
    assert outcome.explain.citations is not None and outcome.explain.citations.files_real == ()
    node.config = msgspec.structs.replace(node.config, planner=msgspec.structs.replace(node.config.planner,
                                                                                         locations=False))
    scripted(monkeypatch, answer)
    assert (await node.turn(TurnRequest(root=str(repo), prompt="Where is helper used?"))).text == answer
