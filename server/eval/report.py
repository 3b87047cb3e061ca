"""The eval report: one result per task and mode, a summary per mode, and the table ``contenox eval`` prints."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from contenox.eval.in_view import InView
from contenox.eval.score import EditCheck
from contenox.eval.tasks import KINDS

__all__ = ["AgentTask", "EvalReport", "ModeSummary", "TaskResult", "VerifiedTask", "render_table", "summarize"]


class AgentTask(msgspec.Struct, frozen=True, kw_only=True):
    """An agent-mode task's tool loop, as the node reported it (its tool activity)."""

    steps: int = 0
    """Tool steps the turn took (answers that held a call)."""
    calls: tuple[str, ...] = ()
    """Each call's title as the user is shown it, in order."""
    tool_errors: tuple[str, ...] = ()
    """The calls that failed, and why (a missing file, a diff that does not apply, a command not allowed)."""
    commands_run: tuple[str, ...] = ()
    """Commands run (only the task's check command is allowed), each with its exit code."""
    commands_refused: tuple[str, ...] = ()


class VerifiedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A verified-mode task's verification, as the node reported it."""

    status: str
    """passed | failed | skipped (see ``reason``)."""
    reason: str = ""
    baseline: str = ""
    """The check's outcome before any change (``passed``: it could only guard against breakage)."""
    command: str = ""
    command_source: str = ""
    grading_test: bool = False
    """The command that verified is the task's own grading test (shown in its failing run, as a user would)."""
    candidates: int = 0
    passed_candidates: int = 0
    broke_candidates: int = 0
    """Candidates that passed the check but broke tests of the failing tests' files that passed before."""
    reproduction: str = ""
    """The test the model wrote for the change (a check that passed before it), as run; empty: none used."""
    written_tests: int = 0
    """How many tests written for the change were kept (each failed before it; ``reproduction`` is the first)."""
    reproduction_note: str = ""
    stopped: str = ""
    """Why the search drew no more candidates before it ran its course (``verify.budget_s`` spent), or empty."""
    with_edit: int = 0
    chosen: int | None = None
    rounds: int = 0
    prefill_tokens: int = 0
    """Prompt tokens computed for the turn's answer (the one prefill)."""
    candidate_prompt_tokens: tuple[int, ...] = ()
    """Prompt tokens computed for each candidate (the greedy one first): the rest come from the cache."""
    decode_s: float = 0.0
    apply_s: float = 0.0
    check_s: float = 0.0
    wall_s: float = 0.0
    outcomes: tuple[str, ...] = ()
    failing: tuple[int | None, ...] = ()
    """The failing tests each candidate's check counted (None: not checked, or its output does not count them):
    which searches had a candidate that fixed some of several failing tests."""
    on: tuple[int, ...] = ()
    """The candidate each one was drawn on top of (0: none; ``[verify] stack``)."""
    diffs: tuple[str, ...] = ()
    """Each candidate's change (empty: no edit), in the order drawn."""
    answers: tuple[str, ...] = ()
    """Each candidate's answer as the model wrote it (its first 3000 characters)."""
    arms: tuple[str, ...] = ()
    """The prompt each candidate was drawn from: turn, focused (one localized function) or repair."""
    places: tuple[str, ...] = ()
    """The focused places tried, in order, each with how it was found (the node's explain-context entries)."""
    bug_place: int | None = None
    """Which focused place holds the lines the task's bug touches (from 1); 0: places were tried, none holds
    them; None: no place was tried (or no bug injected)."""
    graded: int = 0
    """Distinct candidate changes laid on the task's tree and run against its grading test (after the node's
    verification, by the eval: the node never runs it unless it is the failing run the task shows)."""
    grading_passed: int = 0
    """How many of ``graded`` pass the grading test: more than 0 is what a perfect choice among the candidates
    (pass@k) would offer; 0 means no candidate drawn was right, whatever chose among them."""
    found: tuple[str, ...] = ()
    """Every function the focused round found along the failing run, in the order found (offered to the pick)."""
    bug_found: int | None = None
    """Which of ``found`` holds the lines the task's bug touches (from 1; 0: none; None: nothing found)."""


class TaskResult(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    repo: str
    kind: str
    mode: str
    """``retrieval`` (the planner as shipped) or ``baseline`` (repo map only: retrieval off)."""
    must_files: tuple[str, ...]
    files_in_prompt: tuple[str, ...]
    """Workspace files whose code (retrieved chunks, pins) the prompt held."""
    recall: float
    """Share of the must-cite files whose code was in the prompt."""
    chunks: int
    """Retrieved chunks in the prompt."""
    prompt_tokens: int
    cached_tokens: int
    segment_tokens: dict[str, int]
    notes: tuple[str, ...] = ()
    generated: bool = False
    files_named: tuple[str, ...] = ()
    """Must-cite files the answer's text names (the model's words, or the node's locations sentence or call tree
    after them)."""
    files_edited: tuple[str, ...] = ()
    """Must-cite files the answer's proposed edit changes (what the user is shown and can apply): named too."""
    symbols_named: tuple[str, ...] = ()
    must_symbols: tuple[str, ...] = ()
    cited_real: int = 0
    cited_unknown: tuple[str, ...] = ()
    """Names the answer cites that the workspace does not have (invented files, symbols, lines)."""
    precision: float | None = None
    """Real citations / all citations of the answer (None: it cites nothing)."""
    edit: EditCheck | None = None
    passed: bool | None = None
    """None when the model did not run (``--retrieval-only``)."""
    passed_own: bool | None = None
    """Whether it passes on the model's own words: the answer without the node's locations sentence (the files of
    the names it gave) and call tree (:mod:`contenox.answer.locations`). None: the model did not run."""
    ttft_ms: float | None = None
    answer_tokens: int = 0
    edit_problems: tuple[str, ...] = ()
    """Edit blocks of the answer the node could not place in the workspace."""
    wall_s: float = 0.0
    error: str | None = None
    answer: str = ""
    verification: VerifiedTask | None = None
    """``verified`` mode: what the node's check did."""
    agent: AgentTask | None = None
    """``agent`` mode: the tool loop."""
    in_view: InView | None = None
    """``inview`` / ``anticipated`` / ``moved`` / ``floor``: the question asked with its code in view."""


class ModeSummary(msgspec.Struct, frozen=True, kw_only=True):
    mode: str
    tasks: int
    errors: int
    recall: float
    """Must-cite files present in the prompt over all must-cite files of the set (micro average)."""
    full_recall_tasks: int
    pass_rate: float | None
    passed_by_kind: dict[str, tuple[int, int]]
    """kind -> (passed, tasks)"""
    passed_own: int | None = None
    """Tasks that pass on the model's own words (without the node's locations sentence and call tree)."""
    precision: float | None
    ttft_ms_median: float | None
    prompt_tokens_median: float
    verification: dict[str, object] | None = None
    """``verified`` mode: how many tasks verified and passed, split by whether the command that verified was the
    task's own grading test (shown in its failing run) or one the node found (configured or detected), candidates
    that passed, and the median time spent (whole task; decoding, checking)."""
    agent: dict[str, object] | None = None
    """``agent`` mode: tool steps per task (median, most), calls, tool errors, commands run and refused."""
    in_view: dict[str, object] | None = None
    """``inview`` / ``anticipated`` / ``moved`` / ``floor``: client TTFT, completion latency and what was
    anticipated."""


class EvalReport(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    date: str
    retrieval_only: bool
    task_files: tuple[str, ...]
    machine: dict[str, object]
    summaries: tuple[ModeSummary, ...]
    results: tuple[TaskResult, ...]


def summarize(mode: str, results: Sequence[TaskResult]) -> ModeSummary:
    ok = [r for r in results if r.error is None]
    files = sum(len(r.must_files) for r in ok)
    present = sum(round(r.recall * len(r.must_files)) for r in ok)
    judged = [r for r in ok if r.passed is not None]
    by_kind = {kind: (sum(1 for r in judged if r.kind == kind and r.passed),
                      sum(1 for r in judged if r.kind == kind)) for kind in KINDS}
    precisions = [r.precision for r in ok if r.precision is not None]
    ttfts = [r.ttft_ms for r in ok if r.ttft_ms is not None]
    return ModeSummary(
        verification=_verification_summary(judged), agent=_agent_summary(ok), in_view=_in_view_summary(ok),
        mode=mode, tasks=len(results), errors=len(results) - len(ok),
        recall=round(present / files, 4) if files else 0.0,
        full_recall_tasks=sum(1 for r in ok if r.recall >= 1.0),
        pass_rate=round(sum(1 for r in judged if r.passed) / len(judged), 4) if judged else None,
        passed_own=(sum(1 for r in judged if r.passed_own) if any(r.passed_own is not None for r in judged)
                    else None),  # (reports written before the locations sentence have none)
        passed_by_kind={k: v for k, v in by_kind.items() if v[1]},
        precision=round(statistics.fmean(precisions), 4) if precisions else None,
        ttft_ms_median=round(statistics.median(ttfts), 1) if ttfts else None,
        prompt_tokens_median=statistics.median([r.prompt_tokens for r in ok]) if ok else 0.0)


def _verification_summary(judged: Sequence[TaskResult]) -> dict[str, object] | None:
    runs = [r for r in judged if r.verification is not None]
    if not runs:
        return None

    def share(rows: list[TaskResult]) -> list[int]:
        return [sum(1 for r in rows if r.passed), len(rows)]

    ran = [r for r in runs if r.verification is not None and r.verification.status != "skipped"]
    grading = [r for r in ran if r.verification is not None and r.verification.grading_test]
    walls = [r.verification.wall_s for r in ran if r.verification is not None]
    return {
        "verified_tasks": len(ran), "skipped": len(runs) - len(ran),
        "check_passed_tasks": sum(1 for r in ran if r.verification is not None and r.verification.status == "passed"),
        "passed_with_grading_test": share(grading),
        "passed_with_other_command": share([r for r in ran if r not in grading]),
        "passed_not_verified": share([r for r in runs if r not in ran]),
        "passed_with_a_test_the_model_wrote": share([r for r in ran if r.verification is not None
                                                     and r.verification.reproduction]),
        "candidates": sum(r.verification.candidates for r in ran if r.verification is not None),
        "candidates_passed": sum(r.verification.passed_candidates for r in ran if r.verification is not None),
        "candidates_passed_breaking_tests": sum(r.verification.broke_candidates for r in ran
                                                if r.verification is not None),
        "verify_wall_s_median": round(statistics.median(walls), 1) if walls else None,
        "stopped_at_budget": share([r for r in ran if r.verification is not None and r.verification.stopped]),
        "decode_s_median": round(statistics.median(r.verification.decode_s for r in ran
                                                   if r.verification is not None), 1) if ran else None,
        "check_s_median": round(statistics.median(r.verification.check_s for r in ran
                                                  if r.verification is not None), 2) if ran else None,
        "localized": _localized(ran),
        "graded_candidates": sum(r.verification.graded for r in ran if r.verification is not None),
        "graded_candidates_passed": sum(r.verification.grading_passed for r in ran if r.verification is not None),
        "tasks_with_a_right_candidate": sum(1 for r in ran if r.verification is not None
                                            and r.verification.grading_passed),
        "tasks_whose_offered_edit_passed": sum(1 for r in ran if r.edit is not None and r.edit.test_passed),
    }


def _localized(ran: Sequence[TaskResult]) -> dict[str, int]:
    """Of the verifications whose focused round tried places, how many tried the bug's function first, how many
    at all (the rest never reached it: what localization lost)."""
    tried = [r.verification.bug_place for r in ran if r.verification is not None and r.verification.bug_place is not None]
    found = [r.verification.bug_found for r in ran if r.verification is not None and r.verification.bug_found is not None]
    return {"focused": len(tried), "bug_first": sum(1 for n in tried if n == 1),
            "bug_tried": sum(1 for n in tried if n >= 1), "bug_found": sum(1 for n in found if n >= 1)}


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _in_view_summary(results: Sequence[TaskResult]) -> dict[str, object] | None:
    views = [r.in_view for r in results if r.in_view is not None]
    if not views:
        return None
    used = [v.anticipated for v in views if v.anticipated is not None]
    retrieved = sum(int(a.get("retrieved_tokens") or 0) for a in used)
    anticipated = sum(int(a.get("anticipated_tokens") or 0) for a in used if a.get("used"))
    cached = sum(int(a.get("cached_tokens") or 0) for a in used if a.get("used"))
    prefilled = sum(max(0, v.prefilled_tokens) for v in views)
    minutes = sum(r.wall_s for r in results if r.in_view is not None) / 60.0
    return {
        "questions": len(views),
        "ttft_client_ms_median": _median([v.ttft_client_ms for v in views if v.ttft_client_ms is not None]),
        "completion_ms_median": _median([v.completion_ms for v in views if v.completion_ms is not None]),
        "completions": sum(1 for v in views if v.completion_ms is not None),
        "warm_before_question": sum(1 for v in views if v.warm_before_question),
        "anticipation_not_used": sum(1 for a in used if not a.get("used")),
        "anticipation_missing": len(views) - len(used),
        "retrieved_tokens": retrieved,
        "anticipated_tokens": anticipated,
        "anticipated_cached_tokens": cached,
        "anticipated_share": round(anticipated / retrieved, 4) if retrieved else None,
        "anticipated_uncomputed_chunks": sum(int(a.get("uncomputed") or 0) for a in used),
        "prefilled_tokens": prefilled,
        "prefilled_tokens_per_minute": round(prefilled / minutes, 1) if minutes else None,
        "prefilled_unused_share": round(1.0 - cached / prefilled, 4) if prefilled else None,
    }


def _agent_summary(results: Sequence[TaskResult]) -> dict[str, object] | None:
    loops = [r.agent for r in results if r.agent is not None]
    if not loops:
        return None
    steps = [a.steps for a in loops]
    return {"tasks": len(loops), "steps_median": statistics.median(steps), "steps_max": max(steps),
            "tasks_with_a_call": sum(1 for a in loops if a.calls), "calls": sum(len(a.calls) for a in loops),
            "tool_errors": sum(len(a.tool_errors) for a in loops),
            "commands_run": sum(len(a.commands_run) for a in loops),
            "commands_refused": sum(len(a.commands_refused) for a in loops)}


def render_table(report: EvalReport) -> str:
    """Per task and mode one line, then the summary per mode."""
    lines = [f"contenox eval: {report.model}, {len(report.results)} runs"
             + (" (retrieval only)" if report.retrieval_only else ""), ""]
    head = f"{'task':<34}{'kind':<18}{'mode':<10}{'recall':>7}{'chunks':>7}{'tokens':>7}"
    if not report.retrieval_only:
        head += f"{'files':>6}{'syms':>6}{'prec':>6}{'edit':>6}{'pass':>6}{'ttft s':>8}"
    lines.append(head)
    for r in report.results:
        row = f"{r.id[:33]:<34}{r.kind:<18}{r.mode:<10}{r.recall:>7.2f}{r.chunks:>7}{r.prompt_tokens:>7}"
        if r.error is not None:
            row += f"  error: {r.error[:80]}"
        elif not report.retrieval_only:
            edit = "-" if r.edit is None else ("ok" if r.edit.applies and r.edit.test_passed is not False
                                               else "no" if r.edit.proposed else "none")
            prec = "-" if r.precision is None else f"{r.precision:.2f}"
            ttft = "-" if r.ttft_ms is None else f"{r.ttft_ms / 1000:.1f}"
            files = f"{len(set(r.files_named) | set(r.files_edited))}/{len(r.must_files)}"
            syms = f"{len(r.symbols_named)}/{len(r.must_symbols)}"
            row += f"{files:>6}{syms:>6}{prec:>6}{edit:>6}{'yes' if r.passed else 'no':>6}{ttft:>8}"
        lines.append(row)
    lines.append("")
    for s in report.summaries:
        text = (f"{s.mode}: recall {s.recall:.1%} of must-cite files in the prompt "
                f"({s.full_recall_tasks}/{s.tasks - s.errors} tasks complete)")
        if s.pass_rate is not None:
            kinds = ", ".join(f"{k} {p}/{n}" for k, (p, n) in s.passed_by_kind.items())
            text += f"; pass {s.pass_rate:.1%} ({kinds})"
            if s.passed_own is not None:
                text += (f" ({s.passed_own} of them on the model's own words, without the node's locations sentence and "
                         "call tree)")
        if s.precision is not None:
            text += f"; citation precision {s.precision:.2f}"
        if s.ttft_ms_median is not None:
            text += f"; median TTFT {s.ttft_ms_median / 1000:.1f} s"
        text += f"; median prompt {s.prompt_tokens_median:.0f} tokens"
        if s.errors:
            text += f"; {s.errors} error(s)"
        if s.verification is not None:
            v = s.verification

            def frac(key: str, v: dict[str, object] = v) -> str:
                pair = v[key]
                return "/".join(str(n) for n in pair) if isinstance(pair, list) else str(pair)

            text += (f"\n  verified {v['verified_tasks']} task(s) ({v['check_passed_tasks']} with a passing candidate; "
                     f"{v['skipped']} not verified); passed {frac('passed_with_grading_test')} where the node "
                     f"verified with the task's own failing test, {frac('passed_with_other_command')} with a command "
                     f"it found, {frac('passed_not_verified')} unverified; median verification "
                     f"{v['verify_wall_s_median']} s")
            if isinstance(stopped := v.get("stopped_at_budget"), list) and stopped[1]:
                text += f"; {stopped[1]} search(es) stopped at verify.budget_s (passed {stopped[0]})"
            if isinstance(written := v.get("passed_with_a_test_the_model_wrote"), list) and written[1]:
                text += (f"\n  a test the model wrote for the change was used in {written[1]} task(s) (their check "
                         f"passed before it): passed {written[0]}/{written[1]}; candidates that passed their check "
                         f"but broke tests that passed before: {v.get('candidates_passed_breaking_tests', 0)}")
            if v.get("graded_candidates"):
                text += (f"\n  candidates against the grading test: {v['graded_candidates_passed']} of "
                         f"{v['graded_candidates']} distinct changes pass it; a right one was drawn in "
                         f"{v['tasks_with_a_right_candidate']} task(s), the offered edit passed in "
                         f"{v['tasks_whose_offered_edit_passed']}")
            if isinstance(loc := v.get("localized"), dict) and loc.get("focused"):
                text += (f"\n  localized: the bug's function tried first in {loc['bug_first']} of {loc['focused']} "
                         f"focused rounds, tried at all in {loc['bug_tried']}, found (offered to the pick) in "
                         f"{loc['bug_found']}")
        if s.in_view is not None:
            iv = s.in_view
            text += (f"\n  in view: median TTFT {iv['ttft_client_ms_median']} ms (client), completion "
                     f"{iv['completion_ms_median']} ms over {iv['completions']}; warm before the question "
                     f"{iv['warm_before_question']}/{iv['questions']}; anticipated {iv['anticipated_tokens']} of "
                     f"{iv['retrieved_tokens']} retrieved tokens ({iv['anticipated_cached_tokens']} cached), not used "
                     f"{iv['anticipation_not_used']}; prefilled {iv['prefilled_tokens']} tokens "
                     f"({iv['prefilled_tokens_per_minute']}/min, unused share {iv['prefilled_unused_share']})")
        if s.agent is not None:
            a = s.agent
            text += (f"\n  agent: {a['tasks_with_a_call']}/{a['tasks']} task(s) called a tool; steps per task median "
                     f"{a['steps_median']}, most {a['steps_max']}; {a['calls']} call(s), {a['tool_errors']} tool "
                     f"error(s); {a['commands_run']} command(s) run, {a['commands_refused']} refused")
        lines.append(text)
    return "\n".join(lines) + "\n"
