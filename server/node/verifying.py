"""Verified fixes: a change turn's candidates, drawn from its one prefilled prompt, each tested in a scratch copy
of the workspace with the check command, the passing one offered.

The turn's own (greedy) answer is candidate 1; ``verify.candidates - 1`` sampled answers are drawn from the same
token ids as one group, so they decode side by side and the prompt's prefix is already cached. Sampled
candidates are generated under a grammar that makes each an edit block of the target file's real lines. Each
candidate is resolved with the node's edit machinery (renames carried), laid on the scratch copy and checked.
If none passes, a repair round appends the best candidate and its failing output to the turn (as the thread
records it: append-only, so the next round prefills only that) and draws again. Consent comes first: the
request's, the workspace's remembered answer, or the client's question.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import difflib
import io
import logging
import os
import re
import shutil
import sys
import textwrap
import threading
import time
import tokenize
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path

import msgspec

from contenox.answer.edits import ProposedEdit, ProposedEdits, unified_diff
from contenox.answer.imports import unbound_names
from contenox.answer.questions import (
    asks_for_change,
    asks_only_to_read,
    asks_questions_only,
    asks_test_change,
    asks_to_edit,
    explains_only,
)
from contenox.answer.renames import added_definitions, asked_names, renamed_as_asked
from contenox.config import VerifyConfig
from contenox.errors import ContenoxError, VerifyError
from contenox.node.contract import CommandResult, ConsentAsker, ToolActivity, TurnEvent, TurnRequest
from contenox.planner.journal import ToolStep
from contenox.verify import (
    CandidateResult,
    CheckCommand,
    CheckRun,
    ConsentStore,
    EditLike,
    ScratchTree,
    Verification,
    changed_lines,
    choice_grammar,
    code_unchanged,
    consent_scope,
    covered_by,
    edit_block_grammar,
    edit_blocks_grammar,
    failed_test_ids,
    failed_test_names,
    failing_tests,
    frames,
    function_grammar,
    is_test_path,
    line_repair,
    number_grammar,
    passing_tests,
    project_test_command,
    python_env,
    resolve_check_command,
    run_check,
    source_words,
    spectrum_command,
    suite_command,
    test_file_command,
    undefined_names,
    unparsable,
    unusable_terminal_command,
)
from contenox.verify.focus import (
    FOCUS_SYSTEM,
    LINE_SYSTEM,
    LOCALIZE_SYSTEM,
    Place,
    blind,
    entry_key,
    failing_test_frames,
    filled_lines,
    focus_prompt,
    for_language,
    insertion_points,
    language,
    line_pick_prompt,
    line_prompt,
    localize_prompt,
    pickable_lines,
    places,
    relevance,
    values_used,
    with_traced,
)
from contenox.verify.mutate import literal_words, mutants
from contenox.verify.report import LINT_SAID, CandidateOutcome, worse_than_before
from contenox.verify.trace import Ran, ran_functions, read_trace, span_of, trace_env
from contenox.verify.usable import narrowed_command, unknown_fixtures, unusable
from contenox.workspace import dropped_returns

__all__ = ["Draft", "ScratchCommands", "VerifyJob", "asks_for_change", "asks_only_to_read", "asks_questions_only",
           "asks_to_edit", "consent", "explains_only", "strip_edit_blocks"]

log = logging.getLogger(__name__)

_PATH_LINE = r"(?:^[ \t]*`?[\w./-]+\.\w{1,8}`?:?[ \t]*\n)?"
_BLOCK = re.compile(_PATH_LINE + r"(?:^[ \t]*(?:```+|~~~+)[^\n]*\n)?" + _PATH_LINE
                    + r"^[ \t]*<{5,9} ?SEARCH\b.*?^[ \t]*>{5,9} ?REPLACE\b[^\n]*\n?(?:^[ \t]*(?:```+|~~~+)[ \t]*\n?)?",
                    re.MULTILINE | re.DOTALL)
"""An edit block with the path line and code fence around it."""
_FENCE = re.compile(r"^```[\w+-]*[ \t]*\n(.*?)(?:^```|\Z)", re.MULTILINE | re.DOTALL)
"""A code block's lines (an unclosed one to the end: the answer ran out of tokens)."""


def strip_edit_blocks(text: str) -> str:
    """``text`` without its edit blocks (the path line, fences and markers with them): the answer's prose."""
    return re.sub(r"\n{3,}", "\n\n", _BLOCK.sub("", text)).strip()


async def consent(command: str, root: Path, request: TurnRequest, consents: ConsentStore,
                  asker: object | None) -> str | None:
    """The one consent to run a project command in a scratch copy (a verification's check, or an agent turn's
    command after it proposed an edit): None when ``command`` may run in ``root``, else why not (in words).
    The request's word first, then the workspace's remembered answer (a pytest command allowed covers the ones the
    node derives from it: the failing tests' whole files, the whole suite, the check less what cannot run;
    :func:`covered_by`), then the client's question, which says what else it covers (remembered)."""
    if request.verify is False:
        return "running commands is off for this request"
    if request.verify is True:
        return None
    remembered = await asyncio.to_thread(consents.get, str(root), command)
    if remembered is True:
        return None
    if remembered is False:
        return f"you declined running `{command}` in this workspace (`contenox verify off` asks again)"
    allowed = await asyncio.to_thread(consents.list, str(root))
    if any(c.allowed and covered_by(command, c.command) for c in allowed):  # the check's own tests, run another way
        return None
    if isinstance(asker, ConsentAsker):
        answer = await asker.allow_check(command, str(root), consent_scope(command))
        if answer is not None:
            await asyncio.to_thread(consents.set, str(root), command, answer)
            return None if answer else f"you declined running `{command}`"
    return f"running `{command}` needs your consent: `contenox ask --verify`, or allow it when the editor asks"


async def check_in(tree: Path, command: str, request: TurnRequest, config: VerifyConfig,
                   trace: Path | None = None, hang_s: float = 0.0) -> CheckRun:
    """``command`` run in the scratch copy ``tree`` by the one command runner, with the request's environment
    (the copy first on the import path); a cancelled turn stops it (its process group killed). ``trace``: a
    folder where the run's calls of the copy's functions are recorded (:mod:`contenox.verify.trace`).
    ``hang_s``: a candidate's run stopped as hung sooner than ``verify.timeout_s`` once it is also quiet for
    ``verify.hang_quiet_s`` (0: not)."""
    env = python_env(tree, {**os.environ, **(request.env or {})})
    if trace is not None:
        env = await asyncio.to_thread(trace_env, env, trace, tree)
    stop = threading.Event()
    quiet = f", and no output for {config.hang_quiet_s:g} s" if config.hang_quiet_s > 0 else ""
    check = asyncio.ensure_future(asyncio.to_thread(
        run_check, command, tree, env=env, timeout_s=config.timeout_s, max_output_chars=config.max_output_chars,
        stop=stop, hang_s=hang_s if 0 < hang_s < config.timeout_s else 0.0, quiet_s=config.hang_quiet_s,
        hang_limit=f"hung: over {config.hang_factor:g}x the check's run without a change + {config.hang_extra_s:g} s"
                   f"{quiet} (verify.hang_factor, verify.hang_extra_s, verify.hang_quiet_s)"))
    try:
        return await asyncio.shield(check)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([check], timeout=10)
        raise


class ScratchCommands:
    """An agent turn's commands once it has proposed an edit: run by the one command runner in the workspace's
    scratch copy (the folder verification uses) with the proposed edits laid over it, after the same consent as
    a check command. The command then tests the change the model proposed, not the files as they are, and the
    user's files and terminal are untouched (the edits are still only offered after the turn)."""

    def __init__(self, *, root: Path, scratch_folder: Path, request: TurnRequest, consents: ConsentStore,
                 asker: object | None, overlays: dict[str, str], config: VerifyConfig) -> None:
        self.root, self.request, self.consents, self.asker = root, request, consents, asker
        self.scratch = ScratchTree(root, scratch_folder)
        self.overlays = overlays
        self.config = config

    async def run(self, command: str, edits: Sequence[ProposedEdit]) -> CommandResult:
        """``command`` in a fresh scratch copy with ``edits`` (the turn's proposed edits so far, one per file)
        applied; the copy is removed after."""
        if why := await consent(command, self.root, self.request, self.consents, self.asker):
            return CommandResult(ran=False, reason=why)
        latest = {edit.path: EditLike(path=edit.path, old_text=edit.old_text, new_text=edit.new_text)
                  for edit in edits}  # one per file already (the loop keeps the latest); the last wins
        try:
            await asyncio.to_thread(self.scratch.build, self.overlays)
            why = await asyncio.to_thread(self.scratch.apply, list(latest.values()))
            if why:
                return CommandResult(ran=False, reason=f"the proposed edits do not apply: {why}")
            run = await check_in(self.scratch.tree, command, self.request, self.config)
        except VerifyError as exc:
            return CommandResult(ran=False, reason=f"the scratch copy could not be made: {exc.message}")
        finally:
            await asyncio.to_thread(self.scratch.remove)
        where = (f"run in a scratch copy of the workspace with the proposed edit(s) to {', '.join(latest)} "
                 "applied; the user's files are unchanged")
        if run.outcome not in ("passed", "failed"):
            return CommandResult(ran=False, output=run.output, reason=f"{run.describe()} ({where})")
        return CommandResult(ran=True, exit_code=run.exit_code, output=f"({where})\n{run.output}")


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """One drawn answer: its text and how it was drawn."""

    text: str
    round: int
    sampled: bool
    constrained: bool
    decode_s: float = 0.0
    tokens: int = 0
    recomputed_tokens: int = 0
    arm: str = "turn"
    """``turn`` (the turn's prompt), ``edit-step`` (the turn's answer, its edit blocks from the edit step),
    ``focused`` (a short prompt of one localized function), ``line`` (the same, with one line of it to change),
    ``infill`` (one line of it filled in by the model's fill-in-the-middle), ``insert`` (a line put in, filled in
    the same way), ``mutation`` (one token of a line changed by the node: no model, no decoding) or ``repair``."""
    line: int = 0
    """The file line a ``line``, ``infill`` or ``mutation`` draft changes, or an ``insert`` draft's line has."""
    change: str = ""
    """What a ``mutation`` draft changed on its line, in words ("`>` to `>=`")."""
    token_ids: tuple[int, ...] = ()
    """The tokens drawn (an answer cut short goes on from them)."""
    cut: bool = False
    """It stopped at the token limit, not at its end."""


Generate = Callable[[list[int], int, int, bool, list[str]], Awaitable[list[Draft]]]
"""(prompt ids, round, how many, include a greedy one, grammars the sampled ones take in turn) -> the drafts."""
DrawFocused = Callable[[str, str, int, str, str], Awaitable[list[Draft]]]
"""(system, user message, how many, grammar, the answer's beginning) -> drafts of a fresh short prompt: a greedy
one, then sampled ones. The beginning ('' for none) is written into the answer before its first drawn token, so
it costs prefill, not decoding; the drafts' text is what was drawn after it."""
Infill = Callable[[str, str, int, int, int, bool], Awaitable[list[Draft]]]
"""(path, the file's text with one line emptied past its indentation, that line (0-based), its indentation's
width, how many, whether a fill ends with its line) -> the model's fills of that line (fill-in-the-middle: a greedy
one, then sampled ones), each draft's text what was drawn; none when the model has no FIM format. A fill that ends
with its line stops at its first line break (only its first line is used: the decoding after it was waste); a line
put in may open a block, whose lines come with it. The prompt is the file around the line alone: showing the
failing tests before it (Qwen2.5-Coder's repo-level form) was tried on 2026-12-07 and cost the 1.5B 1.5-3x the
verification time on five bug and trace tasks with no pass gained (README, Verified fixes)."""
Locate = Callable[[str], list[tuple[str, int, int]]]
"""A symbol's definitions: (path, first line, last line)."""
_TARGETS = 3
"""Places a round's sampled candidates are spread over."""
_CHANGE_BLOCKS = 4
"""Edit blocks a sampled candidate of a new behaviour may write (see :meth:`VerifyJob._grammars`)."""
_POOL = 10
"""Places a localization offers the model (``[verify] localize``)."""
_ANSWER_ARMS = ("turn", "edit-step")
"""The arms whose candidates are the turn's own answer to the question (the rest: the node's search for a change)."""
_RELATED, _RELATED_LINES = 3, 30
"""A focused prompt shows up to three other methods of its place's class, each under 30 lines."""
Emit = Callable[[TurnEvent], Awaitable[None]]


class _Tried(msgspec.Struct, frozen=True, kw_only=True):
    result: CandidateResult
    draft: Draft
    edits: ProposedEdits


class VerifyJob:
    """One turn's verification; :meth:`run` returns the report, the chosen answer and its edits, and the repair
    steps the chosen answer came after (recorded with the turn)."""

    def __init__(self, *, config: VerifyConfig, request: TurnRequest, root: Path, scratch_folder: Path,
                 consents: ConsentStore, asker: object | None, emit: Emit, propose: Callable[[str], ProposedEdits],
                 read: Callable[[str], str | None], locate: Locate, generate: Generate, step_ids: Callable[[list[ToolStep]], list[int]],
                 overlays: dict[str, str], paths: Sequence[str], draw_focused: DrawFocused | None = None,
                 infill: Infill | None = None,
                 complete: Callable[[ProposedEdits], ProposedEdits] | None = None) -> None:
        self.config = config
        self.request = request
        self.root = root
        self.scratch = ScratchTree(root, scratch_folder)
        self.consents = consents
        self.asker = asker
        self.emit = emit
        self.propose = propose
        self.complete = complete or (lambda edits: edits)
        """What the node adds to a change written at a place (a focused rewrite, a line's fill) as to the turn's:
        the imports it leaves undone and the export the question asks for."""
        self._read = read
        self._locate = locate
        self.generate = generate
        self.step_ids = step_ids
        self.overlays = overlays
        self.paths = list(paths)
        self.draw_focused = draw_focused
        """Draws a focused repair's candidates (None, or ``[verify] focused = false``: none are drawn)."""
        self.infill = infill
        """Fills a place's line in (None, or ``[verify] infill = 0``: none is filled)."""
        self._checked: dict[str, CandidateResult] = {}
        self._apply_s = 0.0
        self._check_s = 0.0
        self._decode_s = 0.0
        """Wall time of the candidates' rounds of decoding (a round's candidates decode side by side)."""
        self._places: tuple[str, ...] = ()
        self._found: tuple[str, ...] = ()
        self._traced: int | None = None
        self._spectrum_note = ""
        self._ran: list[Ran] = []
        """The workspace's functions the failing tests ran (the first check traced), most suspicious first."""
        self._guard = False
        """The check passed before any change."""
        self._repro: tuple[str, str, str] | None = None
        """The test the model wrote for the change, when it failed before it: (path, code, the command that
        runs it alone); the first of ``self._tests`` when several were kept."""
        self._tests: list[str] = []
        """Every test written for the change that was kept (each failed before it), laid at the path in turn."""
        self._written_runs_made = 0
        self._repro_note = ""
        self._started = time.monotonic()
        self._left: list[str] = []
        """What the search left untried when ``verify.budget_s`` ran out (empty: it ran its course)."""
        self._regression: str | None = None
        """The failing tests' whole files, run to completion (:func:`spectrum_command`), or for a Node one-off
        check the project's own tests (:func:`project_test_command`): a candidate that passes the check runs it
        too, so a change that makes the failing test pass by breaking its neighbours is seen."""
        self._suite: str | None = None
        """The project's whole pytest suite (:func:`suite_command`), when the check names test files or ids: run
        after the regression run for a candidate that passed both, so a change that breaks a test elsewhere is
        seen too."""
        self._suite_note = ""
        """How the suite ran before any change, what it left out, or why it is not held against candidates."""
        self._unchanged_s = 0.0
        """The longest run of the check without a candidate (before any change, the failing tests' files run
        whole) that ended by itself: what a candidate's run is stopped as hung against."""
        self._held: frozenset[str] = frozenset()
        """The failing tests' files, when the check is the project's failing run and the question does not ask for a
        test to change: a candidate's edits of them are left out (checked and offered without them), as a fix is
        checked against the tests as they are (SWE-bench resets them too; the 0.5B's first candidate to an invoice
        question rewrote the failing test to drop its quantity, and it passed)."""
        self._before: dict[str, tuple[frozenset[str], bool]] = {}
        """For the regression run and the suite's: the tests each failed on the workspace as it was, and whether it
        passed (the traced spectrum run's, when it ran; else run when first needed)."""
        self._named = literal_words(request.prompt)
        """The words the question writes as literals ("It should use NFKD"): one-token changes put them in a string
        literal of their kind."""
        self._stack: _Tried | None = None
        """The candidate the search now runs on top of (``[verify] stack``): its change is under every candidate
        drawn since, which is read, localized and written over its files' texts, and checked and offered with it."""
        self._stacked: dict[str, str | None] = {}
        """The texts of the files that candidate's change edits, as it leaves them."""
        self._moves: dict[str, Callable[[int], int]] = {}
        """For each of those files, where a line of its text before that change is in the text after it."""

    # -- the workspace, with the test written for the change ----------------------------------------
    def read(self, path: str) -> str | None:
        """A workspace file's text; the test written for the change, kept, at its path (it lives in the scratch
        copy alone, and its failing run is what the change is localized from)."""
        if self._repro is not None and path == self._repro[0]:
            return self._repro[1]
        if path in self._stacked:
            return self._stacked[path]
        return self._read(path)

    def locate(self, name: str) -> list[tuple[str, int, int]]:
        """A symbol's definitions in the workspace, and in the test written for the change (its test function)."""
        found = self._locate(name)
        if self._moves:  # the workspace's index knows its files before the change under the search
            found = [(path, move(a), max(move(a), move(b))) if (move := self._moves.get(path)) else (path, a, b)
                     for path, a, b in found]
        if self._repro is not None and self._repro[0].endswith(".py"):
            found = [*found, *((self._repro[0], a, b) for a, b in _defined_in(self._repro[1], name))]
        return found

    # -- when ------------------------------------------------------------------------------------
    def command(self) -> CheckCommand | None:
        return resolve_check_command(self.root, terminal=self.request.terminal, configured=self.config.command,
                                     paths=self.paths, request=self.request.prompt)

    def no_command(self) -> str:
        """Why no check command was found, in words."""
        first = unusable_terminal_command(self.root, self.request.terminal) or "no failing run in the terminal output"
        return f"no check command: {first}, no [verify] command, and no test runner detected"

    async def consented(self, command: CheckCommand) -> str | None:
        """None when the command may run, else why not (in words)."""
        return await consent(command.command, self.root, self.request, self.consents, self.asker)

    # -- the rounds ------------------------------------------------------------------------------
    async def _generate(self, ids: list[int], round_: int, count: int, greedy: bool,
                        grammars: list[str]) -> list[Draft]:
        began = time.monotonic()
        try:
            return await self.generate(ids, round_, count, greedy, grammars)
        finally:
            self._decode_s += time.monotonic() - began

    async def run(self, greedy: Draft, greedy_edits: ProposedEdits, prompt_ids: list[int],
                  command: CheckCommand) -> tuple[Verification, _Tried, list[ToolStep]]:
        started = self._started = time.monotonic()
        await asyncio.to_thread(self.scratch.build, self.overlays)
        try:
            command, baseline = await self._usable_baseline(command)
            why = unusable(command.command, baseline.outcome, baseline.exit_code, baseline.output)
            if why and self._reproducible() and _scripted(self.scratch.tree):
                # the project's check cannot run here (semver's `npm test` wants `tap`, which no install put
                # there): a test of the change the model writes, run by node, stands in for it when it fails for
                # want of the change
                if (written := await self._script_reproduction(command, greedy, greedy_edits, why)) is not None:
                    command, baseline, why = *written, None
            if why:
                # every candidate would end as the workspace did: none is drawn, the turn's answer stands (and
                # the user is told if its edit leaves a file that no longer parses: that much is known without it)
                if broken := await asyncio.to_thread(_unparsable, greedy_edits):
                    why += f"; the answer's edit does not parse: {broken[0]}"
                elif linted := await asyncio.to_thread(_linted, greedy_edits):
                    why += f"; the answer's edit {LINT_SAID[linted[0]]}: {linted[1][0]}"
                report = Verification(status="skipped", reason=why, baseline=baseline.outcome,
                                      command=command.command, command_source=command.source,
                                      command_detail=command.detail, check_s=round(self._check_s, 2),
                                      wall_s=round(time.monotonic() - started, 2), reproduction_note=self._repro_note)
                return report, _Tried(result=CandidateResult(index=1, round=0, sampled=False, constrained=False,
                                                             outcome="no_edit"),
                                      draft=greedy, edits=greedy_edits), []
            # A check that already passes without any change tells a change that breaks nothing from one that
            # breaks something, not a right change from a wrong one: then only the turn's own answer is checked
            # (and repaired if it breaks the check); sampled candidates, which could pass with any harmless edit,
            # are drawn only in repair rounds and rank after the round's greedy answer. (Nor when the turn's answer
            # wrote no change: drawn then, in 9 such turns of the 0.5B, the offered ones were 9 harmless wrong
            # edits, a comment, a docstring, a typo in `__all__`, and none did what was asked.)
            guard = baseline.passed
            self._guard = guard
            before = baseline
            if guard and self._reproducible():
                # a test of the change asked for, so that candidates can be told apart (not of an answer's own edit
                # to a question that asked for none: the 1.5B's to "does loading the .env overwrite it?")
                before = await self._reproduction(command, greedy) or baseline
            tried: list[_Tried] = []
            steps: list[ToolStep] = []
            step_at: dict[int, list[ToolStep]] = {0: []}
            if guard and self._repro is None:
                tried.append(await self._try(greedy, greedy_edits, command, 1))
            else:
                pending = asyncio.ensure_future(self._generate(prompt_ids, 0, self.config.candidates - 1, False,
                                                               self._grammars(greedy_edits,
                                                                              greedy.arm == "edit-step")))
                try:
                    tried.append(await self._try(greedy, greedy_edits, command, len(tried) + 1))
                    drafts = await pending
                finally:
                    if not pending.done():
                        pending.cancel()
                for draft in drafts:
                    tried.append(await self._try(draft, None, command, len(tried) + 1))
                # localized from the failing run: the check's, or with a check that guards, the failing run of
                # the test written for the change (the 1.5B's test of a new `digest_method` argument failed with a
                # TypeError in its call of `Serializer(...)`: the constructor is the place)
                by_test = self._repro is not None and guard
                if not _any_clean(tried) and (not guard or by_test):
                    failing = CheckCommand(command=self._repro[2], source="written") if by_test and self._repro \
                        else command
                    await self._search(failing, before, command, tried)
            asked = asked_names(self.request.prompt)  # a rename question's new names
            added = self._new_names()  # the definitions the question asks to add
            if not guard:
                # before the repair rounds, which under a failing check almost never pass (2 of 852 repair
                # candidates over the recorded evals' bug and trace tasks) and spend most of `verify.budget_s` (the
                # 1.5B's searches stopped there before any search on top of a candidate); the rounds then repair
                # over the files as they are
                await self._stacked_search(command, baseline, tried, asked, added)
                self._stack, self._stacked, self._moves = None, {}, {}
            rounds = 0
            repaired: set[int] = set()
            while not _any_clean(tried, added) and rounds < self.config.rounds:
                if self._spent():
                    self._left.append(f"{self.config.rounds - rounds} repair round(s)")
                    break
                # repair the best of the latest round (an earlier one again would repeat a prompt already drawn)
                latest = [t for t in tried if t.draft.round == rounds and t.result.index not in repaired] or [
                    t for t in tried if t.result.index not in repaired]
                best = _ranked(latest, asked=asked, added=added)[0] if latest else None
                if best is None or best.result.outcome == "no_edit":
                    break
                repaired.add(best.result.index)
                rounds += 1
                steps = [*step_at[best.draft.round], ToolStep(call=best.draft.text.strip(),
                                                              result=_repair_message(command, best.result))]
                step_at[rounds] = steps
                drafts = await self._generate(self.step_ids(steps), rounds, self.config.candidates, True,
                                              self._grammars(best.edits))
                for draft in [msgspec.structs.replace(d, arm="repair") for d in drafts]:
                    tried.append(await self._try(draft, None, command, len(tried) + 1))
            chosen = _ranked(tried, guard=guard, asked=asked, added=added)[0]
        finally:
            await asyncio.to_thread(self.scratch.remove)
        repro = self._repro
        # a check that passed before any change, passed with it: guarded, whatever became of the test written for
        # the change (the summary says which)
        passed = chosen.result.clean_pass or (guard and chosen.result.outcome == "passed" and not chosen.result.broke)
        # none passed: the best is offered as the change closest to passing, unless it does worse than no change,
        # or it is one the node searched for (not the turn's own answer) and does no better: it fixed nothing
        withheld = worse_than_before(chosen.result, baseline.output, baseline.outcome,
                                     or_no_better=chosen.draft.arm not in _ANSWER_ARMS) \
            if not passed and not guard and chosen.result.outcome in ("failed", "timeout") else ""
        report = Verification(
            status="passed" if passed else "failed", baseline=baseline.outcome,
            command=command.command, command_source=command.source,
            command_detail=command.detail, candidates=tuple(t.result for t in tried), chosen=chosen.result.index,
            rounds=rounds, places=self._places, found=self._found, traced=self._traced,
            spectrum=self._spectrum_note, suite=self._suite_note,
            decode_s=round(greedy.decode_s + self._decode_s, 2),
            apply_s=round(self._apply_s, 2), check_s=round(self._check_s, 2), wall_s=round(time.monotonic() - started, 2),
            failed_before=failed_test_ids(before.output) or tuple(
                f"{path}::{function}" for path, _, function in failing_test_frames(before.output, self.root))
            or failed_test_names(before.output),
            reproduction=repro[1] if repro else "", reproduction_path=repro[0] if repro else "",
            written_tests=tuple(self._tests) if len(self._tests) > 1 else (),
            reproduction_note=self._repro_note, withheld=withheld,
            stopped=(f"no more candidates drawn after {self.config.budget_s:.0f} s (verify.budget_s); not tried: "
                     + ", ".join(self._left)) if self._left else "")
        return report, chosen, step_at[chosen.draft.round]

    def _spent(self) -> bool:
        """``verify.budget_s`` has run out: no more candidates are drawn."""
        return 0 < self.config.budget_s <= time.monotonic() - self._started

    async def _search(self, failing: CheckCommand, before: CheckRun, command: CheckCommand,
                      tried: list[_Tried]) -> None:
        """The focused round: ``failing``'s run (``before``) localized, place by place until a candidate passes
        ``command``; each candidate is appended to ``tried``."""
        async with aclosing(self._focused(failing, before, command)) as batches:
            async for batch in batches:  # place by place, until one passes
                for draft, place in batch:
                    tried.append(await self._try(draft, None, command, len(tried) + 1, place=place))
                if _any_clean(tried):
                    # a one-token change that passes says which line is wrong: the model fills that line in before
                    # it is offered (its own fix ranks first: a mutant may pass a narrow check by a hack,
                    # `secret_keys[-2:]` where the loop should try them all)
                    clean = next(t for t in tried if t.result.clean_pass)
                    if clean.draft.arm == "mutation" and (source := self.read(place.path)):
                        async for fills in self._infilled(place, source, only=clean.draft.line):
                            for draft, at in fills:
                                tried.append(await self._try(draft, None, command, len(tried) + 1, place=at))
                    break
                if self._spent():
                    self._left.append("the focused round's places after the last one drawn")
                    break

    async def _stacked_search(self, command: CheckCommand, baseline: CheckRun, tried: list[_Tried],
                              asked: Sequence[str], added: Sequence[str]) -> None:
        """None passed, but the closest candidate made some of the failing tests pass: the search again, on top of
        its change (``[verify] stack`` times at most, each on the closest so far when it did better than the one
        before): its run in the scratch copy localized anew, every candidate written over the files as that change
        leaves them and checked with it. A fix of two entries of a table, or two hunks, is two steps of a search
        that finds one line at a time."""
        below = baseline
        for _ in range(max(0, self.config.stack)):
            if _any_clean(tried) or self.draw_focused is None or not self.config.focused:
                return
            best = _ranked(tried, asked=asked, added=added)[0]
            if (self._stack is not None and best.result.index == self._stack.result.index) or \
                    not _improves(best.result, below):
                return
            if self._spent():
                self._left.append(f"a search on top of candidate {best.result.index}, which made some of the failing "
                                  "tests pass")
                return
            self._stack = best
            self._stacked = {e.path: e.new_text for e in best.edits.edits}
            self._moves = {e.path: _mover(e.old_text or "", e.new_text or "") for e in best.edits.edits}
            why = await asyncio.to_thread(self.scratch.apply, [EditLike(path=e.path, old_text=e.old_text,
                                                                        new_text=e.new_text) for e in best.edits.edits])
            if why:
                self._stack, self._stacked, self._moves = None, {}, {}
                return
            # the report's, and what a candidate is held to, stay the code's as it was
            kept = (dict(self._before), self._traced, self._spectrum_note, self._regression, self._suite, self._held)
            try:
                below = await self._baseline(command, on=best.result.index)
            finally:
                await asyncio.to_thread(self.scratch.reset)
                (self._before, self._traced, self._spectrum_note, self._regression, self._suite, self._held) = kept
            if below.passed:  # its run passed now (a flaky check): nothing to search for
                return
            await self._search(command, below, command, tried)

    async def _usable_baseline(self, command: CheckCommand) -> tuple[CheckCommand, CheckRun]:
        """The check and its run on the workspace as it is; a detected pytest command whose test files cannot be
        imported for want of an installed package, or whose tests take a plugin's fixture the environment lacks,
        or that an installed plugin stopped with an internal error of its own, is run again without them (named
        in its detail), up to
        :data:`_NARROWINGS` times (``-x`` stops collecting at the first such file)."""
        baseline = await self._baseline(command)
        detail, left_out = command.detail, []
        for _ in range(_NARROWINGS):
            narrowing = narrowed_command(command.command, baseline.output, baseline.exit_code, self.scratch.tree) \
                if command.source == "detected" else None
            if narrowing is None:
                break
            narrowed, missing = narrowing
            if why := await consent(narrowed, self.root, self.request, self.consents, self.asker):
                command = msgspec.structs.replace(command, detail="; ".join(
                    filter(None, [command.detail, f"not run without {', '.join(missing)}: {why}"])))
                break
            left_out += [f"{path} ({why_out})" for path, why_out in missing.items()]
            command = msgspec.structs.replace(command, command=narrowed, detail="; ".join(
                filter(None, [detail, "left out " + ", ".join(left_out)])))
            self._ran, self._traced, self._spectrum_note = [], None, ""  # the run that could not collect told nothing
            self._before = {}
            baseline = await self._baseline(command)
        return command, baseline

    async def _baseline(self, command: CheckCommand, on: int = 0) -> CheckRun:
        """The check on the workspace as it is (no candidate applied; ``on``: that candidate laid there, said so):
        does it fail to begin with?"""
        over = f"on top of candidate {on}" if on else ""
        activity = ToolActivity(id=f"verify-0-{on}" if on else "verify-0", name="verify", kind="execute",
                                status="in_progress",
                                title=f"check the workspace {over or 'as it is'}: {command.command}"[:160])
        await self.emit(TurnEvent(kind="tool", tool=activity))
        trace = self.scratch.folder / "trace" if self.config.trace and self.config.focused else None
        run = await self._check(command, trace)
        if trace is not None and run.outcome == "timeout":  # the profiler's cost may be what ran it out of time
            trace = None
            run = await self._check(command)
        if trace is not None and not run.passed:
            ran = await self._spectrum(command, run)
            if ran is None and (calls := await asyncio.to_thread(read_trace, trace, self.scratch.tree)) is not None:
                ran = ran_functions(calls, failed_test_ids(run.output), run_failed=True)
            if ran is not None:
                self._ran, self._traced = ran, len(ran)
        await self.emit(TurnEvent(kind="tool", tool=msgspec.structs.replace(
            activity, status="completed",
            output=f"{over or 'before any change'}: {run.describe()}\n{run.tail(2000)}")))
        if not run.passed:
            files = [path for path, _, _ in failing_test_frames(run.output, self.scratch.tree)] or [
                test.split("::")[0] for test in failed_test_ids(run.output)]
            self._regression = spectrum_command(command.command, files) or project_test_command(
                command.command, self.scratch.tree)
            self._suite = suite_command(command.command)
            if command.source != "written" and not asks_test_change(self.request.prompt):
                self._held = frozenset(path for path in files if is_test_path(path))
        return run

    async def _spectrum(self, command: CheckCommand, baseline: CheckRun) -> list[Ran] | None:
        """The failing tests' whole files run to completion, traced (the check may stop at the first failure or
        name one test): the passing tests beside the failing ones tell which lines only a failure runs. None:
        not needed, not allowed, or no failing test was traced (the check's own trace stands)."""
        files = [path for path, _, _ in failing_test_frames(baseline.output, self.scratch.tree)] or [
            test.split("::")[0] for test in failed_test_ids(baseline.output)]
        line = spectrum_command(command.command, files)
        if line is None:
            return None
        if why := await consent(line, self.root, self.request, self.consents, self.asker):
            self._spectrum_note = f"`{line}` not run: {why}"
            return None
        activity = ToolActivity(id="verify-spectrum", name="verify", kind="execute", status="in_progress",
                                title=f"run the failing tests' files, traced: {line}"[:160])
        await self.emit(TurnEvent(kind="tool", tool=activity))
        folder = self.scratch.folder / "spectrum"
        run = await check_in(self.scratch.tree, line, self.request, self.config, folder)
        self._check_s += run.seconds
        self._ran_unchanged(run)
        calls = await asyncio.to_thread(read_trace, folder) if run.outcome in ("passed", "failed") else None
        failed = failed_test_ids(run.output)
        if run.outcome in ("passed", "failed"):
            self._before[line] = (frozenset(failed), run.passed)
        ran = ran_functions(calls, failed, run_failed=False) if calls else []
        tests = sum(1 for test in calls or () if test)
        self._spectrum_note = f"`{line}`: {run.describe()}, {len(failed)} of {tests} tests failing" + (
            "" if ran else ": no failing test traced, not used")
        await self.emit(TurnEvent(kind="tool", tool=msgspec.structs.replace(
            activity, status="completed", output=f"{run.describe()}\n{run.tail(2000)}")))
        return ran or None

    async def _check(self, command: CheckCommand, trace: Path | None = None, candidate: bool = False) -> CheckRun:
        """The check in the scratch copy as it stands (``trace``: its calls recorded there; ``candidate``: with a
        candidate laid over it, so stopped as hung past :meth:`_hang_s`)."""
        run = await check_in(self.scratch.tree, command.command, self.request, self.config, trace,
                             self._hang_s() if candidate else 0.0)
        self._check_s += run.seconds
        if not candidate:
            self._ran_unchanged(run)
        return run

    def _ran_unchanged(self, run: CheckRun) -> None:
        if run.outcome in ("passed", "failed"):
            self._unchanged_s = max(self._unchanged_s, run.seconds)

    def _hang_s(self) -> float:
        """How long a candidate's check may run before it is stopped as hung (0: ``verify.timeout_s`` alone)."""
        if self.config.hang_factor <= 0 or self._unchanged_s <= 0:
            return 0.0
        return self.config.hang_factor * self._unchanged_s + self.config.hang_extra_s

    def _grammars(self, edits: ProposedEdits, frames_first: bool = False) -> list[str]:
        """One edit-block grammar per place the fix may belong, most likely first (sampled candidates take them
        in turn): the files the answer edited, the innermost source frames of the failing run (their function's
        lines alone, as Agentless localizes to a function), then the files the prompt held, tests last.
        ``frames_first``: the frames before the answer's files (its edits came from the edit step, which the node
        localized by the names the question and the answer use, a weaker sign than the failing run's frames).
        When a test written for the change decides (the project's check passed before it, or could not run), the
        change asked for is a new behaviour, rarely one block: then one grammar of up to :data:`_CHANGE_BLOCKS`
        blocks over those places together (python-dotenv's ``--no-interpolate`` flag changes four places of
        cli.py, ``rename_key`` a function in main.py and the package's exports; one block each, no sampled
        candidate could hold it)."""
        if not self.config.grammar:
            return []
        targets: dict[str, str] = {}
        answered = [(edit.path, edit.old_text) for edit in edits.edits if edit.old_text]
        for path, old in [] if frames_first else answered:
            targets.setdefault(path, old)
        for frame in frames(self.request.terminal, self.root):
            text = self.read(frame.path)
            if not text or frame.path in targets:
                continue
            spans = [(a, b) for path, a, b in self.locate(frame.function) if path == frame.path and a <= frame.line <= b]
            lines = text.splitlines()
            targets[frame.path] = ("\n".join(lines[spans[0][0] - 1:spans[0][1]]) if spans else text)
        for path, old in answered if frames_first else []:
            targets.setdefault(path, old)
        for path in self.paths:  # never a test: a fix that makes the check pass by changing it is no fix
            if len(targets) >= _TARGETS:
                break
            if path not in targets and not is_test_path(path) and (text := self.read(path)):
                targets[path] = text
        places = list(targets.items())[:_TARGETS]
        if self._repro is not None and places:
            return [edit_blocks_grammar(places, _CHANGE_BLOCKS)]
        return [edit_block_grammar(path, text) for path, text in places]

    async def _focused(self, command: CheckCommand, baseline: CheckRun, check: CheckCommand | None = None,
                       ) -> AsyncGenerator[list[tuple[Draft, Place]], None]:
        """The Agentless split: the failing run (``command``'s ``baseline``) localized to up to ``[verify] places``
        functions, and for each in turn a short prompt (the failing output, the test, the function) whose
        candidates rewrite that function alone; yields each place's (draft, the place its rewrite replaces), so
        the caller stops at the first place whose candidate passes (``check``: what the candidates are checked
        with, when that is not ``command``: a check that guards, the failing run the test written for the
        change's)."""
        if self.draw_focused is None or not self.config.focused:
            return
        outputs, roots = [baseline.output, self.request.terminal], [self.scratch.tree, self.root]
        if check is not None and check.command != command.command:  # the terminal's run is not this failure
            outputs, roots = outputs[:1], roots[:1]
        localize = self.config.localize
        limit = max(1, self.config.places)
        pool = max(_POOL, limit) if localize else limit
        found = with_traced(places(outputs, roots, self.locate, self.read, limit=pool, hops=3 if localize else 1),
                            self._ran, self.locate, pool, self.request.prompt, self.read)
        tests = failing_test_frames(baseline.output, self.scratch.tree) or failing_test_frames(self.request.terminal, self.root)
        test_code = ""
        if tests:
            path, line, function = tests[0]
            text = self.read(path) or ""
            spans = [(a, b) for p, a, b in self.locate(function) if p == path and (not line or a <= line <= b)]
            if spans:
                test_code = "\n".join(text.splitlines()[spans[0][0] - 1:spans[0][1]])
        failing = baseline.output or self.request.terminal
        self._found = tuple(f"{p.name} ({p.path}:{p.start}-{p.end})" for p in found)
        how = ["found along the failing run"] * len(found)
        if localize and len(found) > 2:
            found, how = await self._localized(found, command, failing, test_code)
        tried = list(zip(found[:limit], how, strict=False))
        for k, (place, _) in enumerate(tried):  # the first multi-line module value a place uses: one more place
            used = [v for v in values_used(place, self.read(place.path) or "")
                    if not any(t.path == v.path and t.start == v.start for t, _ in tried)]
            if used:
                tried.insert(k + 1, (used[0], f"used by `{place.name}`"))
                break
        # one-token changes of the lines the failing run ran, in the places whose lines are filled in, before any
        # decoding: each costs a check run, and the fix a small model cannot write is often one token away (a
        # boundary, a constant); only against the project's own failing run (a test the model wrote for the change
        # is not the project's, and a one-token change passes a wrong test as readily as a right one)
        own = command.source != "written" and (check is None or check.command == command.command)
        budget = [max(0, self.config.mutations) if own else 0]
        for place, why in list(zip(found, how, strict=False))[:self.config.infill_places]:
            if budget[0] <= 0:
                break
            if source := self.read(place.path):
                async for batch in self._mutated(place, why, source, budget):
                    yield batch
        # the lines of the first places filled in, before any rewrite: a fill decodes a line, so it reaches further
        # down the places than the rewrites can (the 1.5B's greedy fill of `verify_signature`'s loop was right; the
        # function was fourth of the places found, and the rewrites try three)
        swept = list(zip(found, how, strict=False))[:self.config.infill_places] \
            if self.infill is not None and (self.config.infill > 0 or self.config.infill_inserts > 0) else []
        # a table the places use is filled in after its user: an entry it lacks is a line put in among its own
        for k, (place, why) in enumerate(tried):
            if swept and place.kind == "value" and k and not any(s.path == place.path and s.start == place.start
                                                                 for s, _ in swept):
                uses = next((i for i, (s, _) in enumerate(swept) if s is tried[k - 1][0]), len(swept) - 1)
                swept.insert(uses + 1, (place, why))
        for place, why in swept:
            if source := self.read(place.path):
                self._enter(place, why)
                async for batch in self._infilled(place, source):
                    yield batch
        for place, why in tried:
            source = self.read(place.path)
            if not source:
                continue
            self._enter(place, why)
            code = "\n".join(source.splitlines()[place.start - 1:place.end])
            related = self._related(place)
            user = focus_prompt(place, code, command.command, failing, test_code, self.request.prompt, related)
            began = time.monotonic()
            try:
                grammar = function_grammar(code.splitlines()[0], language(place.path)[1]) \
                    if self.config.grammar and code.strip() else ""
                drafts = await self.draw_focused(for_language(FOCUS_SYSTEM, place.path), user, self.config.candidates,
                                                 grammar, "")
            finally:
                self._decode_s += time.monotonic() - began
            yield [(msgspec.structs.replace(d, arm="focused"), place) for d in drafts]
            async for batch in self._lines(place, code, command, failing, test_code, related):
                yield batch

    def _enter(self, place: Place, why: str) -> None:
        """The place's entry in the places tried, last (what it was tried with is added to the last entry): a place
        whose lines were filled in and that is then rewritten keeps one entry."""
        key = f"{place.name} ({place.path}:{place.start}-{place.end}, "
        entry = next((e for e in self._places if e.startswith(key)), f"{key}{place.why}; {why})")
        self._places = (*(e for e in self._places if not e.startswith(key)), entry)

    async def _mutated(self, place: Place, why: str, source: str, budget: list[int],
                       ) -> AsyncGenerator[list[tuple[Draft, Place]], None]:
        """The place's lines the failing run ran (the trace's most suspicious first, the def line last), each with
        its one-token changes (:func:`contenox.verify.mutate.mutants`), drawn as the function with that line
        changed, one batch per line, until ``budget[0]`` (shared by the places) is spent. The place enters the
        places tried (``why``: how it was found) with its first change."""
        lines = source.split("\n")
        code = lines[place.start - 1:place.end]
        suspicion = dict(place.lines)
        pickable = [place.start + i for i in pickable_lines("\n".join(code), place.path) if _ran(place, place.start + i)]
        fence = language(place.path)[1]
        entry = ""
        made = 0
        for number in sorted(pickable, key=lambda n: (n == place.start, -suspicion.get(n, 0.0), n)):
            batch: list[tuple[Draft, Place]] = []
            for mutant in mutants(lines[number - 1], place.path, self._named)[:budget[0]]:
                budget[0] -= 1
                function = "\n".join([*code[:number - place.start], mutant.line, *code[number - place.start + 1:]])
                batch.append((Draft(text=f"```{fence}\n{function}\n```", round=0, sampled=False, constrained=False,
                                    arm="mutation", line=number, change=mutant.said), place))
            if batch:
                if not entry:
                    self._enter(place, why)
                    entry = self._places[-1]
                made += len(batch)  # said with the place, as they are tried (the caller stops at the first to pass)
                self._places = (*self._places[:-1], f"{entry[:-1]}; one-token changes tried: {made})")
                yield batch
            if budget[0] <= 0:
                break

    async def _infilled(self, place: Place, source: str, only: int = 0,
                        ) -> AsyncGenerator[list[tuple[Draft, Place]], None]:
        """Up to ``[verify] infill`` of the place's lines, each emptied past its indentation, and up to ``[verify]
        infill_inserts`` lines put in (an empty line after a whole statement: a line the bug took out), each filled
        in by the model from the file around it: the trace's most suspicious first (a line put in ranks by the line
        it follows), a line's own fill before a line put in at a like suspicion (most bugs change a line, fewer
        take one out), then in order, the def line's own fill last; only lines the failing run ran (a line put in:
        after or before one), when the trace says which. Each fill that differs from the lines there is drawn as
        the function with it (one batch per line, so the caller stops at the first line whose fill passes).
        ``only``: that line's own fill alone (the line a passing one-token change showed)."""
        if self.infill is None or (self.config.infill <= 0 and self.config.infill_inserts <= 0):
            return
        lines = source.split("\n")
        code = lines[place.start - 1:place.end]
        suspicion = dict(place.lines)

        def next_line(number: int) -> int:  # the first line after ``number`` that holds code (0: none)
            return next((n for n in range(number + 1, place.end + 1) if lines[n - 1].strip()), 0)

        def rank(number: int, inserted: bool) -> tuple[bool, float, bool, int]:
            return not inserted and number == place.start, -suspicion.get(number, 0.0), inserted, number

        pickable = [place.start + i for i in pickable_lines("\n".join(code), place.path) if _ran(place, place.start + i)]
        # a line put in runs when the line before it or the one after it ran (a block that did not run may end there)
        points = [(place.start + after, width) for after, width in insertion_points("\n".join(code), place.path)
                  if _ran(place, place.start + after) or _ran(place, next_line(place.start + after))]
        # (the line filled or followed, the indentation's width of a line put in, or -1: the line's own)
        slots = sorted([(n, -1) for n in sorted(pickable, key=lambda n: rank(n, False))[:max(0, self.config.infill)]]
                       + sorted(points, key=lambda p: rank(p[0], True))[:max(0, self.config.infill_inserts)],
                       key=lambda slot: rank(slot[0], slot[1] >= 0)) if not only else \
            [(only, -1)] if self.config.infill > 0 else []
        if not slots:
            return
        fence = language(place.path)[1]
        entry = self._places[-1] if self._places else ""
        done = {False: 0, True: 0}
        renamed = 0
        for number, width in slots:
            inserted = width >= 0
            done[inserted] += 1
            current = "" if inserted else lines[number - 1]
            indent = " " * width if inserted else current[:len(current) - len(current.lstrip())]
            before, rest = (lines[:number], lines[number:]) if inserted else (lines[:number - 1], lines[number:])
            neighbours = {before[-1].strip() if before else "", rest[0].strip() if rest else ""} if inserted else set()
            emptied = "\n".join([*before, indent, *rest])
            began = time.monotonic()
            try:
                fills = await self.infill(place.path, emptied, len(before), len(indent), max(1, self.config.candidates),
                                          not inserted)
            finally:
                self._decode_s += time.monotonic() - began
            seen: set[str] = set()
            batch: list[tuple[Draft, Place]] = []
            taken = [key for line in code if (key := entry_key(line)) is not None] if place.kind == "value" else []
            for fill in fills:
                text = filled_lines(fill.text, len(indent), inserted, elements=place.kind == "value", taken=taken)
                new = indent + text  # a block's lines after the first carry their own indentation
                if not text.strip() or new.strip() == current.strip() or new.strip() in neighbours or new in seen:
                    continue
                seen.add(new)
                if not inserted and number == place.start and _renames(current, new):
                    # the def line filled with another name: every caller (the failing test's import first) breaks,
                    # and such a change is never offered (the 0.5B's `parse_value` fill stopped dotenv's collection)
                    renamed += 1
                    continue
                kept = code[:number - place.start + (1 if inserted else 0)]
                function = "\n".join([*kept, new, *code[len(kept) + (0 if inserted else 1):]])
                batch.append((msgspec.structs.replace(fill, text=f"```{fence}\n{function}\n```",
                                                      arm="insert" if inserted else "infill",
                                                      line=number + 1 if inserted else number), place))
            if entry:  # said with the place (its entry ends with how it was found), as the lines are filled
                said = ", ".join(([f"lines filled in: {done[False]} of {len(pickable)}"] if self.config.infill > 0
                                  else []) + ([f"lines put in: {done[True]} of {len(points)}"]
                                              if self.config.infill_inserts > 0 else []) + (
                    [f"{renamed} fill(s) of the def line that renamed it left out"] if renamed else []))
                self._places = (*self._places[:-1], f"{entry[:-1]}; {said})")
            if batch:
                yield batch

    async def _lines(self, place: Place, code: str, command: CheckCommand, failing_output: str,
                     test_code: str, related: list[tuple[str, str]]) -> AsyncGenerator[list[tuple[Draft, Place]], None]:
        """The place's lines to change (the trace's most suspicious first, then the model's ``candidates`` picks:
        the greedy one first, then by votes; up to ``[verify] lines`` of them), each in turn drawn as the function
        with that line changed, with the related methods of its class shown (``related``): the grammar
        copies every other line and admits no copy of the picked one (the small models' rewrites of a whole
        function were mostly copies)."""
        # a line the failing run never ran did not make it fail (when a trace says which ran); the def line's
        # defaults ran when the module was loaded, before any test
        pickable = [i for i in pickable_lines(code, place.path)
                    if not place.ran or i == 0 or place.start + i in place.ran]
        if self.config.lines <= 0 or not pickable or not self.config.grammar:
            return
        user = line_pick_prompt(place, code, command.command, failing_output, test_code, self.request.prompt)
        began = time.monotonic()
        try:
            assert self.draw_focused is not None
            picks = await self.draw_focused(for_language(LINE_SYSTEM, place.path), user, self.config.candidates,
                                            number_grammar(place.start + i for i in pickable), "")
        finally:
            self._decode_s += time.monotonic() - began
        votes = Counter(int(p.text.strip()) for p in picks if p.text.strip().isdigit())
        greedy = [int(p.text.strip()) for p in picks if not p.sampled and p.text.strip().isdigit()]
        suspicion = dict(place.lines)  # a trace's most suspicious lines first; the model's picks order the rest
        ranked = sorted({*votes, *suspicion}, key=lambda n: (-suspicion.get(n, 0.0), n not in greedy, -votes[n], n))
        chosen = [n for n in ranked if n - place.start in pickable][:self.config.lines]
        if not chosen:
            return
        picked = "lines to change: " + ", ".join(f"{n} ({_line_said(n, suspicion, votes, len(picks))})" for n in chosen)
        if self._places:  # said with the place (its entry ends with how it was found)
            self._places = (*self._places[:-1], f"{self._places[-1][:-1]}; {picked})")
        for number in chosen:
            index = number - place.start
            user = line_prompt(place, code, index, command.command, failing_output, test_code, self.request.prompt,
                               related)
            began = time.monotonic()
            try:
                repair = line_repair(code, index, language(place.path)[1])
                drafts = await self.draw_focused(for_language(FOCUS_SYSTEM, place.path), user, self.config.candidates,
                                                 repair.grammar,
                                                 repair.begun)
            finally:
                self._decode_s += time.monotonic() - began
            yield [(msgspec.structs.replace(d, text=repair.answer(d.text), arm="line", line=number), place)
                   for d in drafts]

    def _related(self, place: Place) -> list[tuple[str, str]]:
        """The other methods of the place's class the failing tests ran (by the trace), most suspicious first, up
        to three short ones: (qualified name, code). Empty for a function outside a class, or without a trace."""
        own = next((r for r in self._ran if r.path == place.path and span_of(r, self.locate) == (place.start, place.end)),
                   None)
        if own is None or "." not in own.name or "<locals>" in own.name:
            return []
        cls = own.name.rsplit(".", 1)[0]
        lines = (self.read(place.path) or "").splitlines()
        related: list[tuple[str, str]] = []
        for r in self._ran:
            if r is own or r.path != place.path or r.name.rsplit(".", 1)[0] != cls:
                continue
            span = span_of(r, self.locate)
            if span is not None and span[1] - span[0] < _RELATED_LINES and span[1] <= len(lines):
                related.append((r.name, "\n".join(lines[span[0] - 1:span[1]])))
            if len(related) >= _RELATED:
                break
        return related

    async def _localized(self, found: list[Place], command: CheckCommand, failing_output: str,
                         test_code: str) -> tuple[list[Place], list[str]]:
        """The places reordered by the model's picks (``candidates`` short answers, each a number under a
        grammar: the greedy one and sampled ones, as the line pick is): the greedy pick first, then the other
        picks by votes (ties in the order found), then the rest as found; with each place, how it came to be
        there. The picks' decoding counts as the focused round's."""
        coded = [(place, "\n".join((self.read(place.path) or "").splitlines()[place.start - 1:place.end]))
                 for place in found]
        user = localize_prompt(coded, command.command, failing_output, test_code, self.request.prompt)
        began = time.monotonic()
        try:
            assert self.draw_focused is not None
            drafts = await self.draw_focused(for_language(LOCALIZE_SYSTEM, found[0].path), user,
                                             max(1, self.config.candidates),
                                             choice_grammar(len(found)), "")
        finally:
            self._decode_s += time.monotonic() - began
        picks = [(int(d.text.strip()), d.sampled) for d in drafts
                 if d.text.strip().isdigit() and 1 <= int(d.text.strip()) <= len(found)]
        if not picks:
            said = drafts[0].text.strip()[:20] if drafts else ""
            return found, [f"the model's pick {said!r} was not one of the {len(found)}: found order kept"] + [
                "found along the failing run"] * (len(found) - 1)
        votes = Counter(n for n, _ in picks)
        greedy = [n for n, sampled in picks if not sampled]
        # a trace's suspicion first (measured: it put the bug's function first more often than the model's
        # pick, bench/results/2026-12-03-probe-spectrum.txt); the model's picks order what it leaves tied. A blind
        # trace (a `node -e` check) ties every function: there the names that use more of the question's words
        # come before the picks (semver's "tilde range" picks, `replaceXRanges`, `makeSafeRegex` and
        # `createToken`, pushed `replaceTilde` out of the places swept). Not where the trace ranks: in the runs
        # since 2026-12-03, of 25 bug and trace tasks with picks, a wrong pick's name used fewer of the question's
        # words than the bug's on 7 tasks and more on 7
        tied = blind(self._ran)
        named = {n: relevance(found[n - 1].name, self.request.prompt) if tied else 0 for n in range(1, len(found) + 1)}
        order = sorted(range(1, len(found) + 1), key=lambda n: (-found[n - 1].suspicion, -named[n], n not in greedy,
                                                                -votes[n], n))
        of = f"{len(drafts)} picks" if len(drafts) > 1 else "its pick"
        how: list[str] = []
        for i, n in enumerate(order):
            parts = [f"suspicion {found[n - 1].suspicion:.2f} by the trace"] if found[n - 1].suspicion else []
            if named[n]:
                parts.append(f"its name uses {named[n]} of the question's words")
            if n in votes:
                parts.append(f"picked by the model of {len(found)} found ({votes[n]} of {of})" if i == 0 else
                            f"picked by the model ({votes[n]} of {of})")
            how.append("; ".join(parts) or "found along the failing run")
        return [found[n - 1] for n in order], how

    def _rewrite(self, place: Place, text: str) -> ProposedEdits:
        """A focused answer (the whole function, rewritten) laid over the place's own lines, with what the node
        adds to any change (:attr:`complete`: docstring_parser's "export DocstringExample", its offered candidate
        rewrote the class's constructor at the place the test's run found, and left out the export the turn's own
        answer had). The place is known, so a name several classes define (cachetools' six ``popitem``) is not
        looked up again (read by name, such a rewrite resolved nowhere); an answer that is no code block is read as
        any answer, under the path."""
        source = self.read(place.path)
        code = _FENCE.search(text)
        if source is None or code is None:
            return self.propose(f"{place.path}\n{text}")
        lines = source.splitlines(keepends=True)
        old = "".join(lines[place.start - 1:place.end])
        rewritten = _function_only(code.group(1), place.path).rstrip("\n") + "\n"
        if _same_code(rewritten, old):
            return ProposedEdits()  # copied as it was (its comments aside)
        new = "".join(lines[:place.start - 1]) + rewritten + "".join(lines[place.end:])
        return self.complete(ProposedEdits(edits=(ProposedEdit(path=place.path, old_text=source, new_text=new,
                                                               diff=unified_diff(place.path, source, new), blocks=1),)))

    async def _try(self, draft: Draft, edits: ProposedEdits | None, command: CheckCommand,
                   index: int, *, place: Place | None = None) -> _Tried:
        if place is not None and (code := _FENCE.search(draft.text)):  # shown and repaired as the function alone
            draft = msgspec.structs.replace(draft, text=f"```{language(place.path)[1]}\n"
                                                         f"{_function_only(code.group(1), place.path).rstrip()}\n```")
        if edits is None:  # a focused answer is its place's function alone; any other, read as the turn's are
            edits = await asyncio.to_thread(self._rewrite, place, draft.text) if place is not None else \
                await asyncio.to_thread(self.propose, draft.text)
        edits, held = _without(edits, self._held)
        if self._stack is not None and edits.edits:  # written over the change the search runs on: checked with it
            edits = _on_top(self._stack.edits, edits) or ProposedEdits(problems=(
                f"not written over candidate {self._stack.result.index}'s change, which it was drawn on",))
        base = CandidateResult(index=index, round=draft.round, sampled=draft.sampled, constrained=draft.constrained,
                               arm=draft.arm, line=draft.line, change=draft.change,
                               on=self._stack.result.index if self._stack is not None else 0,
                               comments_only=bool(edits.edits) and all(
                                   code_unchanged(e.path, e.old_text, e.new_text) for e in edits.edits),
                               outcome="no_edit", files=tuple(e.path for e in edits.edits), diff=edits.diff,
                               answer=draft.text[:3000],
                               changed_lines=changed_lines(edits.diff), decode_s=round(draft.decode_s, 2),
                               tokens=draft.tokens, recomputed_tokens=draft.recomputed_tokens)
        if not edits.edits:
            return _Tried(result=msgspec.structs.replace(base, output_tail=held), draft=draft, edits=edits)
        key = edits.diff
        if key in self._checked:  # the same change as an earlier candidate: its result stands
            seen = self._checked[key]
            result = msgspec.structs.replace(seen, index=index, round=draft.round, sampled=draft.sampled,
                                             constrained=draft.constrained, arm=draft.arm, line=draft.line,
                                             change=draft.change, decode_s=base.decode_s,
                                             tokens=draft.tokens, recomputed_tokens=draft.recomputed_tokens,
                                             check_s=0.0)
            return _Tried(result=result, draft=draft, edits=edits)
        # one that does not parse cannot pass: the check (the user's, maybe minutes long) is not run for it
        if broken := await asyncio.to_thread(_unparsable, edits):
            result = msgspec.structs.replace(base, outcome="does_not_parse", output_tail="\n".join(broken))
            self._checked[key] = result
            return _Tried(result=result, draft=draft, edits=edits)
        # nor one a lint rule stops (:data:`_LINT_RULES`): it fails where it runs, which the check may never reach
        if linted := await asyncio.to_thread(_linted, edits):
            result = msgspec.structs.replace(base, outcome=linted[0], output_tail="\n".join(linted[1]))
            self._checked[key] = result
            return _Tried(result=result, draft=draft, edits=edits)
        began = time.monotonic()
        laid = [EditLike(path=e.path, old_text=e.old_text, new_text=e.new_text) for e in edits.edits]
        try:
            why = await asyncio.to_thread(self.scratch.apply, laid)
        except VerifyError as exc:  # a path outside the workspace: this candidate, not the verification
            why = exc.message
        self._apply_s += time.monotonic() - began
        if why:
            result = msgspec.structs.replace(base, outcome="does_not_apply", output_tail=why)
            self._checked[key] = result
            return _Tried(result=result, draft=draft, edits=edits)
        call_id = f"verify-{index}"
        title = f"check candidate {index} ({', '.join(base.files)}): {command.command}"[:160]
        activity = ToolActivity(id=call_id, name="verify", kind="execute", title=title, status="in_progress",
                                locations=tuple((str(self.root / p), None) for p in base.files))
        await self.emit(TurnEvent(kind="tool", tool=activity))
        try:
            run = await self._check(command, candidate=True)
            reproduced, repro_tail, written_passed = None, "", 0
            if self._repro is not None and self._repro[2] == command.command:
                # the tests written for the change are the check: each in turn, at least half must pass
                run, written_passed = await self._written_check(run)
                reproduced = True if run.passed else None
            elif run.passed and self._repro is not None:
                written_passed, repro_tail = await self._written_runs()
                reproduced = 2 * written_passed >= len(self._tests)
                repro_tail = "" if reproduced else repro_tail
            broke, broken_tail = (await self._broken(laid) if run.passed and not self._guard else ((), ""))
        finally:
            await asyncio.to_thread(self.scratch.reset)
        result = msgspec.structs.replace(base, outcome=run.outcome, exit_code=run.exit_code,
                                         failing=failing_tests(run.output), passing=passing_tests(run.output),
                                         output_tail=broken_tail or repro_tail or run.tail(),
                                         check_s=round(run.seconds, 2), broke=broke, reproduced=reproduced,
                                         written_passed=written_passed)
        self._checked[key] = result
        await self.emit(TurnEvent(kind="tool", tool=msgspec.structs.replace(
            activity, status="completed" if result.clean_pass else "failed",
            output=f"{run.describe()}" + (f"; but it breaks {', '.join(broke)}, which passed before" if broke else "")
            + (_written_said(written_passed, len(self._tests)) if self._repro is not None and
               (reproduced is not None or self._repro[2] == command.command) else "")
            + f"\n{broken_tail or repro_tail or run.tail(4000)}")))
        return _Tried(result=result, draft=draft, edits=edits)

    async def _written_runs(self, first: CheckRun | None = None) -> tuple[int, str]:
        """The candidate laid in the scratch copy against each test written for the change, laid at its path in
        turn (``first``: the first one's run, already made): how many passed, and the first failing one's output
        tail. The first test is laid there again after."""
        path, _, line = self._repro or ("", "", "")
        passed, tail = 0, ""
        for number, code in enumerate(self._tests):
            if number == 0 and first is not None:
                run = first
            else:
                await asyncio.to_thread(self.scratch.add, path, code)
                run = await check_in(self.scratch.tree, line, self.request, self.config)
                self._check_s += run.seconds
            passed += int(run.passed)
            tail = tail or ("" if run.passed else (f"(test {number + 1} of {len(self._tests)} written for the change)\n"
                                                   if len(self._tests) > 1 else "") + run.tail())
        if len(self._tests) > 1:
            await asyncio.to_thread(self.scratch.add, path, self._tests[0])
        return passed, tail

    async def _written_check(self, run: CheckRun) -> tuple[CheckRun, int]:
        """The check when it is the tests written for the change (``run``: the first one's): passed when at least
        half of them pass (its output says how many, then the first one's when it passed), else failed with the
        first failing one's output; and how many passed."""
        if len(self._tests) < 2:
            return run, int(run.passed)
        passed, tail = await self._written_runs(run)
        if 2 * passed >= len(self._tests):
            return msgspec.structs.replace(run, outcome="passed", exit_code=0, output=(
                f"{passed} of the {len(self._tests)} tests written for the change passed\n"
                + (run.output if run.passed else ""))), passed
        return msgspec.structs.replace(run, outcome="failed", exit_code=run.exit_code or 1, output=(
            f"{passed} of the {len(self._tests)} tests written for the change passed (half are needed)\n{tail}")), passed

    def _reproducible(self) -> bool:
        """Whether a test of the change is asked of the model: the question asks for a change, and not a rename,
        which changes no behaviour a test could tell apart: what a rename must do (define the new names) is checked
        without one (:func:`~contenox.answer.renames.renamed_as_asked`), and the existing tests guard the rest. A
        test written for one fails for a reason of its own or on anything: the 0.5B's for "rename it to
        warn_on_parse_errors" was ``load_dotenv(path); assert False``, and 317 candidates were drawn along its
        failing run in 28 minutes."""
        if not (self.config.reproduce and asks_to_edit(self.request.prompt)):
            return False
        if asked_names(self.request.prompt):  # "rename X to Y"
            self._repro_note = "no test of the change asked for: a rename changes no behaviour a test could tell apart"
            return False
        return True

    async def _reproduction(self, command: CheckCommand, greedy: Draft) -> CheckRun | None:
        """Agentless's reproduction tests, for a check that already passes: the model, after the turn's answer,
        writes ``written_tests`` pytest tests of the change, each laid in turn in the scratch copy (never the
        workspace) and run alone. Kept (``self._tests``) only when it fails before the change for want of what was
        asked: a test that passes already tests nothing new, and one that errors on its own (a syntax error, a name
        it never imported, a fixture nobody defines) fails with every change. The first kept test's run before the
        change, or None; either way ``self._repro_note`` says what became of them."""
        folder = next((f for f in ("tests", "test") if (self.scratch.tree / f).is_dir()), "")
        path = f"{folder}/{_REPRO_FILE}" if folder else _REPRO_FILE
        line = test_file_command(command.command, path)
        if line is None:
            self._repro_note = f"no test of the change asked for: `{command.command}` is no pytest command"
            return None
        if why := await consent(line, self.root, self.request, self.consents, self.asker):
            self._repro_note = f"no test of the change run: {why}"
            return None
        known = standard_imports(text for p in self.paths if p.endswith(".py") and (text := self.read(p)) is not None)
        codes = await self._written_tests(greedy, _REPRO_REQUEST, lambda answer: _test_code(answer, known),
                                          "none that parses with a test in it")
        if not codes:
            return None

        async def own_error(run: CheckRun, code: str) -> str:
            why = _own_error(run, self.request.prompt) or self._misimported(run) or self._untouched(code)
            if not why and run.exit_code == 2 and (unknown := await asyncio.to_thread(
                    unknown_fixtures, code, path, self.scratch.tree)):  # not collected yet: its fixtures not looked up
                why = (f"it takes the fixture{'s' if len(unknown) > 1 else ''} "
                       f"{', '.join(f'`{u}`' for u in unknown)}, which nothing defines, with any change")
            return why

        first = await self._keep_written(path, line, codes, own_error)
        if first is not None:
            self._repro_note += (": candidates must pass it and the check" if len(self._tests) == 1 else
                                 ": candidates must pass the check and at least half of them")
        return first

    async def _keep_written(self, path: str, line: str, codes: list[str],
                            own_error: Callable[[CheckRun, str], Awaitable[str]]) -> CheckRun | None:
        """Lay each test written for the change at ``path`` and run it (``line``) before the change; keep those
        that fail for want of it (``own_error``: why a run and its code cannot tell changes apart, '' when they
        can), the first laid at ``path`` again. The first kept one's run, or None (the file removed);
        ``self._repro_note`` says which."""
        kept: list[tuple[str, CheckRun]] = []
        dropped: list[str] = []
        for code in codes:
            await asyncio.to_thread(self.scratch.add, path, code)
            run = await self._run_written(line, "before any change", len(codes))
            if why := await own_error(run, code):
                dropped.append(why)
            else:
                kept.append((code, run))
        if not kept:
            self._repro_note = (f"the test written for the change ({path}) was not used: {dropped[0]}" if len(codes) == 1
                                else f"none of the {len(codes)} tests written for the change ({path}) was used: "
                                + "; ".join(dict.fromkeys(dropped)))
            await asyncio.to_thread(self.scratch.add, path, None)
            return None
        self._tests = [code for code, _ in kept]
        await asyncio.to_thread(self.scratch.add, path, self._tests[0])
        self._repro = (path, self._tests[0], line)
        first = kept[0][1]
        if len(codes) == 1:
            self._repro_note = f"the test written for the change ({path}) fails before it ({first.describe()})"
        else:
            self._repro_note = (f"{len(kept)} of the {len(codes)} tests written for the change ({path}, each laid there "
                                f"in turn) {'fails' if len(kept) == 1 else 'fail'} before it (the first: "
                                f"{first.describe()})"
                                + (f"; not used: {'; '.join(dict.fromkeys(dropped))}" if dropped else ""))
        return first

    async def _run_written(self, line: str, when: str, count: int) -> CheckRun:
        """A test written for the change, as laid in the scratch copy, run alone (an ``execute`` step)."""
        self._written_runs_made += 1  # each its own tool call (ACP and the panel key them by id)
        activity = ToolActivity(id=f"verify-reproduce-{self._written_runs_made}", name="verify", kind="execute",
                                status="in_progress",
                                title=f"run the test{'s' if count > 1 else ''} written for the change, {when}: "
                                      f"{line}"[:160])
        await self.emit(TurnEvent(kind="tool", tool=activity))
        run = await check_in(self.scratch.tree, line, self.request, self.config)
        self._check_s += run.seconds
        await self.emit(TurnEvent(kind="tool", tool=msgspec.structs.replace(
            activity, status="completed", output=f"{when}: {run.describe()}\n{run.tail(2000)}")))
        return run

    async def _written_tests(self, greedy: Draft, request: str, parse: Callable[[str], str | None],
                             none: str) -> list[str]:
        """The model's tests of the change, asked for after the turn's answer (``request``): ``written_tests``
        drawn as one group (the greedy one first; one cut short by the token limit inside its code block goes on
        once), as ``parse`` reads each from its answer, each once; none (``self._repro_note`` saying that the model
        wrote ``none``)."""
        ids = self.step_ids([ToolStep(call=greedy.text.strip(), result=request)])
        drafts = await self._generate(ids, 0, max(1, self.config.written_tests), True, [])
        texts = [draft.text for draft in drafts]
        for k, draft in enumerate(drafts):
            # a test cut short inside its code block (the 1.5B's parametrized table ran past 512 tokens and left
            # no test function) goes on, once, from where it stopped: its tokens are in the cache
            if draft.cut and draft.token_ids and draft.text.count("```") % 2 == 1:
                more = await self._generate([*ids, *draft.token_ids], 0, 1, True, [])
                texts[k] += more[0].text if more else ""
        codes = [code for text in texts if (code := await asyncio.to_thread(parse, text)) is not None]
        codes = list(dict.fromkeys(codes))
        if not codes:
            said = " ".join((drafts[0].text if drafts else "").split())[:160]
            self._repro_note = (f"asked for {'a test' if len(drafts) < 2 else f'{len(drafts)} tests'} of the change, "
                                f"the model wrote {none} (the first began: {said!r})")
        return codes

    async def _script_reproduction(self, command: CheckCommand, greedy: Draft, greedy_edits: ProposedEdits,
                                   why: str) -> tuple[CheckCommand, CheckRun] | None:
        """The reproduction tests for a JavaScript project whose check cannot run (``why``): the model writes
        ``written_tests`` Node scripts of the change (``assert``), each laid in turn in the scratch copy's root and
        run by ``node`` (its own consent); the first kept is the check (``source="written"``; a candidate passes
        when it passes at least half of those kept) when it fails before the change for want of what was asked,
        not for an error of its own (:func:`_script_own_error`). The check and its run before any change, or None
        (``self._repro_note`` says why)."""
        path = _SCRIPT_FILE
        line = f"node {path}"
        if refused := await consent(line, self.root, self.request, self.consents, self.asker):
            self._repro_note = f"`{command.command}` could not run and no test of the change was run: {refused}"
            return None
        request = _script_request([*(e.path for e in greedy_edits.edits), *self.paths])
        codes = await self._written_tests(greedy, request, _script_code, "no Node script that parses and asserts")
        if not codes:
            return None

        async def own_error(run: CheckRun, code: str) -> str:
            return _script_own_error(run, self.request.prompt, self.locate)

        if await self._keep_written(path, line, codes, own_error) is None:
            return None
        written = CheckCommand(command=line, source="written", detail=why)
        run = await self._baseline(written)  # the first kept one, traced: the failing run the places come from
        self._repro_note = f"{why}; {self._repro_note}, and {'they are' if len(self._tests) > 1 else 'it is'} the check"
        return written, run

    def _misimported(self, run: CheckRun) -> str:
        """Why a test's failed import is its own error ('' when it is not): it imports a name the workspace
        defines, from where it is not (``from dotenv.main import set_as_environment_variables``, a method), so
        the import fails with any change; an import of a name no definition has yet is what a change adds, and so
        is one of a name the question speaks of ("export it from the package")."""
        for name in _CANNOT_IMPORT.findall(run.output):
            if self.locate(name) and not re.search(rf"\b{re.escape(name)}\b", self.request.prompt):
                return f"it imports `{name}` from where it is not defined (it is defined elsewhere), with any change"
        return ""

    def _new_names(self) -> list[str]:
        """The definitions the question asks to add: names it calls (``rename_key(dotenv_path, ...)``) or writes
        as classes (``PayloadTooLarge``) that the workspace does not define yet."""
        return [name for name in dict.fromkeys(a or b for a, b in _ADDED.findall(self.request.prompt))
                if len(name) >= 4 and name not in _BUILTINS and not self.locate(name)]

    def _untouched(self, code: str) -> str:
        """Why a test never touches the change ('' when it may): the question asks to add definitions (names
        it calls, ``rename_key(dotenv_path, ...)``, or writes as classes, ``PayloadTooLarge``, that the
        workspace does not define yet) and the test uses none of them. The 1.5B's tests of "add rename_key"
        parsed a string with ``parse_binding`` and failed for that, with any change; one of a new exception built
        a ``TimedSerializer``. A parameter the change adds is no such name: a test may pass it by position."""
        new = self._new_names()
        if not new or any(re.search(rf"\b{re.escape(name)}\b", code) for name in new):
            return ""
        return (f"it never uses {' or '.join(f'`{name}`' for name in new[:3])}, which the change is to add: it fails "
                "for another reason, with any change")

    async def _broken(self, laid: list[EditLike]) -> tuple[tuple[str, ...], str]:
        """A passing candidate (applied in the scratch copy) against the failing tests' whole files, then the
        project's whole suite: the tests that passed before the change and fail with it, and that run's output tail
        (none: nothing broke, or no such run: the check already runs them whole, it is no pytest command, or it
        may not run). A change can make a failing test pass by defeating what it compares (the 0.5B made
        ``Variable.__eq__`` return a tuple, always true); the tests beside it still hold the code to what it did, and
        the suite the rest of it. For a Node one-off check the run is the project's ``npm test`` (its failing tests
        named as the runner prints them; a run that passed before and fails with the change names no test: the
        command is named). ``laid``: the candidate's edits, laid in the scratch copy again after a run without them."""
        for line in dict.fromkeys(filter(None, (self._regression, self._suite))):
            usable = await self._usable_suite(line, laid) if line == self._suite and line not in self._before \
                else line
            if usable is None:
                continue
            broke, tail = await self._broken_in(usable, laid)
            if broke:
                return broke, tail
        return (), ""

    async def _usable_suite(self, line: str, laid: list[EditLike]) -> str | None:
        """The suite run on the code as it was, once, less what it cannot run for want of the environment (as a
        detected check is narrowed, :func:`~contenox.verify.usable.narrowed_command`: python-dotenv's suite imports
        ``sh`` in three of its files),
        recorded as what it failed before; the line that runs, kept as the suite's. None: it may not run, or it
        neither passed nor failed (a timeout: a suite that long is not held against a candidate)."""
        if why := await consent(line, self.root, self.request, self.consents, self.asker):
            self._suite, self._suite_note = None, f"`{line}` not run: {why}"
            return None
        left_out: list[str] = []
        before = await self._without_change(line, laid)
        for _ in range(_NARROWINGS):
            narrowing = narrowed_command(line, before.output, before.exit_code, self.scratch.tree) \
                if before and before.outcome == "failed" else None
            if narrowing is None or await consent(narrowing[0], self.root, self.request, self.consents, self.asker):
                break
            line = narrowing[0]
            left_out += [f"{path} ({why})" for path, why in narrowing[1].items()]
            before = await self._without_change(line, laid)
        if before is None:  # (it applied a moment ago: never seen)
            return None
        if before.outcome not in ("passed", "failed"):
            self._suite = None
            self._suite_note = f"`{line}` {before.describe()} before any change: not held against candidates"
            return None
        self._suite = line
        failing = _failing(before)
        self._suite_note = (f"`{line}`: {before.describe()} before any change, {len(failing)} test(s) failing"
                            + (f"; left out {', '.join(left_out)}" if left_out else ""))
        self._before[line] = (failing, before.passed)
        return line

    async def _without_change(self, line: str, laid: list[EditLike]) -> CheckRun | None:
        """``line`` run on the code as it was (the candidate taken out of the scratch copy, then laid there again);
        None: it could not be laid again."""
        await asyncio.to_thread(self.scratch.reset)
        run = await check_in(self.scratch.tree, line, self.request, self.config)
        self._check_s += run.seconds
        return None if await asyncio.to_thread(self.scratch.apply, laid) else run

    async def _broken_in(self, line: str, laid: list[EditLike]) -> tuple[tuple[str, ...], str]:
        """:meth:`_broken` for one run (``line``), consented on its own; the candidate is laid in the scratch copy
        again after that run without it (the first time)."""
        if await consent(line, self.root, self.request, self.consents, self.asker):
            return (), ""
        after = await check_in(self.scratch.tree, line, self.request, self.config)
        self._check_s += after.seconds
        if after.outcome != "failed":  # passed, or could not judge (a timeout): nothing to hold against it
            return (), ""
        if line not in self._before:  # what that run failed before the change, once
            before = await self._without_change(line, laid)
            if before is None:  # (it applied a moment ago: not offered)
                return ("(the change could not be laid in the scratch copy again)",), ""
            if before.outcome not in ("passed", "failed"):
                return (), ""
            self._before[line] = (_failing(before), before.passed)
        failed_before, passed_before = self._before[line]
        failed = failed_test_ids(after.output) or failed_test_names(after.output)
        broke = tuple(test for test in failed if test not in failed_before)
        if not failed and passed_before:  # it passed before, and fails now with no test named
            broke = (f"`{line}`",)
        return broke, (after.tail() if broke else "")


def _failing(run: CheckRun) -> frozenset[str]:
    """The tests ``run`` failed, by id (or by name, as a Node runner prints them)."""
    return frozenset(failed_test_ids(run.output) or failed_test_names(run.output))


def _improves(result: CandidateResult, before: CheckRun) -> bool:
    """A failing candidate's run got further than ``before``: fewer tests failing and more passing, as the outputs
    count them (a run that stopped at collection counts fewer failing and none passing)."""
    failing, passing = failing_tests(before.output), passing_tests(before.output)
    return (result.outcome == "failed" and None not in (result.failing, failing, result.passing, passing)
            and (result.failing or 0) < (failing or 0) and (result.passing or 0) > (passing or 0))


def _on_top(under: ProposedEdits, edits: ProposedEdits) -> ProposedEdits | None:
    """``edits``, written over the files as ``under`` leaves them, as one change with ``under``: each file from its
    text before ``under`` to its text after both (None: an edit of one of ``under``'s files was not written over
    the text ``under`` leaves, an answer read against the workspace as it is)."""
    firsts, laters = {e.path: e for e in under.edits}, {e.path: e for e in edits.edits}
    if any(path in firsts and firsts[path].new_text != later.old_text for path, later in laters.items()):
        return None
    both: list[ProposedEdit] = []
    for path in dict.fromkeys([*firsts, *laters]):
        first, later = firsts.get(path), laters.get(path)
        old = first.old_text if first is not None else later.old_text if later is not None else None
        new = later.new_text if later is not None else first.new_text if first is not None else None
        if old != new:
            both.append(ProposedEdit(path=path, old_text=old, new_text=new, diff=unified_diff(path, old, new),
                                     blocks=(first.blocks if first else 0) + (later.blocks if later else 0)))
    return ProposedEdits(edits=tuple(both), problems=edits.problems, notes=(*under.notes, *edits.notes))


def _mover(before: str, after: str) -> Callable[[int], int]:
    """Where a line of ``before`` is in ``after`` (a change put lines in or took some out above it; a line it
    changed: the lines that took its place), read once from the two texts."""
    blocks = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()

    def at(line: int) -> int:
        for _, i1, i2, j1, j2 in blocks:
            if i1 < line <= i2:
                return min(j1 + line - i1, max(j2, j1 + 1))
        return line

    return at


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER}


def _code_tokens(text: str) -> list[tuple[int, str]] | None:
    """``text``'s Python tokens without comments and line breaks (an indentation by its kind alone); None when it
    does not tokenize."""
    try:
        return [(t.type, "" if t.type in (tokenize.INDENT, tokenize.DEDENT) else t.string)
                for t in tokenize.generate_tokens(io.StringIO(textwrap.dedent(text)).readline)
                if t.type not in _NOT_CODE]
    except (tokenize.TokenError, SyntaxError):
        return None


def _same_code(a: str, b: str) -> bool:
    """Whether two versions of a function differ in comments or spacing alone (a rewrite that changed only a
    comment, ``# unsupported`` -> ``# supported``, as the 1.5B's did, is a copy); lines compared when either
    does not tokenize."""
    tokens_a, tokens_b = _code_tokens(a), _code_tokens(b)
    if tokens_a is None or tokens_b is None:
        return [line.rstrip() for line in a.splitlines()] == [line.rstrip() for line in b.splitlines()]
    return tokens_a == tokens_b


def _function_only(code: str, path: str = "") -> str:
    """A rewritten function without what the model wrote after it (a usage example, a copy of the test): the code
    up to the end of its first definition, as Python parses it; all of it when it does not parse. Another
    language's (``path``'s): up to the line where the braces the function opened close again."""
    lines = code.splitlines(keepends=True)
    if language(path)[1] != "python":
        return _braced(lines)
    depth = next((line[:len(line) - len(line.lstrip())] for line in lines if line.strip()), "")
    try:  # the def line's indentation off every line that has it (a comment at column 0 keeps its place)
        tree = ast.parse("".join(line[len(depth):] if line.startswith(depth) else line for line in lines))
    except SyntaxError:
        return code
    first: ast.stmt | None = next(
        (node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if first is None and tree.body and isinstance(tree.body[0], (ast.Assign, ast.AnnAssign)):
        first = tree.body[0]  # a module-level value's rewrite: the assignment, not what was written after it
    if first is None or first.end_lineno is None:
        return code
    return "".join(lines[:first.end_lineno])


_QUOTES = {"'", '"', "`"}


def _braced(lines: list[str]) -> str:
    """The lines up to the one where the first ``{`` written closes (strings, template literals and ``//``
    comments skipped; a regex literal's braces are not told apart); all of them when it never closes."""
    depth, opened, quote = 0, False, ""
    for number, line in enumerate(lines):
        k = 0
        while k < len(line):
            char = line[k]
            if quote:
                if char == "\\":
                    k += 1
                elif char == quote:
                    quote = ""
            elif char in _QUOTES:
                quote = char
            elif line.startswith("//", k):
                break
            elif char == "{":
                depth, opened = depth + 1, True
            elif char == "}":
                depth -= 1
                if opened and depth == 0:
                    return "".join(lines[:number + 1])
            k += 1
        if quote != "`":  # a quote left open at a line's end is the line's error, not a string going on
            quote = ""
    return "".join(lines)


_DEFINED = re.compile(r"^\s*(?:async\s+def|def|class|(?:export\s+)?(?:async\s+)?function\*?|(?:export\s+)?(?:const|let|var))"
                      r"\s+([A-Za-z_$][\w$]*)")


def _renames(line: str, fill: str) -> bool:
    """Whether ``fill``, written in place of a definition's first ``line``, defines it under another name
    (``def parse_value(`` filled as ``def parse_val(``)."""
    old, new = _DEFINED.match(line), _DEFINED.match(fill)
    return old is not None and new is not None and old.group(1) != new.group(1)


def _ran(place: Place, number: int) -> bool:
    """Whether the failing run ran the place's file line ``number`` (its def line always counts; every line, when
    no trace says which ran)."""
    return not place.ran or number == place.start or number in place.ran


def _line_said(number: int, suspicion: dict[int, float], votes: Counter[int], picks: int) -> str:
    """How a line came to be changed: its suspicion by the trace, the model's picks of it, or both."""
    said = [f"suspicion {suspicion[number]:.2f}"] if number in suspicion else []
    if number in votes:
        said.append(f"{votes[number]} of {picks} picks")
    return "; ".join(said)


def _ranked(tried: list[_Tried], *, guard: bool = False, asked: Sequence[str] = (),
            added: Sequence[str] = ()) -> list[_Tried]:
    """Passing candidates first (those leaving tests alone, then fewest changed lines; with a ``guard`` check,
    one that passed before any change, greedy answers before sampled ones, in the order drawn, and sampled ones
    that change only comments or docstrings last: any such change passes a guard), then those whose check ran
    (fewest failing tests, then most passing: a ``pytest -x`` run counts one failure whether the change fixed
    nothing or broke the package's import, which it counts with none passed), then the rest; earlier candidates
    win ties (the greedy answer first). ``asked``: the
    new names a rename question gives; of the passing candidates, those that write them come first. ``added``: the
    definitions the question asks to add; a checked candidate that adds none of them ranks after every checked one
    that does, passing or not (dotenv's "add rename_key": the 1.5B's answer added it and broke one test, and a
    repair candidate that only made ``dict()`` return a copy passed the guard and was offered), and after one
    that adds one but reads a name nothing defines (not checked: the closer change, and the one to repair). A one-token change
    the node made (``mutation``) that did not pass cleanly ranks after every candidate the model wrote: no model
    proposed it, and a failed one is nothing to offer or repair (the 0.5B's first bug task offered one); one that
    does ranks after the model's passing candidates."""
    def key(t: _Tried) -> tuple[int, int, int, int, int, int, int, int, int, int]:
        r = t.result
        checked = r.outcome in _CHECKED
        concrete = checked or r.outcome in _LINTED  # a change that parses and applies
        missing = bool(added) and concrete and not set(added) & added_definitions(r.diff)
        group = 2 * int(missing) + int(not checked) if concrete else 4
        return (int(r.arm == "mutation" and not r.clean_pass), group, *tier(t))

    def tier(t: _Tried) -> tuple[int, int, int, int, int, int, int, int]:
        r = t.result
        if r.outcome == "passed":  # one that passes by changing a test ranks after those that leave tests alone,
            # and one that breaks tests that passed before after those that break none (fewest broken first);
            # then one that writes the names asked for (the 0.5B's test written for h11's rename failed on every
            # candidate, and a one-line change to the function's body, fewer lines, was offered over the rename);
            # of the tests written for the change, more passed first
            order = ((int(r.sampled) + int(r.sampled and r.comments_only)) * 10_000 + r.index) if guard else \
                (r.changed_lines * 10_000 + r.index)
            return (0, len(r.broke), int(bool(asked) and not renamed_as_asked(r.diff, asked)),
                    int(r.reproduced is False), -r.written_passed, 1 if any(is_test_path(f) for f in r.files) else 0,
                    int(r.arm == "mutation"), order)
        if r.outcome in ("failed", "timeout", "not_found", "error"):  # then the run that got further (more passed;
            # one that passed none, stopped at collection by a change that broke an import, after any that passed
            # some: the 0.5B's fill renamed dotenv's `parse_value`, and its run's one error counted fewer failing than
            # the two failing tests before)
            return (1, -r.written_passed, int(r.passing == 0), r.failing if r.failing is not None else 10**6,
                    -(r.passing or 0), r.index, 0, 0)
        if r.outcome in (*_LINTED, "does_not_parse", "does_not_apply"):
            return (2, int(r.outcome == "does_not_apply"), r.index, 0, 0, 0, 0, 0)
        return (3, 0, r.index, 0, 0, 0, 0, 0)
    return sorted(tried, key=key)


_HELD_LEAD = "left out: its edit of "
_HELD_WHY = "a fix is checked and offered against the tests as they are; ask for the test to change to get such an edit"


def held_out(edits: ProposedEdits) -> str:
    """The sentence an offered change's answer names the failing tests' edits left out of it with ('' if none)."""
    held = [note.removeprefix(_HELD_LEAD).split(", the failing test's file")[0] for note in edits.notes
            if note.startswith(_HELD_LEAD)]
    return (f"Not offered: the answer's edit of {', '.join(held)}, the failing test{'s' if len(held) > 1 else ''} "
            f"({_HELD_WHY}).") if held else ""


def _without(edits: ProposedEdits, held: frozenset[str]) -> tuple[ProposedEdits, str]:
    """``edits`` without those of the ``held`` files (the failing tests'), and the note that names what was left
    out ('' when nothing was): that note goes with the edits, so explain-context and the answer say it."""
    out = sorted({e.path for e in edits.edits if e.path in held})
    if not out:
        return edits, ""
    note = f"{_HELD_LEAD}{', '.join(out)}, the failing test's file ({_HELD_WHY})"
    return msgspec.structs.replace(edits, edits=tuple(e for e in edits.edits if e.path not in held),
                                   notes=(*edits.notes, note)), note


_CHECKED = frozenset({"passed", "failed", "timeout", "not_found", "error"})
"""A candidate's outcomes where its change was applied and the check ran."""


_REPRO_FILE = "test_contenox_change.py"
_REPRO_REQUEST = ("Before your change is checked, write a pytest test for it: one test file that imports from the "
                  "project as its tests do and checks what was asked for, so that it fails on the code as it is now "
                  "and passes once the change is made. Reply with the test file alone in one ```python code block.")
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)'")
_ADDED = re.compile(r"\b([A-Za-z_]\w*)\(|\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")
"""Names a question may ask to add: one it calls (``rename_key(``) or a CapWords one (``PayloadTooLarge``)."""
_BUILTINS = frozenset(dir(builtins))
_OWN_ERRORS = re.compile(r"\b(?:SyntaxError|IndentationError|NameError)\b|fixture '[^']+' not found")


_SCRIPT_FILE = "contenox-change.test.js"
_SCRIPT_SUFFIX = re.compile(r"\.[cm]?js$")


def _script_request(paths: Sequence[str]) -> str:
    """What the model is asked for: a Node script of the change, its ``require`` shown with the first of
    ``paths`` (the files the answer edited, then the prompt's) that is a script and no test, as the project
    lays it out (a made-up ``./lib/module`` was copied: semver has no ``lib``); no test framework (the 1.5B wrote
    mocha's ``describe``, which plain ``node`` does not define)."""
    module = next((_SCRIPT_SUFFIX.sub("", p) for p in paths if _SCRIPT_SUFFIX.search(p) and not is_test_path(p)),
                  "index")
    return ("Before your change is checked, write a test for it: one Node.js script, run from the project's root, "
            f"that requires the project's modules by their path from the root (`require('./{module}')`) and "
            "checks what was asked for with `assert` (plain Node: no test framework, no `describe` or `it`), so "
            "that it throws on the code as it is now and runs through once the change is made. Reply with the "
            "script alone in one ```javascript code block.")
_ASSERTS = re.compile(r"\bassert\b|\bthrow\b")
_NOT_DEFINED = re.compile(r"ReferenceError: (\w+) is not defined")
_NO_MODULE = re.compile(r"Cannot find module '([^']+)'")
_NOT_A_FUNCTION = re.compile(r"([\w$]+(?:\.[\w$]+)*) is not a function")
_SCRIPT_TRIES = 30


def _scripted(tree: Path) -> bool:
    """A JavaScript project (a ``package.json`` at its root) on a machine with ``node``."""
    return (tree / "package.json").is_file() and shutil.which("node") is not None


_IMPORT_ADDED = "added by Contenox: the test uses it and did not import it"
_NODE_MODULES = ("assert", "fs", "path", "os", "util")
"""Node's built-in modules a script written for a change uses without requiring (the 1.5B's ``assert.ok(...)``
with no ``require('assert')``): the require is added, as an editor's quick fix would."""


def _with_requires(script: str) -> str:
    """``script`` with a ``require`` of each of :data:`_NODE_MODULES` it calls (``assert(``, ``fs.read...``) and
    never declares, each line saying the node added it."""
    missing = [name for name in _NODE_MODULES if re.search(rf"(?<![\w$.]){name}\s*[.(]", script)
               and not re.search(rf"\b(?:const|let|var|function|class|import)\s+(?:\{{[^}}]*)?\b{name}\b"
                                 rf"|(?<![\w$.]){name}\s*=[^=]|\(\s*{name}\s*[,)]", script)]
    return "".join(f"const {name} = require('{name}') // {_IMPORT_ADDED}\n" for name in missing) + script


def _with_imports(code: str, known: Mapping[str, str] | None = None) -> str:
    """The Python test ``code`` with an ``import`` of each standard-library module (and ``pytest``) it uses as
    ``module.name`` and never binds (the 1.5B's ``io.StringIO(...)`` with no ``import io`` failed with every
    change), and of each name it never binds that ``known`` gives the project's own import of (``Decimal``:
    ``from decimal import Decimal``, as the project's modules import it; the 1.5B's three tests of a tax module
    used ``Decimal`` unimported and failed with every change), added after its docstring and ``__future__``
    imports, each line saying the node added it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    bases = {node.value.id for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    unbound = unbound_names(code)
    known = known or {}
    missing = [f"import {name}" for name in sorted(unbound & bases)
               if name in sys.stdlib_module_names or name == "pytest"]
    missing += list(dict.fromkeys(known[name] for name in sorted(unbound - bases) if name in known))
    if not missing:
        return code
    after = 0
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
            node.value.value, str)
        if not (docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__")):
            break
        after = node.end_lineno or node.lineno
    lines = code.splitlines(keepends=True)
    return "".join([*lines[:after], *(f"{line}  # {_IMPORT_ADDED}\n" for line in missing), *lines[after:]])


def standard_imports(texts: Iterable[str]) -> dict[str, str]:
    """Each name the Python modules ``texts`` import from the standard library at their top level, with the line
    that imports it (``{"Decimal": "from decimal import Decimal"}``); the first module's line wins."""
    known: dict[str, str] = {}
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    node.module.split(".")[0] in sys.stdlib_module_names and node.module != "__future__":
                for alias in node.names:
                    if alias.name != "*":
                        line = f"from {node.module} import {alias.name}" + (
                            f" as {alias.asname}" if alias.asname else "")
                        known.setdefault(alias.asname or alias.name, line)
    return known


def _script_code(answer: str) -> str | None:
    """The first code block of ``answer`` (or the whole answer) that ``node --check`` parses and that asserts or
    throws; a block cut short (the answer ran out of tokens) up to its last line that leaves it parsing. A built-in
    module it calls without requiring is required (:func:`_with_requires`)."""
    for code in [m.group(1) for m in _FENCE.finditer(answer)] + [answer]:
        lines = code.rstrip().splitlines()
        for _ in range(_SCRIPT_TRIES):
            if not lines:
                break
            text = "\n".join(lines).rstrip() + "\n"
            if unparsable(_SCRIPT_FILE, None, text) is None:
                if _ASSERTS.search(text):
                    return _with_requires(text)
                break
            lines.pop()
    return None


def _script_own_error(run: CheckRun, question: str, locate: Locate | None = None) -> str:
    """Why a Node script written for the change cannot tell changes apart ('' when it can): it passes already,
    it did not end by failing, it does not parse, it uses a name nothing defines that the question does not
    give, it requires a module that is not there and that the question does not name (a module the change is
    to create, ``internal/normalize-options.js``, is the change not made yet), or it calls as a function what is
    not one where it looks, though the workspace defines it (the 1.5B's ``require('./functions/satisfies')
    .satisfies(...)``: the module is the function; a function the change is to add is defined nowhere yet)."""
    if run.passed:
        return "it passes before the change too (it tests nothing the change adds)"
    if run.outcome != "failed":
        return f"it {run.describe()}"
    if "SyntaxError" in run.output:
        return "it fails on a syntax error of its own, with any change"
    for name in _NOT_DEFINED.findall(run.output):
        if not re.search(rf"\b{re.escape(name)}\b", question):
            return f"it uses `{name}`, which nothing defines, with any change"
    for module in _NO_MODULE.findall(run.output):
        stem = module.rstrip("/").rsplit("/", 1)[-1].removesuffix(".js")
        if not stem or stem in (".", "..") or stem not in question:
            return f"it requires `{module}`, which is not there and which the question does not name"
    for called in _NOT_A_FUNCTION.findall(run.output):
        if locate is not None and locate(called.rsplit(".", 1)[-1]):
            return (f"it calls `{called}`, which is not a function where it looks (`{called.rsplit('.', 1)[-1]}` is "
                    "defined, elsewhere or otherwise), with any change")
    return ""


def _test_code(answer: str, known: Mapping[str, str] | None = None) -> str | None:
    """The first code block of ``answer`` (or the whole answer) that parses and holds a ``test`` function; a
    block cut short (the answer ran out of tokens) up to its last whole statement. A standard-library module it
    uses without importing is imported, and the names of ``known`` (:func:`_with_imports`)."""
    for code in [m.group(1) for m in _FENCE.finditer(answer)] + [answer]:
        lines = code.rstrip().splitlines()
        while lines:
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:
                lines.pop()
                continue
            if any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
                   for node in ast.walk(tree)):
                return _with_imports("\n".join(lines).rstrip() + "\n", known)
            break
    return None


def _defined_in(code: str, name: str) -> list[tuple[int, int]]:
    """The lines (first, last) of each function or class named ``name`` in ``code`` (none: it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name]


_NO_MODULE_PY = re.compile(r"No module named '([\w.]+)'")


def _own_error(run: CheckRun, question: str = "") -> str:
    """Why a test written for the change cannot tell changes apart, from its run before the change ('' when it
    can: it failed). A ``NameError`` of a name the ``question`` gives is the change not made yet (the 1.5B's test
    of a rename called ``warn_on_parse_errors``, the new name), not the test's own error."""
    if run.passed:
        return "it passes before the change too (it tests nothing the change adds)"
    if run.outcome != "failed" or run.exit_code not in (1, 2):
        return f"it {run.describe()}"
    undefined = set(re.findall(r"NameError: name '(\w+)' is not defined", run.output))
    if undefined and all(re.search(rf"\b{re.escape(name)}\b", question) for name in undefined) and \
            not re.search(r"\b(?:SyntaxError|IndentationError)\b|fixture '[^']+' not found", run.output):
        return ""
    if found := _OWN_ERRORS.search(run.output):
        line = run.output[run.output.rfind("\n", 0, found.start()) + 1:].split("\n", 1)[0].strip()
        return f"it fails on an error of its own ({line[:160]}), with any change"
    for module in _NO_MODULE_PY.findall(run.output):  # a module the change is to create is named by the question
        if not re.search(rf"\b{re.escape(module.rsplit('.', 1)[-1])}\b", question):
            return f"it imports `{module}`, which is not there and which the question does not name"
    return ""


def _written_said(passed: int, of: int) -> str:
    """How a candidate did on the tests written for the change, as a clause of a check step's output."""
    if of > 1:
        return f"; {passed} of the {of} tests written for the change passed"
    return f"; the test written for the change {'passed' if passed else 'failed'}"


def _any_clean(tried: list[_Tried], added: Sequence[str] = ()) -> bool:
    """Whether a candidate passed the check and broke no test that passed before (and, where the question asks
    to add definitions, ``added``, adds one of them: under a check that passed before, a harmless change that adds
    none passes too, and ended the search: the 1.5B's repair of its `rename_key`, which read a name nothing defined,
    was a one-line change elsewhere that passed)."""
    return any(t.result.clean_pass and (not added or set(added) & added_definitions(t.result.diff)) for t in tried)


def _repair_message(command: CheckCommand, result: CandidateResult) -> str:
    if result.outcome == "passed" and result.reproduced is False:
        return (f"I applied that edit in a scratch copy: `{command.command}` passed, but the test written for the "
                f"change fails{f' ({result.written_passed} passed of those written)' if result.written_passed else ''}."
                f" Its output ends with:\n```\n{result.output_tail}\n```\nThe edit was not kept: the "
                "files are as before. Write one corrected edit block that makes the change so that test passes.")
    if result.outcome == "passed" and result.broke:
        return (f"I applied that edit in a scratch copy: `{command.command}` passed, but other tests that passed "
                f"before now fail: {', '.join(result.broke)}. The output ends with:\n```\n{result.output_tail}\n```\n"
                "The edit was not kept: the files are as before. Write one corrected edit block that fixes the code "
                "so the check passes and the other tests still pass.")
    if result.outcome == "does_not_parse":
        return (f"I applied that edit in a scratch copy: the file no longer parses, so `{command.command}` was not "
                f"run.\n```\n{result.output_tail}\n```\nThe edit was not kept: the files are as before. Write one "
                "corrected edit block that parses and makes the check pass.")
    if result.outcome == "drops_return":
        return (f"I applied that edit in a scratch copy: it leaves a function that returns a value able to reach its "
                f"end without returning one, so its callers get nothing there, and `{command.command}` was not "
                f"run.\n```\n{result.output_tail}\n```\nThe edit was not kept: the files are as before. Write one "
                "corrected edit block that keeps every return the function needs and makes the check pass.")
    if result.outcome == "undefined_name":
        return (f"I applied that edit in a scratch copy: it reads a name that nothing defines or imports where it is "
                f"read, which raises NameError when that line runs, so `{command.command}` was not run.\n```\n"
                f"{result.output_tail}\n```\nThe edit was not kept: the files are as before. Write one corrected "
                "edit block that defines, passes in or imports every name it uses and makes the check pass.")
    return (f"I applied that edit in a scratch copy and ran `{command.command}`: it "
            f"{'timed out' if result.outcome == 'timeout' else 'failed'}. The output ends with:\n```\n"
            f"{result.output_tail}\n```\nThe edit was not kept: the files are as before. Write one corrected edit "
            "block that makes the check pass.")


def describe(report: Verification) -> list[str]:
    """Explain-context lines: the verdict, then one line per candidate."""
    lines = [report.summary()]
    if report.status == "skipped":
        return lines
    offered = next((c for c in report.candidates if c.index == report.chosen), None)
    if offered is not None and any(is_test_path(f) for f in offered.files):
        lines.append("the offered change edits a test file: check it does not pass by changing the test")
    lines.append(f"check command: `{report.command}` (from {source_words(report.command_source)}"
                 f"{': ' + report.command_detail if report.command_detail else ''})")
    if report.reproduction_note:
        lines.append(report.reproduction_note)
    if report.stopped:
        lines.append(report.stopped)
    for number, code in enumerate(report.written_tests or ((report.reproduction,) if report.reproduction else ()), 1):
        label = f" {number} of {len(report.written_tests)}" if report.written_tests else ""
        lines.append(f"test written for the change{label} ({report.reproduction_path}, by the model):\n"
                     f"```{language(report.reproduction_path)[1]}\n{code.rstrip()}\n```")
    if report.traced is not None:
        lines.append(f"the check's first run traced: {report.traced} function(s) of the workspace ran in the "
                     "failing test(s)")
    if report.spectrum:
        lines.append(f"the failing tests' files run traced (passing tests beside failing ones): {report.spectrum}")
    if report.suite:
        lines.append(f"the project's whole suite, run with each candidate that passed the check: {report.suite}")
    if len(report.found) > len(report.places):
        lines.append(f"places found along the failing run: {', '.join(report.found)}")
    lines += [f"focused place {number}: {place}" for number, place in enumerate(report.places, 1)]
    for c in report.candidates:
        how = f"the node's one-token change, no model (line {c.line}: {c.change})" if c.arm == "mutation" else (
            ("greedy" if not c.sampled else "sampled") + (", grammar" if c.constrained else "") + (
                f", {c.arm} prompt" if c.arm and c.arm != "turn" else "") + (f" (line {c.line})" if c.line else "")) + (
            f", on top of candidate {c.on}" if c.on else "")
        detail = {"no_edit": "no edit" + (f" ({c.output_tail})" if c.output_tail else ""), "does_not_apply": f"does not apply: {c.output_tail}",
                  "does_not_parse": f"does not parse, not checked: {c.output_tail}",
                  **{outcome: f"{said}, not checked: {c.output_tail}" for outcome, said in LINT_SAID.items()}}.get(
            c.outcome, f"{c.outcome}" + (f", {c.failing} failing" if c.failing else "") + f" in {c.check_s:.1f} s"
            + (f", but it breaks {', '.join(c.broke)} (passed before it)" if c.broke else "")
            + (_written_said(c.written_passed, report.reproductions) if c.reproduced is not None or (
                report.command_source == "written" and c.outcome in ("passed", "failed")) else ""))
        chosen = " <- offered" if c.index == report.chosen else ""
        lines.append(f"candidate {c.index} (round {c.round}, {how}, {c.tokens} tokens, {c.recomputed_tokens} "
                     f"prompt tokens computed): {', '.join(c.files) or '-'}: {detail}{chosen}")
    return lines


def stacked_said(report: Verification, offered: CandidateResult) -> str:
    """What the answer says first when the offered change was drawn on top of other candidates' ('' when not):
    each step under it, first to last."""
    steps: list[CandidateResult] = []
    at = offered
    while at.on and (under := next((c for c in report.candidates if c.index == at.on), None)) is not None \
            and under not in steps:
        steps.insert(0, under)
        at = under
    if not steps:
        return ""
    before = len(report.failed_before)
    tests = f"{before or 'failing'} test{'s' if before != 1 else ''}"
    said = [f"Found in {_COUNTED.get(len(steps) + 1, len(steps) + 1)} steps."]
    said += [f"{'First' if n == 0 else 'Then'}, candidate {c.index}'s change{', drawn on top of it' if n else ''}, "
             f"with which {c.failing} of the {tests} that failed before still failed:\n\n{c.answer.strip()}"
             for n, c in enumerate(steps)]
    said.append(f"Then, drawn on top of it (the change offered holds {'both' if len(steps) == 1 else 'all of them'}):")
    return "\n\n".join(said)


_COUNTED = {2: "two", 3: "three"}


_LINT_RULES: tuple[tuple[CandidateOutcome, Callable[[str, str | None, str | None], str | None]], ...] = (
    ("undefined_name", undefined_names),
    ("drops_return", dropped_returns),
)
"""What a change is read for before its check runs, each rule only for what the change brings: a name read where
nothing binds it (pyflakes' "undefined name", fatal in Aider's lint step: the 1.5B's `rename_key` read a local of
the function it copied, under tests that passed before and after), and a function left returning a value on some
paths and reaching its end on others (ESLint's consistent-return, pylint's R1710: the 1.5B's three candidates
that passed semver's one-off caret check each took `return result` out of `parseRange`)."""
_LINTED = tuple(outcome for outcome, _ in _LINT_RULES)


def _linted(edits: ProposedEdits) -> tuple[CandidateOutcome, list[str]] | None:
    """The first rule of :data:`_LINT_RULES` the edits break, and what it says of each file that breaks it."""
    for outcome, rule in _LINT_RULES:
        if problems := [problem for e in edits.edits if (problem := rule(e.path, e.old_text, e.new_text))]:
            return outcome, problems
    return None


def _unparsable(edits: ProposedEdits) -> list[str]:
    """Why each file the edits leave no longer parses (a JavaScript file is parsed by ``node --check``: run it
    off the event loop)."""
    return [problem for e in edits.edits if (problem := unparsable(e.path, e.old_text, e.new_text))]


_NARROWINGS = 4
"""How many times a detected check is run again without the test files it could not import."""


def skipped(reason: str) -> Verification:
    return Verification(status="skipped", reason=reason)


def verification_error(exc: ContenoxError) -> Verification:
    return Verification(status="skipped", reason=f"verification failed: {exc.message}")
