"""The pieces of a verified turn that need no model: when a turn verifies, the prose an offered answer keeps, and
the first check's trace giving way to the check's own time limit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from contenox.answer.edits import ProposedEdit, ProposedEdits
from contenox.answer.questions import asks_test_change
from contenox.config import VerifyConfig
from contenox.node.contract import TurnRequest
from contenox.node.verifying import Draft, VerifyJob, asks_for_change, asks_to_edit, strip_edit_blocks
from contenox.verify import CheckCommand, ConsentStore
from support.gitrepo import make_repo

EDIT = ProposedEdits(edits=(ProposedEdit(path="a.py", old_text="x = 1\n", new_text="x = 2\n", diff="d", blocks=1),))


def test_when_a_turn_verifies() -> None:
    # the answer proposes a change: verified, unless the question only asks to see it or how the code works
    assert asks_for_change("The cache grows without bound.", EDIT)
    for question in ("How is the cache keyed?", "Where is the timestamp checked?",
                     "If a variable is set in my shell, does loading the .env overwrite it?",  # yes or no: to be told
                     "Is range parsing cached? Where, keyed on what?",
                     "Walk me through what happens between load_dotenv() and os.environ being updated.",
                     "How does parse_duration decide whether to return a timedelta? Walk me through the modules."):
        assert not asks_for_change(question, EDIT), question
    # asked over a failing run, the same kind of question is about the failure: its answer's edit is verified
    trace = "These cases come back with error=True. Trace from the test into the parser: which step stopped?"
    assert not asks_for_change(trace, EDIT) and asks_for_change(trace, EDIT, terminal="$ pytest\n1 failed")
    # and verifies though its answer wrote no edit: it speaks of the failure ("error=True") over the failing run
    assert asks_for_change(trace, ProposedEdits(), terminal="$ pytest\n1 failed")
    assert not asks_for_change(trace, ProposedEdits())
    assert not asks_for_change("Which step reads the key?", ProposedEdits(), terminal="$ pytest\n1 failed")
    for question in ("Move helper from util.py to core.py.", "How does it work? Then give me the diff."):
        assert asks_for_change(question, EDIT), question
    for question in ("Fix the parser.", "Rename foo to bar", "Where is the bug?", "test_x fails: why?",
                     "Importing it crashes with the trace below", "Give me the diff.", "It returns the wrong day."):
        assert asks_for_change(question, ProposedEdits()), question
    for question in ("How is the cache keyed?", "Walk me through the modules involved.", "Which key signs values?"):
        assert not asks_for_change(question, ProposedEdits()), question
    # a question about where to add something asks to be told where: its answer's edit is offered as written
    where = ("date_isoformat and duration_isoformat take format strings like '%Y-W%W-%w'. Where are those directives "
             "turned into text, how does it choose between the rules, and where would I add a new directive?")
    assert not asks_for_change(where, EDIT) and not asks_for_change(where, ProposedEdits())
    assert asks_for_change(where, EDIT, terminal="$ pytest\n1 failed")  # over a failing run: about the failure
    for question in ("Where would I add a directive? Add it.", "Where is the bug, and where would I add the check?",
                     "It crashes. Where would I add a guard?",
                     "The cache grows. Where would I add a limit",
                     "Comments after values used to be dropped. Where is this handled, and what's the fix?"):
        assert asks_for_change(question, EDIT), question  # a change asked, a failure, no question


def test_which_questions_ask_for_the_edit_itself() -> None:
    """The edit step follows an answer with no edit block only where the question asks for a change to be made."""
    for question in ("Fix the parser.", "Rename foo to bar", "Add a --no-interpolate flag", "Export it",
                     "We drop 3.8. Make pip refuse to install it on 3.8", "test_x fails: helper(1) should be 2. Fix it.",
                     "It has a clumsy name.\nPlease rename it to warn", "Can you add a flag?", "Show me the diff.",
                     "I need it in annotations: make it public", "Where is the bug? Propose a fix.",
                     "Find the bug and fix it."):
        assert asks_to_edit(question), question
    for question in ("Where is the bug?", "test_x fails: why?", "Importing it crashes with the trace below",
                     "It returns the wrong day.", "Trace the test down to the code that computes the key.",
                     "How is the cache keyed?", "What does add do?", "Why does update() fix the key twice?",
                     "Write a Python function named read_file that returns a file's text."):  # code, not an edit
        assert not asks_to_edit(question), question


def test_which_questions_ask_for_a_test_itself_to_change() -> None:
    """Only these may have a failing test's edit checked and offered; a fix of the code a failing test checks may
    not edit that test."""
    for question in ("update the test for the new rounding", "the test is wrong: 4.50 should be 4.5",
                     "test_total's expected value is outdated, change test_total", "The bug is in the test",
                     "Rename foo to bar and update the tests", "Fix it; I think the test looks wrong",
                     "Update tests/test_invoice.py", "edit the failing test's expectation"):
        assert asks_test_change(question), question
    for question in ("test_quantities_multiply fails, the subtotal ignores the quantity. Fix it.",
                     "fix the failing test", "Make the test pass", "Change the code so the tests pass",
                     "the tests are failing since the refactor, where is the bug?",
                     "Change parse so that the tests in test_parse pass", "Change the code so the test passes"):
        assert not asks_test_change(question), question


def test_the_prose_without_its_edit_blocks() -> None:
    answer = ("The check uses only the newest key.\n\nsrc/signer.py\n```python\n<<<<<<< SEARCH\n"
              "        for k in self.keys[-1:]:\n=======\n        for k in reversed(self.keys):\n>>>>>>> REPLACE\n"
              "```\n\nOld keys verify again.\n\nREADME.md\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n")
    assert strip_edit_blocks(answer) == "The check uses only the newest key.\n\nOld keys verify again."
    assert strip_edit_blocks("No change needed.") == "No change needed."


async def test_a_traced_first_check_that_times_out_runs_again_without_the_trace(tmp_path: Path) -> None:
    """The profiler makes a check slower: when the traced first run times out, the check runs again as the
    user's command alone, and its outcome is the baseline (nothing traced)."""
    root = make_repo(tmp_path / "repo", {"check.py": (
        "import os, sys, time\n"
        "time.sleep(6 if os.environ.get('CONTENOX_TRACE_OUT') else 0)\n"
        "sys.exit(1)\n")})
    job = _job(root, tmp_path / "scratch", timeout_s=3.0)
    job.scratch.build({})
    run = await job._baseline(CheckCommand(command=f"{sys.executable} check.py", source="config"))
    assert run.outcome == "failed" and run.seconds < 3.0
    assert job._traced is None and job._ran == []
    quick = _job(root, tmp_path / "scratch2", timeout_s=30.0)
    quick.scratch.build({})
    assert (await quick._baseline(CheckCommand(command=f"{sys.executable} check.py", source="config"))).seconds > 5
    assert quick._traced == 0  # traced (the tracer wrote its file): a script without functions ran none
    not_python = _job(root, tmp_path / "scratch3", timeout_s=30.0)
    not_python.scratch.build({})
    assert (await not_python._baseline(CheckCommand(command="exit 1", source="config"))).outcome == "failed"
    assert not_python._traced is None  # no Python ran: nothing to say about a trace


async def test_a_check_that_cannot_run_before_any_change_draws_no_candidate(tmp_path: Path) -> None:
    """Every candidate would end as the workspace did (semver's `npm test`, whose `tap` is not installed, "failed"
    all 12 candidates and two repair rounds): none is drawn, the turn's answer stands, and the report says why."""
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    job = _job(root, tmp_path / "scratch", timeout_s=30.0)  # its generate raises: no candidate may be drawn
    greedy = Draft(text="a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", round=0, sampled=False,
                   constrained=False)
    report, chosen, steps = await job.run(greedy, EDIT, [1, 2, 3],
                                          CheckCommand(command="contenox-no-such-runner", source="detected"))
    assert (report.status, report.baseline, report.candidates, steps) == ("skipped", "not_found", (), [])
    assert "`contenox-no-such-runner` is not installed" in report.summary()
    assert chosen.draft is greedy and chosen.edits is EDIT
    assert (root / "a.py").read_text() == "x = 1\n" and not (tmp_path / "scratch" / "tree").exists()
    broken = ProposedEdits(edits=(ProposedEdit(path="a.py", old_text="x = 1\n", new_text="x = (1\n", diff="d2",
                                               blocks=1),))
    unparsed, _, _ = await _job(root, tmp_path / "scratch2", timeout_s=30.0).run(
        greedy, broken, [1], CheckCommand(command="contenox-no-such-runner", source="detected"))
    assert unparsed.summary().endswith("; the answer's edit does not parse: a.py, line 1: '(' was never closed\n"
                                       "    x = (1")


async def test_a_detected_check_leaves_out_test_files_whose_package_is_not_installed(tmp_path: Path) -> None:
    """python-dotenv's tests/test_cli.py imports `sh`, which the environment lacks: the detected check stopped at
    collecting it, before and after every candidate. It is run without that file (named), and checks the rest."""
    files = {"mypkg/__init__.py": "def answer():\n    return 42\n",
             "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
             "tests/test_cli.py": "import contenox_not_installed_pkg\n\ndef test_cli():\n    pass\n",
             "tests/test_ok.py": "from mypkg import answer\n\ndef test_ok():\n    assert answer() == 42\n"}
    root = make_repo(tmp_path / "repo", files)
    pytest_line = f"{sys.executable} -m pytest -q -x -p no:cacheprovider tests/test_cli.py tests/test_ok.py"
    job = _job(root, tmp_path / "scratch", timeout_s=60.0, verify=True)
    job.scratch.build({})
    command, run = await job._usable_baseline(CheckCommand(command=pytest_line, source="detected",
                                                           detail="pytest (pyproject.toml)"))
    assert run.outcome == "passed"
    assert command.command.endswith("-p no:cacheprovider tests/test_ok.py")
    assert command.detail == ("pytest (pyproject.toml); left out tests/test_cli.py (its `contenox_not_installed_pkg` "
                              "is not installed)")
    asked = _job(root, tmp_path / "scratch3", timeout_s=60.0)  # the narrowed line is another command: it asks
    asked.scratch.build({})
    unasked, stopped = await asked._usable_baseline(CheckCommand(command=pytest_line, source="detected"))
    assert (unasked.command, stopped.outcome) == (pytest_line, "failed")
    assert unasked.detail.startswith("not run without tests/test_cli.py: running `") and "needs your consent" in \
        unasked.detail
    theirs = _job(root, tmp_path / "scratch2", timeout_s=60.0)  # the user's own command is run as they gave it
    theirs.scratch.build({})
    kept, failed = await theirs._usable_baseline(CheckCommand(command=pytest_line, source="terminal"))
    assert (kept.command, failed.outcome) == (pytest_line, "failed")
    assert "No module named 'contenox_not_installed_pkg'" in failed.output


async def test_under_a_check_that_passes_nothing_is_drawn_for_no_change_and_a_comment_alone_ranks_last(
        tmp_path: Path) -> None:
    """A check that passes before any change only guards. The turn's answer wrote no change (the 0.5B often spends
    a refactor's answer on a table of the files): nothing is drawn for it (drawn, in 9 such turns, the offered
    edits were 9 harmless wrong ones). Its answer broke the check: the repair round's candidates are checked,
    and a sampled one that changes only a comment ranks after one that changes code."""
    root = make_repo(tmp_path / "repo", {"mypkg/__init__.py": "def answer():\n    return 42\n",
                                         "tests/test_ok.py": "from mypkg import answer\n\n\ndef test_ok():\n"
                                                             "    assert answer() == 42\n"})
    before = "def answer():\n    return 42\n"  # an edit's texts are the file's, before and after
    edits = {"breaks": ProposedEdits(edits=(ProposedEdit(path="mypkg/__init__.py", old_text=before,
                                                         new_text=before.replace("42", "41"), diff="-42 +41",
                                                         blocks=1),)),
             "comment": ProposedEdits(edits=(ProposedEdit(path="mypkg/__init__.py", old_text=before,
                                                          new_text=before + "# the answer\n", diff="+# the answer",
                                                          blocks=1),)),
             "keeps": ProposedEdits(edits=(ProposedEdit(path="mypkg/__init__.py", old_text=before,
                                                        new_text=before.replace("42", "6 * 7"), diff="-42 +6*7",
                                                        blocks=1),))}
    command = CheckCommand(command=f"{sys.executable} -m pytest -q -p no:cacheprovider tests", source="detected")
    table = Draft(text="| Path | Function |\n|---|---|\n| mypkg/__init__.py | answer |", round=0, sampled=False,
                  constrained=False)
    none, _, _ = await _job(root, tmp_path / "scratch", timeout_s=60.0).run(table, ProposedEdits(), [1], command)
    assert [c.outcome for c in none.candidates] == ["no_edit"] and none.status == "failed"  # its generate: unused
    assert none.summary().startswith("not verified: no candidate proposed a change to check (1 tried); ")
    asked: list[tuple[int, bool]] = []

    async def generate(ids: list[int], round_: int, count: int, greedy: bool, grammars: list[str]) -> list[Draft]:
        asked.append((count, greedy))
        return [Draft(text=text, round=round_, sampled=text != "breaks", constrained=text != "breaks")
                for text in ("breaks", "comment", "keeps")]

    job = _job(root, tmp_path / "scratch2", timeout_s=60.0, generate=generate, propose=lambda text: edits[text],
               step_ids=lambda steps: [1, 2])
    greedy = Draft(text="breaks", round=0, sampled=False, constrained=False)
    report, chosen, steps = await job.run(greedy, edits["breaks"], [1], command)
    assert asked == [(4, True)] and len(steps) == 1  # one repair round: [verify] candidates, its greedy one first
    assert [(c.outcome, c.comments_only) for c in report.candidates] == [
        ("failed", False), ("failed", False), ("passed", True), ("passed", False)]
    assert (report.status, report.baseline, report.chosen, chosen.draft.text) == ("passed", "passed", 4, "keeps")
    assert report.summary().startswith(f"checked: `{command.command}` still passes with the change")
    assert (root / "mypkg/__init__.py").read_text() == before


def _job(root: Path, folder: Path, *, timeout_s: float, generate: Any = None, propose: Any = None,
         step_ids: Any = None, verify: bool | None = None) -> VerifyJob:
    async def emit(event: object) -> None:
        return None

    def unused(*args: object) -> Any:
        raise AssertionError(f"not called by a first check: {args}")

    return VerifyJob(config=VerifyConfig(timeout_s=timeout_s), request=TurnRequest(root=str(root), prompt="fix it", verify=verify),
                     root=root, scratch_folder=folder, consents=ConsentStore(folder / "consents.json"), asker=None,
                     emit=emit, propose=propose or unused, read=lambda path: None, locate=unused,
                     generate=generate or unused, step_ids=step_ids or unused, overlays={}, paths=())


STATS = ("class Stats:\n    def __init__(self):\n        self.hits = 0\n\n    def clear(self):\n        self.data = {}\n\n"
         "    def info(self):\n        return self.hits\n\n\nclass Other:\n    def info(self):\n        return 0\n\n\n"
         "def helper():\n    return 1\n")


def test_a_focused_prompt_shows_the_other_methods_of_its_class_the_failing_test_ran(tmp_path: Path) -> None:
    """``Stats.clear`` must reset what ``Stats.info`` reports and ``__init__`` sets: the focused and line prompts
    show those two (the trace's order), not ``Other.info`` or a module function, and nothing for a function
    outside a class."""
    from contenox.verify.focus import Place, focus_prompt, line_prompt
    from contenox.verify.trace import Ran

    spans = {"__init__": [("stats.py", 2, 3)], "clear": [("stats.py", 5, 6)], "info": [("stats.py", 8, 9), ("stats.py", 13, 14)],
             "helper": [("stats.py", 17, 18)]}
    job = _job(tmp_path, tmp_path / "scratch", timeout_s=30.0)
    job.read = lambda path: STATS if path == "stats.py" else None
    job.locate = lambda name: spans.get(name, [])

    def ran(name: str, line: int, suspicion: float) -> Ran:
        return Ran(path="stats.py", line=line, name=name, failed=1, of=1, passed=0, score=suspicion, depth=1,
                   suspicion=suspicion)

    job._ran = [ran("Stats.clear", 5, 1.0), ran("Stats.info", 8, 0.9), ran("Other.info", 13, 0.9),
                ran("helper", 17, 0.8), ran("Stats.__init__", 2, 0.5)]
    clear = Place(path="stats.py", name="clear", start=5, end=6, why="called by the test")
    related = job._related(clear)
    assert [name for name, _ in related] == ["Stats.info", "Stats.__init__"]
    assert related[0][1] == "    def info(self):\n        return self.hits"
    prompt = focus_prompt(clear, "    def clear(self):\n        self.data = {}", "pytest", "1 failed", "", "", related)
    assert ("Other methods of `Stats` the failing test ran (for reference: leave them as they are):\n```python\n"
            "    def info(self):\n        return self.hits\n\n    def __init__(self):\n        self.hits = 0\n```") in prompt
    assert prompt.index("Other methods") < prompt.index("`clear` in stats.py")
    assert "Other methods of `Stats`" in line_prompt(clear, "    def clear(self):\n        self.data = {}", 1, "pytest",
                                                      "1 failed", related=related)
    assert job._related(Place(path="stats.py", name="helper", start=17, end=18, why="t")) == []  # not in a class
    assert "Other methods" not in focus_prompt(clear, "def clear(self): ...", "pytest", "1 failed")


def test_how_a_line_came_to_be_changed_says_the_trace_the_picks_or_both() -> None:
    from collections import Counter

    from contenox.node.verifying import _line_said

    suspicion, votes = {660: 0.65, 661: 0.5}, Counter({660: 3, 641: 1})
    assert _line_said(660, suspicion, votes, 4) == "suspicion 0.65; 3 of 4 picks"
    assert _line_said(641, suspicion, votes, 4) == "1 of 4 picks"  # picked, though no failing test ran it
    assert _line_said(661, suspicion, votes, 4) == "suspicion 0.50"


def test_what_a_change_changes_names_the_definition_an_inserted_line_ends(tmp_path: Path) -> None:
    """A line added at the end of ``cache_clear`` lies past it in the old text (the blank line after it): the
    change is named by the definition it follows, not by its file alone."""
    from contenox.config import WorkspaceConfig
    from contenox.node.node import _changed_definitions
    from contenox.workspace import Workspace

    source = ("class Info:\n    def clear(self):\n        self.data = {}\n\n    def info(self):\n        return 0\n\n\n"
              "X = 1\n")
    root = make_repo(tmp_path / "repo", {"info.py": source})
    workspace = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    inserted = source.replace("        self.data = {}\n", "        self.data = {}\n        self.hits = 0\n")
    changed = source.replace("        return 0\n", "        return 1\n")
    module = source.replace("X = 1\n", "X = 2\n")

    def edits(new: str) -> ProposedEdits:
        return ProposedEdits(edits=(ProposedEdit(path="info.py", old_text=source, new_text=new, diff="d", blocks=1),))

    assert _changed_definitions(workspace, edits(inserted)) == ("`Info.clear` in info.py",)
    assert _changed_definitions(workspace, edits(changed)) == ("`Info.info` in info.py",)
    assert _changed_definitions(workspace, edits(module)) == ("info.py",)


def test_a_carried_rename_names_each_definition_it_changes_and_a_moved_file(tmp_path: Path) -> None:
    """A rename the node carried to every use is listed by the definitions it changes, file by file (the places
    the model's blocks did not show); a moved file is named as deleted and new; no rename carried: nothing."""
    from contenox.config import WorkspaceConfig
    from contenox.node.node import _proposed_edits, _rename_places
    from contenox.workspace import Workspace

    ids = ("const compare = (a, b) => a - b\n\nconst rcompare = (a, b) => compare(b, a)\n\n"
           "module.exports = { compare, rcompare }\n")
    user = ("const { compare } = require('../internal/ids')\n\nclass V {\n  cmp (o) {\n    return compare(1, o)\n"
            "  }\n}\n\nmodule.exports = V\n")
    root = make_repo(tmp_path / "repo", {"internal/ids.js": ids, "classes/v.js": user})
    workspace = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    block = ("internal/ids.js\n<<<<<<< SEARCH\nconst compare = (a, b) => a - b\n=======\n"
             "const comparePair = (a, b) => a - b\n>>>>>>> REPLACE\n")
    renamed = _proposed_edits(block, workspace, (), "Rename compare to comparePair.")
    assert _rename_places(workspace, renamed) == ("The places it changes: internal/ids.js: `compare`, `rcompare`, "
                                                  "top level; classes/v.js: top level, `V.cmp`.")
    moved = _proposed_edits(block, workspace, (), "Rename compare to comparePair, and its file to internal/pair.js.")
    assert _rename_places(workspace, moved) == ("The places it changes: internal/ids.js (deleted); classes/v.js: "
                                                "top level, `V.cmp`; internal/pair.js (new file).")
    edited = _proposed_edits(block.replace("const comparePair", "const compare").replace("a - b\n>>>", "b - a\n>>>"),
                             workspace, (), "Make compare descending.")
    assert edited.edits and _rename_places(workspace, edited) == ""


def test_a_move_question_gets_the_node_s_move_with_no_edit_block_in_its_answer(tmp_path: Path) -> None:
    """"Move X into Y/" is made by the node, through the workspace (its search finds the importing files): the
    old file deleted, the new one created, the imports following; a question about a move gets none."""
    from contenox.config import WorkspaceConfig
    from contenox.node.node import _proposed_edits
    from contenox.workspace import Workspace

    root = make_repo(tmp_path / "repo", {"src/pkg/__init__.py": "", "src/pkg/util.py": "X = 1\n",
                                         "src/pkg/lists.py": "from .util import X\n",
                                         "tests/test_l.py": "from pkg.lists import X\n"})
    workspace = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    answer = "Sure: moving the module keeps its functions; the imports must follow."
    moved = _proposed_edits(answer, workspace, (), "Move src/pkg/lists.py into src/pkg/sub/.")
    assert {e.path: e.new_text for e in moved.edits} == {
        "src/pkg/lists.py": None, "src/pkg/sub/lists.py": "from ..util import X\n",
        "tests/test_l.py": "from pkg.sub.lists import X\n"}
    assert not _proposed_edits(answer, workspace, (), "Why would I move src/pkg/lists.py into src/pkg/sub/?").edits


def test_an_edit_step_searches_the_definitions_the_question_then_the_answer_names(tmp_path: Path) -> None:
    """A change turn's edit step is localized: the definitions the question names first, then those its answer
    marks as code, each its own lines; a test only when the question speaks of tests; no name defined: files."""
    from contenox.config import WorkspaceConfig
    from contenox.node.node import _edit_step_files
    from contenox.workspace import Workspace

    codec = "import struct\n\n\ndef int_to_bytes(num):\n    return struct.pack('>Q', num)\n\n\ndef other():\n    return 1\n"
    timed = "from .codec import int_to_bytes\n\n\ndef stamp(now):\n    return int_to_bytes(now)\n"
    test = "from pkg.codec import int_to_bytes\n\n\ndef test_int_to_bytes():\n    assert int_to_bytes(1)\n"
    setup = "from setuptools import setup\n\nsetup(name='pkg', python_requires='>=3.8')\n"
    root = make_repo(tmp_path / "repo", {"pkg/codec.py": codec, "pkg/timed.py": timed, "tests/test_codec.py": test,
                                         "setup.py": setup})
    workspace = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    shown = ("pkg/timed.py", "pkg/codec.py", "tests/test_codec.py", "setup.py")
    # a file named by path that holds no definition named (a setting, an export list) comes after the definitions
    assert _edit_step_files(workspace, "In `setup.py`, raise python_requires; `int_to_bytes` stays", shown,
                            "Drop Python 3.8.") == [
        ("pkg/codec.py", "def int_to_bytes(num):\n    return struct.pack('>Q', num)\n"), ("setup.py", setup)]
    places = _edit_step_files(workspace, "| pkg/timed.py | `stamp` |", shown, "Rename int_to_bytes to encode_int.")
    assert places == [("pkg/codec.py", "def int_to_bytes(num):\n    return struct.pack('>Q', num)\n"),
                      ("pkg/timed.py", "def stamp(now):\n    return int_to_bytes(now)\n")]
    with_tests = _edit_step_files(workspace, "", shown, "Rename test_int_to_bytes, the tests included.")
    assert [path for path, _ in with_tests] == ["tests/test_codec.py"]
    assert _edit_step_files(workspace, "", shown, "test_int_to_bytes fails. Fix it.") == [
        ("pkg/timed.py", timed), ("pkg/codec.py", codec), ("setup.py", setup)]  # a test named is not to change


def test_a_rename_question_s_new_names_are_read_from_it_and_bind_the_rename_step() -> None:
    """The names after "to" (code names, or in backticks; a plain word ends them) are the new names, in order; the
    rename step's grammar then writes exactly those, where the model chose before (the 0.5B, asked for
    ``_normalize_secret_keys``, wrote ``normalize_secret_keys``)."""
    from contenox.answer.renames import asked_names as _asked_names
    from contenox.verify.grammar import rename_grammar

    assert _asked_names("Rename this helper to _normalize_secret_keys and update every place that uses it.") == [
        "_normalize_secret_keys"]
    assert _asked_names("Rename int_to_bytes and bytes_to_int to encode_int and decode_int everywhere.") == [
        "encode_int", "decode_int"]
    assert _asked_names("Rename bytesify to to_bytes everywhere it is used") == ["to_bytes"]
    assert _asked_names("Rename the parseOptions helper to normalizeOptions, including the file") == [
        "normalizeOptions"]
    assert _asked_names("The wrapper has a clumsy name. Rename it to warn_on_parse_errors and update its callers") \
        == ["warn_on_parse_errors"]
    assert _asked_names("rename foo to `bar`, please") == ["bar"]
    assert _asked_names("Rename it to something clearer.") == []  # a plain word: no name given
    assert _asked_names("Rename this function.") == [] and _asked_names("Convert it to_bytes") == []
    assert rename_grammar(" ", "(x):", names=["plus_one"]) == 'root ::= " " "plus_one" "(x):\\n>>>>>>> REPLACE\\n"'
    two = rename_grammar(" ", "(x):", [("o\n", " ", "():")], names=["a_b", "c_d"])
    assert '"a_b" "(x)' in two and '"c_d" "()' in two and "[A-Za-z_$]" not in two
    assert "[A-Za-z_$]" in rename_grammar(" ", "(x):", [("o\n", " ", "():")], names=["a_b"])  # not one per block


def test_a_rename_question_opens_the_edit_step_at_the_definitions_it_names(tmp_path: Path) -> None:
    from contenox.config import WorkspaceConfig
    from contenox.node.node import _renamed_lines
    from contenox.workspace import Workspace

    durations = "class Duration:\n    def __init__(self):\n        self.days = 0\n\n    def totimedelta(self):\n" \
                "        return self.days\n\n\ndef parse(text):\n    return Duration()\n\n\ndef warn(line):\n" \
                "    log('could not parse statement', line)\n"
    root = make_repo(tmp_path / "repo", {"pkg/duration.py": durations, "tests/test_duration.py":
                                         "def test_totimedelta():\n    assert True\n"})
    workspace = Workspace.open(root, WorkspaceConfig(), tmp_path / "cache")
    # each block written in up to the name, less the blank before it; the rest of the line kept after the new name
    method = ("pkg/duration.py\n<<<<<<< SEARCH\n    def totimedelta(self):\n=======\n    def", " ", "(self):")
    assert _renamed_lines(workspace, "Rename Duration.totimedelta to to_timedelta.") == [method]  # not the class
    assert _renamed_lines(workspace, "Please rename the totimedelta method, and its callers") == [method]
    assert _renamed_lines(workspace, "Rename totimedelta, but keep Duration.totimedelta working") == [method]
    assert _renamed_lines(workspace, "Rename totimedelta and parse to to_timedelta and parse_duration.") == [
        method, ("pkg/duration.py\n<<<<<<< SEARCH\ndef parse(text):\n=======\ndef", " ", "(text):")]
    assert _renamed_lines(workspace, "Rename this function to to_timedelta.") == []  # it names none defined
    # "this function": the definition at the editor's place, the innermost of the kind asked
    assert _renamed_lines(workspace, "Rename this function to to_timedelta.", ("pkg/duration.py", 6, 6)) == [method]
    assert _renamed_lines(workspace, "rename it, please", ("pkg/duration.py", 5, 5)) == [method]
    assert _renamed_lines(workspace, "Rename this class to Span.", ("pkg/duration.py", 6, 6)) == [
        ("pkg/duration.py\n<<<<<<< SEARCH\nclass Duration:\n=======\nclass", " ", ":")]
    # a selection that starts above the definition (a blank line, a decorator): the first definition inside it
    assert _renamed_lines(workspace, "Rename this function.", ("pkg/duration.py", 8, 10)) == [
        ("pkg/duration.py\n<<<<<<< SEARCH\ndef parse(text):\n=======\ndef", " ", "(text):")]
    assert _renamed_lines(workspace, "Rename this function.", ("pkg/missing.py", 1, 1)) == []
    # "this helper", "this factory": any word for a definition; "this file" names none
    assert _renamed_lines(workspace, "Rename this helper to to_days.", ("pkg/duration.py", 6, 6)) == [method]
    assert _renamed_lines(workspace, "Rename this file to durations.py.", ("pkg/duration.py", 6, 6)) == []
    # the old names stand before the "to" of the new ones: a definition named after it is not renamed
    assert _renamed_lines(workspace, "Rename this factory to _make, and its twin in the parse module.") == []
    assert _renamed_lines(workspace, "Rename this factory to _make, and its twin in the parse module.",
                          ("pkg/duration.py", 9, 10)) == [
        ("pkg/duration.py\n<<<<<<< SEARCH\ndef parse(text):\n=======\ndef", " ", "(text):")]
    # named by text it holds, or by what the answer says "it" is
    warn = ("pkg/duration.py\n<<<<<<< SEARCH\ndef warn(line):\n=======\ndef", " ", "(line):")
    assert _renamed_lines(workspace, "The wrapper that logs 'could not parse statement' has a clumsy name. Rename "
                                     "it to warn_on_parse_errors.") == [warn]
    assert _renamed_lines(workspace, "Rename it to to_days.", None, "It is `Duration.totimedelta`.") == [method]
    assert _renamed_lines(workspace, "Rename it to to_days.", None, "It logs with `log`, see `warn`.") == [warn]
    assert _renamed_lines(workspace, "Rename it to to_days.", None, "Nothing `named` here.") == []
    assert _renamed_lines(workspace, "Fix totimedelta.") == []  # no rename asked
    assert _renamed_lines(workspace, "Rename test_totimedelta to test_days.") == []  # tests not asked


def test_the_sampled_candidates_target_the_failing_frames_before_an_edit_step_s_files(tmp_path: Path) -> None:
    """The turn's own edit says where the answer thinks the fix is: its file comes first. An edit the edit step
    wrote was localized by names alone: the failing run's innermost frame comes first then."""
    root = make_repo(tmp_path / "repo", {"calc.py": "def half(x):\n    return x // 3\n",
                                         "other.py": "def noop():\n    return None\n"})
    terminal = (f'Traceback (most recent call last):\n  File "{root}/calc.py", line 2, in half\n'
                "    return x // 3\nAssertionError\n")
    job = _job(root, tmp_path / "scratch", timeout_s=10.0)
    job.request = TurnRequest(root=str(root), prompt="fix half", terminal=terminal)
    job.read = lambda path: (root / path).read_text()
    job.locate = lambda name: [("calc.py", 1, 2)] if name == "half" else []
    other = ProposedEdits(edits=(ProposedEdit(path="other.py", old_text="    return None\n",
                                              new_text="    return 0\n", diff="d", blocks=1),))
    assert [g.splitlines()[0].split('"')[1] for g in job._grammars(other)] == ["other.py\\n", "calc.py\\n"]
    assert [g.splitlines()[0].split('"')[1] for g in job._grammars(other, True)] == ["calc.py\\n", "other.py\\n"]
    # a test written for the change decides: one grammar, several blocks over those places together
    job._repro = ("tests/test_contenox_change.py", "def test_x():\n    assert False\n", "python -m pytest -q x")
    (together,) = job._grammars(other)
    assert together.splitlines()[0].startswith('root ::= block ("\\n"? block){0,3}')
    assert '"other.py\\n"' in together and '"calc.py\\n"' in together


def test_a_test_written_for_the_change_is_read_from_its_answer_and_used_only_when_it_fails_for_want_of_it() -> None:
    from contenox.node.verifying import _own_error, _test_code
    from contenox.verify import CheckRun

    cut = "Here:\n```python\nfrom util import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\ndef test_"
    assert _test_code(cut) == "from util import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    assert _test_code("```python\nimport util\n```\n") is None  # no test in it
    assert _test_code("I would test that double doubles.") is None

    def run(exit_code: int, output: str) -> CheckRun:
        return CheckRun(command="pytest t.py", outcome="passed" if exit_code == 0 else "failed", exit_code=exit_code,
                        output=output, seconds=0.1)

    assert _own_error(run(2, "E   ImportError: cannot import name 'double' from 'util'\n1 error")) == ""
    assert _own_error(run(1, "E   assert 3 == 4\n1 failed")) == ""
    assert _own_error(run(0, "1 passed")) == "it passes before the change too (it tests nothing the change adds)"
    assert _own_error(run(1, "E   NameError: name 'pytest' is not defined\n1 failed")) == (
        "it fails on an error of its own (E   NameError: name 'pytest' is not defined), with any change")
    assert _own_error(run(4, "ERROR: usage")) == "it failed (exit 4) in 0.1 s"
    renamed = run(1, "E       NameError: name 'warn_on_parse_errors' is not defined\n1 failed")
    assert _own_error(renamed, "Rename it to warn_on_parse_errors.") == ""  # the new name, not made yet
    assert _own_error(renamed, "Rename it.").startswith("it fails on an error of its own (E       NameError")
    # a module that is not there (the 1.5B's `itsdangerous.typedescriptors`): with any change, unless asked for
    made_up = run(2, "E   ModuleNotFoundError: No module named 'itsdangerous.typedescriptors'\n1 error")
    assert _own_error(made_up, "Limit the payload size.") == (
        "it imports `itsdangerous.typedescriptors`, which is not there and which the question does not name")
    assert _own_error(made_up, "Move the descriptors into a new module, typedescriptors.") == ""


def test_a_standard_module_a_written_test_uses_without_importing_is_imported_and_said(tmp_path: Path) -> None:
    """The 1.5B's tests of dotenv's rename_key used ``io.StringIO`` with no ``import io`` and were dropped as their
    own error; its Node scripts of semver's cache called ``assert.ok`` with no require. The import is added (a line
    that says the node added it), so the test runs; a name the test binds itself, or a project's own name, is
    left."""
    import subprocess
    import sys

    from contenox.node.verifying import _script_code, _test_code

    answer = ('```python\n"""Renames."""\nfrom __future__ import annotations\n\n\ndef test_rename():\n'
              '    stream = io.StringIO("A=1")\n    os = {"x": 1}\n    assert os["x"] == 1 and stream.read() == "A=1"\n'
              '    with pytest.raises(ZeroDivisionError):\n        dotenv.x\n```\n')
    code = _test_code(answer)
    assert code is not None
    head = code.splitlines()[:4]
    assert head == ['"""Renames."""', "from __future__ import annotations",
                    "import io  # added by Contenox: the test uses it and did not import it",
                    "import pytest  # added by Contenox: the test uses it and did not import it"]
    assert "import os" not in code and "import dotenv" not in code  # bound by the test; the project's own
    (tmp_path / "test_it.py").write_text(code.replace("dotenv.x", "1 / 0"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_it.py"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout
    # a name the project's modules import from the standard library, used bare and unimported: imported as they do
    from contenox.node.verifying import standard_imports

    known = standard_imports(['"""Tax."""\nfrom decimal import Decimal\nfrom os import path as p\nfrom .x import y\n',
                              "from decimal import Decimal, ROUND_UP\nimport json\n", "def broken(:\n"])
    assert known == {"Decimal": "from decimal import Decimal", "p": "from os import path as p",
                     "ROUND_UP": "from decimal import ROUND_UP"}
    taxed = _test_code("```python\nfrom tax import rate\n\ndef test_rate():\n    Decimal = None\n"
                       "    assert rate('DE') == p and ROUND_UP\n```", known)
    assert taxed is not None and taxed.splitlines()[:3] == [
        "from decimal import ROUND_UP  # added by Contenox: the test uses it and did not import it",
        "from os import path as p  # added by Contenox: the test uses it and did not import it", "from tax import rate"]
    script = _script_code("```js\nconst s = require('./')\nassert.ok(s.ok)\nfunction f (fs) { return fs.x }\n```")
    assert script == ("const assert = require('assert') // added by Contenox: the test uses it and did not import it\n"
                      "const s = require('./')\nassert.ok(s.ok)\nfunction f (fs) { return fs.x }\n")
    assert _script_code("```js\nconst assert = require('node:assert')\nassert.ok(1)\n```") == \
        "const assert = require('node:assert')\nassert.ok(1)\n"


def test_a_written_test_that_imports_a_defined_name_from_the_wrong_place_is_its_own_error(tmp_path: Path) -> None:
    """``from dotenv.main import set_as_environment_variables`` (a method) fails with any change; an import of a
    name nothing defines yet, or of one the question asks to export, is what the change adds."""
    from contenox.verify import CheckRun

    async def emit(event: object) -> None:
        return None

    def locate(name: str) -> list[tuple[str, int, int]]:
        return [("src/dotenv/main.py", 40, 60)] if name in ("set_as_environment_variables", "DotEnv") else []

    def job(prompt: str) -> VerifyJob:
        return VerifyJob(config=VerifyConfig(), request=TurnRequest(root=str(tmp_path), prompt=prompt),
                         root=tmp_path, scratch_folder=tmp_path / "s", consents=ConsentStore(tmp_path / "c.json"),
                         asker=None, emit=emit, propose=lambda text: ProposedEdits(), read=lambda path: None,
                         locate=locate, generate=None, step_ids=lambda steps: [], overlays={}, paths=())  # type: ignore[arg-type]

    def run(name: str) -> CheckRun:
        return CheckRun(command="pytest t.py", outcome="failed", exit_code=2, seconds=0.1,
                        output=f"E   ImportError: cannot import name '{name}' from 'dotenv.main'\n1 error")

    assert job("Add a reset option.")._misimported(run("set_as_environment_variables")) == (
        "it imports `set_as_environment_variables` from where it is not defined (it is defined elsewhere), with any "
        "change")
    assert job("Add rename_key next to set_key.")._misimported(run("rename_key")) == ""  # to be added
    assert job("Export DotEnv from the package root.")._misimported(run("DotEnv")) == ""  # what was asked


def test_a_javascript_rewrite_ends_where_its_braces_close() -> None:
    """A focused JavaScript answer without what the model wrote after the function: the braces of a template
    literal's ``${...}`` (one spanning two lines, as semver's caret ranges do), of a string and of a comment are
    not the function's."""
    from contenox.node.verifying import _function_only

    function = ("const replaceCaret = (comp) => {\n  // a } in a comment\n  const s = '}'\n"
                "  return `>=${M}.${m\n  }.0 <${+M + 1}`\n}\n")
    assert _function_only(function + "console.log(replaceCaret('^1'))\n", "classes/range.js") == function
    assert _function_only("const f = () => {\n  return 1\n", "a.js") == "const f = () => {\n  return 1\n"  # unclosed


def test_a_node_script_that_calls_a_defined_function_where_it_is_not_one_is_its_own_error() -> None:
    """The 1.5B's script required ``./functions/satisfies`` (the module is the function) and called
    ``semver.satisfies(...)`` inside a ``try``: the TypeError was caught and its message compared, failing with any
    change. A function no file defines yet is the change not made (it is what the change adds)."""
    from contenox.node.verifying import _script_own_error
    from contenox.verify import CheckRun

    caught = CheckRun(command="node contenox-change.test.js", outcome="failed", exit_code=1, seconds=0.1,
                      output="AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n+ actual - "
                             "expected\n\n+ 'semver.satisfies is not a function'\n- 'Invalid range'\n")

    def defines(name: str) -> list[tuple[str, int, int]]:
        return [("functions/satisfies.js", 3, 20)] if name == "satisfies" else []

    assert _script_own_error(caught, "Give satisfies() a throwErrors argument.", defines) == (
        "it calls `semver.satisfies`, which is not a function where it looks (`satisfies` is defined, elsewhere or "
        "otherwise), with any change")
    assert _script_own_error(caught, "Add a satisfies() function.", lambda name: []) == ""


async def test_a_written_test_cut_short_inside_its_code_block_goes_on_from_its_own_tokens(tmp_path: Path) -> None:
    """The 1.5B's parametrized test ran past its 512 tokens inside the table and left no test function: a draft cut
    by the limit inside its fence is continued once, its prompt the question's followed by the draft's own tokens;
    one that ended, or was cut outside a fence, is read as it is."""
    from contenox.node.verifying import _test_code

    calls: list[tuple[list[int], int]] = []
    cut = Draft(text="```python\nimport pytest\n\n@pytest.mark.parametrize('a', [\n    1,\n", round=0,
                sampled=False, constrained=False, token_ids=(7, 8, 9), cut=True)
    whole = Draft(text="```python\ndef test_b():\n    assert 2\n```\n", round=0, sampled=True, constrained=False,
                  token_ids=(5,), cut=False)

    async def generate(ids: list[int], round_: int, count: int, greedy: bool, grammars: list[str]) -> list[Draft]:
        calls.append((ids, count))
        if len(calls) == 1:
            return [cut, whole]
        return [Draft(text="    2,\n])\ndef test_a(a):\n    assert a\n```\n", round=0, sampled=False, constrained=False)]

    job = _job(tmp_path, tmp_path / "scratch", timeout_s=10.0, generate=generate, step_ids=lambda steps: [1, 2])
    greedy = Draft(text="answer", round=0, sampled=False, constrained=False)
    codes = await job._written_tests(greedy, "write a test", _test_code, "none")
    assert calls == [([1, 2], job.config.written_tests), ([1, 2, 7, 8, 9], 1)]
    assert codes[0].startswith("import pytest") and "def test_a(a):" in codes[0] and "    2,\n])" in codes[0]
    assert codes[1] == "def test_b():\n    assert 2\n"


def test_a_written_test_that_uses_none_of_the_names_the_change_adds_is_its_own_error(tmp_path: Path) -> None:
    """"Add rename_key(dotenv_path, old_key, new_key)": a test that never calls `rename_key` fails for another
    reason with any change; names the workspace defines, builtins and parameters are no names the change adds."""
    defined = {"set_key": [("src/dotenv/main.py", 1, 9)], "parse": [("p.py", 1, 2)], "satisfies": [("s.py", 1, 2)]}
    job = _job(tmp_path, tmp_path / "scratch", timeout_s=10.0)
    job.locate = lambda name: defined.get(name, [])
    job.request = TurnRequest(root=str(tmp_path), prompt="Add rename_key(dotenv_path, old_key, new_key) next to "
                                                         "set_key(), raising a ValueError, and a BadKey error.")
    assert job._untouched("from dotenv.parser import parse_binding\n\ndef test_x():\n    parse_binding('a')\n") == (
        "it never uses `rename_key` or `BadKey`, which the change is to add: it fails for another reason, with any "
        "change")
    assert job._untouched("import dotenv\n\ndef test_x():\n    dotenv.rename_key('p', 'A', 'B')\n") == ""
    assert job._untouched("def test_x():\n    with raises(BadKey):\n        pass\n") == ""
    job.request = TurnRequest(root=str(tmp_path), prompt="Give satisfies() a fourth argument, throwErrors, the way "
                                                         "parse() handles it; raise a TypeError.")
    assert job._untouched("def test_x():\n    assert check('1', 'x', {}, True)\n") == ""  # it adds no name


SCALED = ("def scaled(x, factor=2):\n    \"\"\"x times the factor.\"\"\"\n    if x < 0:\n        return 0\n"
          "    y = x * factor\n    return y + 1\n")


async def test_the_lines_filled_in_are_the_ones_the_failing_run_ran_most_suspicious_first_the_def_line_last(
        tmp_path: Path) -> None:
    """The trace ran lines 1, 3, 5 and 6 (never ``return 0``) and found 6 most suspicious: 6 is filled first,
    then 3 and 5 in order, then the def line; never the docstring or the branch that did not run. Each fill
    comes with the line emptied past its indentation, and each fill that changes the line is drawn as the
    whole function with that line replaced; a fill like the line, or the same fill twice, is no candidate."""
    from contenox.verify.focus import Place

    asked: list[tuple[str, int, int, str]] = []
    fills = {6: ["return y", "return y + 1", "return y", "return y - 1"], 3: ["if x <= 0:"], 5: ["y = x * factor"],
             1: ["def scaled(x, factor=1):"]}

    async def infill(path: str, text: str, line: int, column: int, count: int, one_line: bool) -> list[Draft]:
        assert one_line  # a line's own fill ends at its line break
        asked.append((path, line, column, text.split("\n")[line]))
        assert count == VerifyConfig().candidates and text.count("\n") == SCALED.count("\n")
        return [Draft(text=f, round=0, sampled=i > 0, constrained=False) for i, f in enumerate(fills[line + 1])]

    job = _job(tmp_path, tmp_path / "scratch", timeout_s=30.0)
    job.config = VerifyConfig(infill_inserts=0)  # lines put in: the test below
    job.infill = infill
    job._places = ("scaled (calc.py:1-6, called by test_scaled; found along the failing run)",)
    place = Place(path="calc.py", name="scaled", start=1, end=6, why="called by test_scaled", suspicion=0.9,
                  lines=((6, 0.9),), ran=(1, 3, 5, 6))
    batches = [batch async for batch in job._infilled(place, SCALED)]
    assert [(line, column, emptied) for _, line, column, emptied in asked] == [
        (5, 4, "    "), (2, 4, "    "), (4, 4, "    "), (0, 0, "")]
    assert [[(d.arm, d.line, d.sampled) for d, _ in batch] for batch in batches] == [
        [("infill", 6, False), ("infill", 6, True)], [("infill", 3, False)], [("infill", 1, False)]]
    first = batches[0][0][0].text
    assert first == "```python\n" + SCALED.replace("return y + 1", "return y").rstrip("\n") + "\n```"
    assert batches[2][0][0].text.startswith("```python\ndef scaled(x, factor=1):\n")
    assert job._places[-1].endswith("; lines filled in: 4 of 4)")
    job.config = VerifyConfig(infill=2, infill_inserts=0)
    asked.clear()
    assert len([batch async for batch in job._infilled(place, SCALED)]) == 2 and len(asked) == 2
    job.config = VerifyConfig(infill=0, infill_inserts=0)
    assert [batch async for batch in job._infilled(place, SCALED)] == []


async def test_a_line_the_bug_took_out_is_put_in_after_a_whole_statement_and_filled_in_with_its_block(
        tmp_path: Path) -> None:
    """Lines put in (an empty line at a statement's indentation, after it) are filled in beside the lines' own
    fills, ranked together: the most suspicious line's own fill, then a line put in after it, then the others'
    own fills, then lines put in, in order (after the docstring, into the ``if``), the def line last; a fill like
    the line before or after it is no candidate, a fill that opens a block brings the block, and a put-in
    candidate is the whole function one line longer."""
    from contenox.verify.focus import Place

    asked: list[tuple[int, int, str, str, bool]] = []
    fills = {5: ["return y"], 6: ["return y + 1"], 3: ["return 0"],
             2: ["if factor is None:\n        factor = 2\n    y = 1", "x = abs(x)"]}

    async def infill(path: str, text: str, line: int, column: int, count: int, one_line: bool) -> list[Draft]:
        lines = text.split("\n")
        asked.append((line, column, lines[line - 1].strip(), lines[line + 1].strip(), one_line))
        return [Draft(text=f, round=0, sampled=i > 0, constrained=False) for i, f in enumerate(fills[line])]

    job = _job(tmp_path, tmp_path / "scratch", timeout_s=30.0)
    job.config = VerifyConfig(infill=1, infill_inserts=3)
    job.infill = infill
    job._places = ("scaled (calc.py:1-6, called by test_scaled; found along the failing run)",)
    place = Place(path="calc.py", name="scaled", start=1, end=6, why="called by test_scaled", suspicion=0.9,
                  lines=((6, 0.9),), ran=(1, 3, 5, 6))
    batches = [batch async for batch in job._infilled(place, SCALED)]
    assert asked == [(5, 4, "y = x * factor", "", True), (6, 4, "return y + 1", "", False),  # a line put in: a block
                     (2, 4, '"""x times the factor."""', "if x < 0:", False), (3, 8, "if x < 0:", "return 0", False)]
    assert [[(d.arm, d.line) for d, _ in batch] for batch in batches] == [
        [("infill", 6)], [("insert", 3), ("insert", 3)]]
    lines = SCALED.rstrip("\n").split("\n")
    assert batches[1][0][0].text == "```python\n" + "\n".join(
        [*lines[:2], "    if factor is None:", "        factor = 2", *lines[2:]]) + "\n```"
    assert batches[1][1][0].text == "```python\n" + "\n".join([*lines[:2], "    x = abs(x)", *lines[2:]]) + "\n```"
    assert job._places[-1].endswith("; lines filled in: 1 of 4, lines put in: 3 of 6)")
    job.config = VerifyConfig(infill=0, infill_inserts=1)
    asked.clear()
    assert [batch async for batch in job._infilled(place, SCALED)] == []
    assert asked == [(6, 4, "return y + 1", "", False)]


def test_of_the_passing_candidates_one_that_writes_the_asked_names_is_offered_first() -> None:
    """h11's rename with the 0.5B: every candidate failed the test the model wrote for the change, and a one-line
    change to the function's body (fewer lines) was offered over the rename. With the question's new names, the
    candidates that write them rank first among those that pass; without, fewer changed lines still win."""
    from contenox.answer.renames import renamed_as_asked
    from contenox.node.verifying import _ranked, _Tried
    from contenox.verify.report import CandidateResult

    rename = "--- a/u.py\n+++ b/u.py\n-def bytesify(s):\n+def to_bytes(s):\n-    bytesify(x)\n+    to_bytes(x)\n"
    body = "--- a/u.py\n+++ b/u.py\n-    return s\n+    s = s.to_bytes()\n"  # a use of the name: no rename
    assert renamed_as_asked(rename, ["to_bytes"]) and not renamed_as_asked(body, ["to_bytes"])
    assert renamed_as_asked("+++ b/o.js\n+const normalizeOptions = (options) => {\n", ["normalizeOptions"])
    assert not renamed_as_asked("+++ b/to_bytes.py\n+x = 1\n", ["to_bytes"])  # a file name is no definition

    def tried(index: int, diff: str, changed: int) -> _Tried:
        result = CandidateResult(index=index, round=0, sampled=index > 1, constrained=False, outcome="passed",
                                 diff=diff, changed_lines=changed, reproduced=False)
        return _Tried(result=result, draft=Draft(text="", round=0, sampled=index > 1, constrained=False),
                      edits=ProposedEdits())

    both = [tried(1, rename, 4), tried(2, body, 1)]
    assert [t.result.index for t in _ranked(both, asked=["to_bytes"])] == [1, 2]
    assert [t.result.index for t in _ranked(both)] == [2, 1]


def test_a_checked_candidate_that_adds_none_of_the_asked_definitions_ranks_after_one_that_does() -> None:
    """dotenv's "add rename_key(...)" with the 1.5B: its answer added ``rename_key`` and broke one test; a repair
    candidate that only made ``dict()`` return a copy passed the guard and was offered. A checked candidate that
    adds what the question asks ranks first, passing or not; one whose change did not parse stays after both; no
    definition asked: passing first, as before."""
    from contenox.answer.renames import added_definitions
    from contenox.node.verifying import _ranked, _Tried
    from contenox.verify.report import CandidateResult

    adds = "--- a/m.py\n+++ b/m.py\n+def rename_key(path, old, new):\n+    return set_key(path, new, old)\n"
    copies = "--- a/m.py\n+++ b/m.py\n-        return self._dict\n+        return self._dict.copy()\n"
    calls = "--- a/t.py\n+++ b/t.py\n+    rename_key(path, 'A', 'B')\n"
    assert added_definitions(adds) == {"rename_key"} and added_definitions(copies) == set()
    assert added_definitions(calls) == set()  # a call is no definition
    assert added_definitions("+class PayloadTooLarge(BadPayload):\n") == {"PayloadTooLarge"}

    def tried(index: int, diff: str, outcome: str) -> _Tried:
        result = CandidateResult(index=index, round=0, sampled=index > 1, constrained=False, outcome=outcome,
                                 diff=diff, changed_lines=2, failing=1 if outcome == "failed" else None)
        return _Tried(result=result, draft=Draft(text="", round=0, sampled=index > 1, constrained=False),
                      edits=ProposedEdits())

    three = [tried(1, adds, "failed"), tried(2, copies, "passed"), tried(3, adds, "does_not_parse")]
    assert [t.result.index for t in _ranked(three, added=["rename_key"])] == [1, 2, 3]
    assert [t.result.index for t in _ranked(three)] == [2, 1, 3]
    assert [t.result.index for t in _ranked([*three, tried(4, adds, "passed")], added=["rename_key"])] == [4, 1, 2, 3]


def test_a_one_token_change_of_the_node_ranks_after_the_model_s_candidates_unless_it_passes_cleanly() -> None:
    """A failed mutation is neither offered nor repaired: the model's candidates, even one with no edit, rank first;
    one that passes the check cleanly ranks after the model's passing ones (however many lines they change), one
    that passes by breaking a neighbouring test after every model candidate."""
    from contenox.node.verifying import _ranked, _Tried
    from contenox.verify.report import CandidateResult

    def tried(index: int, outcome: str, arm: str = "turn", broke: tuple[str, ...] = ()) -> _Tried:
        result = CandidateResult(index=index, round=0, sampled=False, constrained=False, outcome=outcome, arm=arm,
                                 diff="d" if outcome != "no_edit" else "", changed_lines=1 if arm == "mutation" else 3,
                                 failing=1 if outcome == "failed" else None, broke=broke)
        return _Tried(result=result, draft=Draft(text="", round=0, sampled=False, constrained=False, arm=arm),
                      edits=ProposedEdits())

    failed = [tried(1, "no_edit"), tried(2, "failed"), tried(3, "failed", "mutation")]
    assert [t.result.index for t in _ranked(failed)] == [2, 1, 3]
    passing = [tried(1, "passed"), tried(2, "passed", "mutation"), tried(3, "passed", "mutation", ("t::x",))]
    assert [t.result.index for t in _ranked(passing)] == [1, 2, 3]
    assert [t.result.index for t in _ranked(passing[1:])] == [2, 3]


def test_a_change_written_at_a_place_gets_the_export_the_question_asks_as_the_turn_s_does(tmp_path: Path) -> None:
    """docstring_parser's "export DocstringExample" with the 1.5B: the offered candidate rewrote the class's
    constructor at the place the test's run found and left out the export the turn's own answer had (the node's
    export step ran on the turn's answers only). A focused rewrite now gets what any change gets."""
    from contenox.answer.imports import complete_imports
    from contenox.verify.focus import Place

    common = ("class DocExample:\n    def __init__(self, args):\n        self.args = args\n\n\n"
              "class DocRaises:\n    pass\n")
    files = {"pkg/__init__.py": "from .common import DocRaises\n\n__all__ = [\"DocRaises\"]\n", "pkg/common.py": common}
    question = "DocExample cannot be imported from pkg itself, unlike DocRaises. Export it from the package."
    spans = {"DocExample": [("pkg/common.py", 1, 3)], "DocRaises": [("pkg/common.py", 6, 7)]}
    job = _job(tmp_path, tmp_path / "scratch", timeout_s=30.0)
    job.read = files.get
    job.complete = lambda edits: complete_imports(edits, files.get, lambda name: spans.get(name, []), question)
    place = Place(path="pkg/common.py", name="__init__", start=2, end=3, why="constructor of DocExample")
    rewrite = "```python\n    def __init__(self, args):\n        self.args = list(args)\n```"
    placed = job._rewrite(place, rewrite)
    edits = {e.path: e.new_text for e in placed.edits}
    assert set(edits) == {"pkg/common.py", "pkg/__init__.py"}
    assert "self.args = list(args)" in (edits["pkg/common.py"] or "")
    assert "DocExample" in (edits["pkg/__init__.py"] or "") and placed.notes[-1].startswith("`DocExample` (pkg/common.py) "
                                                                                         "exported from its package")
    assert job._rewrite(place, "```python\n    def __init__(self, args):\n        self.args = args\n```").edits == ()


def test_of_two_failing_candidates_the_run_that_got_further_ranks_first() -> None:
    """A trial (the 0.5B, `pytest -x`, nothing passed): the greedy answer deleted the package's imports, its run
    stopped at collection ("1 error", none passed), the same one failure as a change that left the imports alone,
    and as the earlier candidate it was offered. More passing tests now break a tie on the failing ones."""
    from contenox.node.verifying import _ranked, _Tried
    from contenox.verify.report import CandidateResult, failing_tests, passing_tests

    broken = "ERROR tests/test_slug.py - ImportError: cannot import name 'slugify'\n!!! stopping !!!\n1 error in 0.21s"
    wrong = "FAILED tests/test_slug.py::test_accents_are_folded - AssertionError\n1 failed, 1 passed in 0.70s"
    further = "FAILED tests/test_slug.py::test_cut_at_a_dash - AssertionError\n1 failed, 2 passed in 0.72s"
    assert [(failing_tests(o), passing_tests(o)) for o in (broken, wrong, further)] == [(1, 0), (1, 1), (1, 2)]

    def tried(index: int, output: str) -> _Tried:
        result = CandidateResult(index=index, round=0, sampled=index > 1, constrained=False, outcome="failed",
                                 diff="d", changed_lines=2, failing=failing_tests(output),
                                 passing=passing_tests(output))
        return _Tried(result=result, draft=Draft(text="", round=0, sampled=index > 1, constrained=False),
                      edits=ProposedEdits())

    assert [t.result.index for t in _ranked([tried(1, broken), tried(2, wrong), tried(3, further)])] == [3, 2, 1]


def test_a_change_drawn_on_top_of_another_is_one_change_from_the_files_as_they_were() -> None:
    """Two steps, one change: each file from its text before the first step to its text after both; a file only
    one step edits as that step leaves it; an edit not written over the first step's text is no such change."""
    from contenox.answer.edits import ProposedEdit, ProposedEdits, unified_diff
    from contenox.node.verifying import _on_top

    def edit(path: str, old: str | None, new: str | None) -> ProposedEdit:
        return ProposedEdit(path=path, old_text=old, new_text=new, diff=unified_diff(path, old, new), blocks=1)

    a0, a1, a2 = "x = 1\ny = 2\n", "x = 1\ny = 3\n", "x = 0\ny = 3\n"
    under = ProposedEdits(edits=(edit("a.py", a0, a1), edit("c.py", "c\n", "C\n")))
    both = _on_top(under, ProposedEdits(edits=(edit("a.py", a1, a2), edit("b.py", None, "new\n"))))
    assert both is not None
    assert [(e.path, e.old_text, e.new_text) for e in both.edits] == [
        ("a.py", a0, a2), ("c.py", "c\n", "C\n"), ("b.py", None, "new\n")]
    assert both.diff == unified_diff("a.py", a0, a2) + unified_diff("c.py", "c\n", "C\n") + unified_diff("b.py", None, "new\n")
    # the second step takes the first back: that file is no longer changed
    assert [e.path for e in _on_top(under, ProposedEdits(edits=(edit("a.py", a1, a0),))).edits] == ["c.py"]
    # read against the workspace as it is, not over the first step: not one change
    assert _on_top(under, ProposedEdits(edits=(edit("a.py", a0, a2),))) is None


def test_lines_found_in_a_file_before_a_change_are_where_that_change_leaves_them() -> None:
    from contenox.node.verifying import _mover

    before = "A = {\n    1: 2,\n}\n\n\ndef f():\n    return A\n"
    after = "A = {\n    1: 2,\n    3: 4,\n}\n\n\ndef f():\n    return A\n"
    move = _mover(before, after)
    assert (move(6), move(7)) == (7, 8)  # below the line put in: one down
    assert (move(1), move(3)) == (1, 4)  # around it: one longer
    assert [_mover(before, before)(n) for n in (1, 6, 7)] == [1, 6, 7]


def test_a_search_builds_on_a_candidate_only_when_its_run_got_further() -> None:
    from contenox.node.verifying import _improves
    from contenox.verify import CandidateResult, CheckRun

    before = CheckRun(command="pytest", outcome="failed", exit_code=1, output="FAILED a\nFAILED b\n2 failed, 1 passed in 0.1s",
                      seconds=0.1)

    def run(failing: int | None, passing: int | None, outcome: str = "failed") -> CandidateResult:
        return CandidateResult(index=2, round=0, sampled=False, constrained=False, outcome=outcome,  # type: ignore[arg-type]
                               failing=failing, passing=passing)

    assert _improves(run(1, 2), before)
    assert not _improves(run(2, 1), before)  # as before
    assert not _improves(run(1, 0), before)  # fewer failing, but stopped at collection: none passing
    assert not _improves(run(None, None), before)  # its output does not count
    assert not _improves(run(1, 2, "timeout"), before)
    assert not _improves(run(1, 2), CheckRun(command="node t.js", outcome="failed", exit_code=1, output="Error: boom",
                                             seconds=0.1))


def test_a_change_found_in_steps_says_each_step_under_it_first_to_last() -> None:
    from contenox.node.verifying import stacked_said
    from contenox.verify import CandidateResult, Verification

    def candidate(index: int, failing: int | None, on: int = 0) -> CandidateResult:
        return CandidateResult(index=index, round=0, sampled=False, constrained=False,
                               outcome="failed" if failing else "passed", failing=failing, on=on,
                               answer=f"step {index}")

    report = Verification(status="passed", failed_before=("t::a", "t::b", "t::c"),
                          candidates=(candidate(1, 3), candidate(2, 2), candidate(3, 1, on=2), candidate(4, None, on=3)))
    assert stacked_said(report, report.candidates[3]) == (
        "Found in three steps.\n\nFirst, candidate 2's change, with which 2 of the 3 tests that failed before still "
        "failed:\n\nstep 2\n\nThen, candidate 3's change, drawn on top of it, with which 1 of the 3 tests that failed "
        "before still failed:\n\nstep 3\n\nThen, drawn on top of it (the change offered holds all of them):")
    assert stacked_said(report, report.candidates[2]).startswith("Found in two steps.\n\nFirst, candidate 2's change")
    assert stacked_said(report, report.candidates[1]) == ""


def test_a_failing_run_that_passed_no_test_ranks_after_one_that_passed_some() -> None:
    """dotenv's inline comment with the 0.5B: a fill renamed ``parse_value``, the run stopped at collection with
    one error, which counted fewer failing than the two failing tests before; it was offered as the closest. A run
    that passed none now ranks after every run that passed some, whatever it counts failing."""
    from contenox.node.verifying import _ranked, _Tried
    from contenox.verify.report import CandidateResult

    def tried(index: int, failing: int, passing: int | None) -> _Tried:
        result = CandidateResult(index=index, round=0, sampled=True, constrained=False, outcome="failed",
                                 failing=failing, passing=passing)
        return _Tried(result=result, draft=Draft(text="", round=0, sampled=True, constrained=False),
                      edits=ProposedEdits())

    runs = [tried(1, 2, 40), tried(2, 1, 0), tried(3, 1, 41), tried(4, 3, None)]
    assert [t.result.index for t in _ranked(runs)] == [3, 1, 4, 2]
