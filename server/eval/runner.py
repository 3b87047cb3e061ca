"""Running the task set through a real node, like a user's turns: ``contenox eval``.

Each mode gets a private node (its own ``CONTENOX_HOME`` under ``$CONTENOX_HOME/eval/``, sharing the
model store, its own socket directory), so the eval never disturbs the user's node and the model is
the one asked for. ``retrieval`` is the planner as shipped; ``baseline`` is the same planner with
retrieval off (the repo map only, what turns held before retrieval); ``agent`` is the planner as shipped with the
node's tools given to the model whether or not it is certified (an override in that node's config only), the
task's check command the only command its turns may run (auto-consented, run in the task's checkout; the edits
the turn proposes are offered after it, as to a user, so the command sees the tree as it is). Every task runs in
a fresh scratch checkout of its repository at its commit (with its bug injected), so each is a new workspace
and a fresh thread. ``--retrieval-only`` plans each turn without running the model.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from contenox.client import PrivateNode
from contenox.config import Config
from contenox.eval.checkout import checkout
from contenox.eval.in_view import IN_VIEW_MODES, after_question, before_question
from contenox.eval.prepare import prepare
from contenox.eval.report import AgentTask, EvalReport, TaskResult, VerifiedTask, summarize
from contenox.eval.score import (
    bug_place,
    check_edit,
    files_named,
    grade_candidates,
    graded,
    recall,
)
from contenox.eval.tasks import Task
from contenox.host import host_facts
from contenox.verify import python_env, run_check

__all__ = ["MODES", "EvalNode", "run_eval"]

log = logging.getLogger(__name__)
MODES = ("retrieval", "baseline")
"""What ``--mode both`` runs; ``verified`` (retrieval plus verified fixes) and ``agent`` (retrieval plus the tool
loop) are asked for by name."""
Progress = Callable[[str], None]


class EvalNode:
    """A private node for one eval mode (:class:`~contenox.client.PrivateNode` in ``eval/<model>-<mode>``)."""

    def __init__(self, base: Config, model: str, mode: str, *, max_new_tokens: int) -> None:
        planner = (msgspec.structs.replace(base.planner, retrieval_tokens=0) if mode == "baseline"
                   else base.planner)
        anticipate = msgspec.structs.replace(
            base.anticipate, enabled=mode in ("anticipated", "moved", "typed", "floor"),
            tokens=planner.retrieval_tokens if mode == "floor" else base.anticipate.tokens)
        config = msgspec.structs.replace(
            base, model=msgspec.structs.replace(base.model, default=model), planner=planner,
            verify=msgspec.structs.replace(base.verify, enabled=mode == "verified"),
            # the tool loop only in agent mode: the other modes are one answer each (a certified model, such as
            # the 1.5B with its shipped certification, would otherwise make every mode an agent turn)
            tools=msgspec.structs.replace(base.tools, enabled=mode == "agent", ignore_certification=mode == "agent"),
            engine=msgspec.structs.replace(base.engine, max_new_tokens=max_new_tokens), anticipate=anticipate)
        self._node = PrivateNode(base, f"eval/{model}-{mode}", config)
        self.config = self._node.config

    @property
    def first_chunk_ms(self) -> float | None:
        """The last ``ask``'s time to its first streamed chunk, as the client saw it."""
        return self._node.first_chunk_ms

    def ask(self, params: dict[str, Any], loop: _AgentLoop | None = None) -> Any:
        return self._node.ask(params, on_notification=loop.heard if loop else None,
                              on_request=loop.asked if loop else None)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Any other request of the node's rpc (``focus``, ``status``, ``complete``)."""
        return self._node.request(method, params)

    def close(self) -> None:
        self._node.close()


def _selection(task: Task, tree: Path) -> tuple[str, str | None, tuple[int, int] | None]:
    if task.selection is None:
        return "", None, None
    sel = task.selection
    lines = (tree / sel.path).read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines[sel.start_line - 1:sel.end_line])
    return f"{sel.path} lines {sel.start_line}-{sel.end_line}:\n{text}", sel.path, (sel.start_line, sel.end_line)


class _AgentLoop:
    """An agent-mode turn's client side: its tool activity recorded, and its command requests answered: the task's
    check command runs (consented: the eval's own) in the task's checkout (``run_command``, before the model
    proposed an edit) or in the node's scratch copy with the edit (``allow_check``), any other is refused."""

    def __init__(self, task: Task, tree: Path, env: dict[str, str]) -> None:
        self.allowed = " ".join(task.check.test_command.split()) if task.check is not None else ""
        self.tree = tree
        self.env = python_env(tree, {**os.environ, **env})
        self.tools: list[dict[str, Any]] = []
        self.run: list[str] = []
        self.refused: list[str] = []

    def heard(self, method: str, params: Any) -> None:
        if method == "tool" and isinstance(params, dict) and params.get("status") != "in_progress":
            self.tools.append(params)

    def asked(self, method: str, params: Any) -> Any:
        if not isinstance(params, dict):
            return None
        command = " ".join(str(params.get("command", "")).split())
        if method == "allow_check":  # a command after the model's edit: run by the node in its scratch copy
            allowed = bool(self.allowed) and command == self.allowed
            if not allowed:
                self.refused.append(command)
            return {"allowed": allowed}
        if method != "run_command":
            return None
        if not self.allowed or command != self.allowed:
            self.refused.append(command)
            return {"ran": False, "reason": "this eval allows only the task's check command"
                                            + (f": `{self.allowed}`" if self.allowed else " (it has none)")}
        done = run_check(command, self.tree, env=self.env, timeout_s=300.0)
        self.run.append(f"{command} (exit code {done.exit_code})")
        return {"ran": done.outcome in ("passed", "failed"), "exit_code": done.exit_code, "output": done.output,
                "reason": "" if done.outcome in ("passed", "failed") else done.describe()}

    def report(self) -> AgentTask:
        steps = {str(t.get("id", "")).partition("-")[0] for t in self.tools}
        return AgentTask(steps=len(steps), calls=tuple(str(t.get("title", "")) for t in self.tools),
                         tool_errors=tuple(f"{t.get('title', '')}: {str(t.get('output', ''))[:200]}"
                                           for t in self.tools if t.get("status") == "failed"),
                         commands_run=(*self.run, *(str(t.get("title", "")) for t in self.tools
                                                    if "scratch copy" in str(t.get("title", ""))
                                                    and "(exit code" in str(t.get("title", "")))),
                         commands_refused=tuple(self.refused))


def _run_task(node: EvalNode, mode: str, task: Task, tree: Path, *, retrieval_only: bool,
              think_s: float = 10.0) -> TaskResult:
    selection, open_file, lines = _selection(task, tree)
    view = None
    extra: dict[str, Any] = {}
    if mode in IN_VIEW_MODES and not retrieval_only:  # the question asked with the must-cite code in view
        _, extra, view = before_question(node.request, mode, task, tree, f"eval-{task.id}", think_s=think_s)
        if selection:  # the place is where the user looks, not a selection sent with the question
            selection, open_file, lines = "", None, None
        open_file = extra.get("open_file", open_file)
        lines = tuple(extra["selection_lines"]) if "selection_lines" in extra else lines
    started = time.monotonic()
    # verified: the eval consents for its tasks; commands run as the task's test does (this interpreter's
    # environment first on PATH, the task's env)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           **(task.check.env if task.check is not None else {})}
    loop = _AgentLoop(task, tree, env) if mode == "agent" and not retrieval_only else None
    result = node.ask({"cwd": str(tree), "prompt": task.ask, "terminal": extra.get("terminal", task.terminal.strip("\n")),
                       "selection": selection, "open_file": open_file,
                       "selection_lines": list(lines) if lines else None, "thread": f"eval-{task.id}",
                       "plan_only": retrieval_only, "env": env,
                       # verified: consented; agent: a command after an edit asks (the task's check is allowed)
                       "verify": True if mode == "verified" else None if mode == "agent" else False,
                       "run_commands": loop is not None}, loop)
    explain = result["explain"]
    if view is not None:
        view = after_question(node.request, mode, tree, view, explain, node.first_chunk_ms)
    in_prompt = tuple(result.get("files_in_prompt") or ())
    present, total = recall(task.must_cite_files, in_prompt)
    base = TaskResult(
        id=task.id, repo=task.repo, kind=task.kind, mode=mode, must_files=task.must_cite_files,
        files_in_prompt=in_prompt, recall=round(present / total, 4) if total else 1.0,
        chunks=len(explain.get("retrieved") or ()), prompt_tokens=explain["totals"]["tokens"],
        cached_tokens=explain["totals"]["cached"],
        segment_tokens={s["kind"]: s["tokens"] for s in explain["segments"]}, notes=tuple(explain.get("notes") or ()),
        must_symbols=task.must_cite_symbols, wall_s=round(time.monotonic() - started, 2), in_view=view)
    if retrieval_only:
        return base
    answer = result["text"]
    citations = explain.get("citations") or {}
    real = [*citations.get("files_real", ()), *citations.get("symbols_real", ())]
    unknown = tuple([*citations.get("files_unknown", ()), *citations.get("symbols_unknown", ()),
                     *citations.get("lines_unknown", ())])
    edited = tuple(files_named(task.must_cite_files, [e["path"] for e in result.get("edits") or ()]))
    proposed = "".join(e["diff"] for e in result.get("edits") or ())
    edit = check_edit(task, tree, answer, proposed) if task.check is not None and task.check.apply else None
    grade = graded(task, answer, citations.get("files_real", ()), edited, edit)  # with and without the node's words
    named, symbols, passed, passed_own = grade.named, grade.symbols, grade.passed, grade.passed_own
    verification = _verification(task, result.get("verification"))
    if mode == "verified" and verification is not None and task.check is not None and task.check.apply:
        # only where the tree is still as the task began (an agent turn writes to it): each candidate against its test
        candidates = grade_candidates(task, tree, verification.diffs)
        verification = msgspec.structs.replace(verification, graded=len(candidates),
                                               grading_passed=sum(1 for ok in candidates.values() if ok))
    return msgspec.structs.replace(
        base, verification=verification, agent=loop.report() if loop else None, generated=True, files_named=named, files_edited=edited, symbols_named=symbols, cited_real=len(real),
        cited_unknown=unknown,
        precision=round(len(real) / (len(real) + len(unknown)), 4) if real or unknown else None, edit=edit,
        passed=passed, passed_own=passed_own, ttft_ms=explain.get("ttft_ms"), answer=answer,
        answer_tokens=int(result.get("output_tokens") or 0), edit_problems=tuple(result.get("edit_problems") or ()))


def _verification(task: Task, report: Any) -> VerifiedTask | None:
    """What the node's verification did for the task; whether the command it ran is the task's grading test
    (the failing run the task shows, as a user would) is kept apart."""
    if not isinstance(report, dict):
        return None
    candidates = report.get("candidates") or []
    command = str(report.get("command") or "")
    grading = task.check.test_command if task.check is not None else ""
    return VerifiedTask(
        status=str(report.get("status") or ""), reason=str(report.get("reason") or ""),
        baseline=str(report.get("baseline") or ""), command=command,
        command_source=str(report.get("command_source") or ""),
        grading_test=bool(command and grading and " ".join(command.split()) == " ".join(grading.split())),
        candidates=len(candidates), passed_candidates=sum(1 for c in candidates if c.get("outcome") == "passed"),
        broke_candidates=sum(1 for c in candidates if c.get("outcome") == "passed" and c.get("broke")),
        reproduction=str(report.get("reproduction") or ""),
        written_tests=len(report.get("written_tests") or ()) or int(bool(report.get("reproduction"))),
        reproduction_note=str(report.get("reproduction_note") or ""), stopped=str(report.get("stopped") or ""),
        with_edit=sum(1 for c in candidates if c.get("outcome") != "no_edit"),
        chosen=report.get("chosen"), rounds=int(report.get("rounds") or 0),
        prefill_tokens=int(report.get("prefill_tokens") or 0),
        candidate_prompt_tokens=tuple(int(c.get("recomputed_tokens") or 0) for c in candidates),
        decode_s=float(report.get("decode_s") or 0.0), apply_s=float(report.get("apply_s") or 0.0),
        check_s=float(report.get("check_s") or 0.0), wall_s=float(report.get("wall_s") or 0.0),
        outcomes=tuple(str(c.get("outcome")) for c in candidates),
        failing=tuple(c.get("failing") if isinstance(c.get("failing"), int) else None for c in candidates),
        on=tuple(int(c.get("on") or 0) for c in candidates),
        diffs=tuple(str(c.get("diff") or "") for c in candidates),
        answers=tuple(str(c.get("answer") or "") for c in candidates),
        arms=tuple(str(c.get("arm") or "") for c in candidates),
        places=(places := tuple(str(p) for p in report.get("places") or ())), bug_place=bug_place(task, places),
        found=(found := tuple(str(p) for p in report.get("found") or ())), bug_found=bug_place(task, found))


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cx-eval-trees-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _failed(task: Task, mode: str, exc: Exception) -> TaskResult:
    return TaskResult(id=task.id, repo=task.repo, kind=task.kind, mode=mode, must_files=task.must_cite_files,
                      files_in_prompt=(), recall=0.0, chunks=0, prompt_tokens=0, cached_tokens=0, segment_tokens={},
                      error=f"{type(exc).__name__}: {exc}")


def _load_partial(path: Path | None) -> dict[tuple[str, str], TaskResult]:
    """Results a previous, interrupted run already wrote (one JSON line each), by (task id, mode)."""
    if path is None or not path.is_file():
        return {}
    decoder = msgspec.json.Decoder(TaskResult)
    done: dict[tuple[str, str], TaskResult] = {}
    for line in path.read_bytes().splitlines():
        try:
            result = decoder.decode(line)
        except msgspec.DecodeError:
            continue  # a torn last line
        if result.error is None:
            done[(result.id, result.mode)] = result
    return done


def run_eval(config: Config, paths: Sequence[Path], *, model: str, modes: Sequence[str] = MODES,
             retrieval_only: bool = False, only: Callable[[Task], bool] | None = None, max_new_tokens: int = 512,
             cache_dir: Path | None = None, progress: Progress | None = None,
             partial: Path | None = None, think_s: float = 10.0) -> EvalReport:
    """Every selected task of ``paths`` in every mode, task by task (each task in every mode before the next);
    the report. With ``partial`` each result is also appended there as it comes, and results already there
    (from an interrupted run of the same set) are kept instead of run again."""
    say = progress or (lambda _line: None)
    task_set, repos = prepare(paths, cache_dir)
    tasks = [t for t in task_set.tasks if only is None or only(t)]
    done = _load_partial(partial)
    results: dict[tuple[str, str], TaskResult] = {}
    nodes: dict[str, EvalNode] = {}
    try:
        with _scratch() as scratch:
            for index, task in enumerate(tasks, 1):
                for mode in modes:
                    key = (task.id, mode)
                    if key in done:
                        results[key] = done[key]
                        continue
                    node = nodes.get(mode) or nodes.setdefault(
                        mode, EvalNode(config, model, mode, max_new_tokens=max_new_tokens))
                    try:
                        tree = checkout(task, repos[task.repo], scratch / f"{mode}-{index:03d}-{task.id}")
                        result = _run_task(node, mode, task, tree, retrieval_only=retrieval_only, think_s=think_s)
                    except Exception as exc:  # one broken task must not sink the report
                        log.exception("eval task %s failed", task.id)
                        result = _failed(task, mode, exc)
                    results[key] = result
                    if partial is not None:
                        with partial.open("ab") as fh:
                            fh.write(msgspec.json.encode(result) + b"\n")
                    say(f"[{index}/{len(tasks)} {mode}] {task.id}: recall {result.recall:.2f}"
                        + ("" if result.passed is None else f", {'pass' if result.passed else 'fail'}")
                        + (f", error {result.error}" if result.error else ""))
    finally:
        for node in nodes.values():
            node.close()
    ordered = [results[(t.id, m)] for m in modes for t in tasks if (t.id, m) in results]
    return EvalReport(
        model=model, date=date.today().isoformat(), retrieval_only=retrieval_only,
        task_files=tuple(str(p) for p in paths),
        machine=host_facts(),
        summaries=tuple(summarize(mode, [r for r in ordered if r.mode == mode]) for mode in modes),
        results=tuple(ordered))
