"""One turn in two planner calls: :func:`prepare` before the model runs, :func:`finish` after it.

A caller (the node, the replay bench) runs a turn as: index the workspace -> ``prepare`` -> warm the cache ->
generate -> ``finish`` -> persist. ``prepare`` does all the planner's work up to the prompt's ids (the files
mentioned with the question checked, the inputs gathered, the anticipated code laid first, the plan);
``finish`` all of it after the answer (its citations checked, the turn recorded in the journal with its
notes, the prefix a restarted node re-warms and the one the next turn starts with when it rebases the
thread). Nothing in between calls the planner, so a turn crosses caller -> planner once each way.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from contenox.answer.citations import check_citations
from contenox.answer.locations import without_node_sentences
from contenox.planner.anticipate import layout_retrieved
from contenox.planner.explain import Explain
from contenox.planner.inputs import Chunk, build_inputs, change_reasons
from contenox.planner.journal import ToolStep
from contenox.planner.planner import MetricsLike, Planner, PredictCached, TurnPlan
from contenox.planner.segments import chunk_part

if TYPE_CHECKING:
    from contenox.config import PlannerConfig
    from contenox.planner.map_base import MapBase
    from contenox.workspace import ChangeEvent, Workspace

__all__ = ["Anticipated", "Question", "TurnEnd", "finish", "prepare", "unpinnable"]

REPETITION_NOTE = "answer stopped: it began repeating itself; the repeats were dropped"


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """What a turn asks, as the planner needs it (the node builds it from a request and the editor's place)."""

    prompt: str
    thread: str = "main"
    selection: str | None = None
    """Selected code or attached context the question is about."""
    terminal: str = ""
    """Terminal or test output that goes with the question."""
    open_file: str | None = None
    """The file in view (workspace-relative): it seeds retrieval."""
    selection_lines: tuple[int, int] | None = None
    mentions: tuple[str, ...] = ()
    """Workspace-relative paths mentioned for this turn only (turn material, not pins): checked here; one that
    cannot go in is a note, never a failed turn."""
    notes: tuple[str, ...] = ()
    """Facts about how the question was gathered, for explain-context."""
    text_only: bool = False
    """A tool-enabled turn the tool check answered in text (the ``text_only`` line follows the question)."""
    text_only_why: str = ""


class Anticipated(msgspec.Struct, frozen=True, kw_only=True):
    """Code computed at the user's place before the question came (see :func:`layout_retrieved`)."""

    chunks: tuple[Chunk, ...]
    place: str
    state: str
    age_s: float
    new_tokens: int = 0
    """Tokens of code the question may add beyond the anticipated (0: no cap)."""
    pointed: Callable[[Chunk], bool] | None = None
    """With ``new_tokens``: only the chunks the question points at are added."""
    computed: int | None = None
    """How many of ``chunks``, from the first, the prefix cache held when the question came (None: all)."""


class TurnEnd(msgspec.Struct, frozen=True, kw_only=True):
    explain: Explain
    resume_prefix: list[int]
    """The ids a restarted node re-warms for this thread (the stable segments and the history)."""
    rebased: list[int] | None
    """When the thread's next turn rebases it: the ids that turn starts with (warm them now); else None."""


def unpinnable(path: Path, max_bytes: int) -> str:
    """Why ``path`` cannot go into a prompt whole ('' when it can): it must be a regular UTF-8 text file within
    the cap. Never opens anything but a regular file (a FIFO would block)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISDIR(info.st_mode):
        return "a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a FIFO, socket or device)"
    if info.st_size > max_bytes:
        return f"{info.st_size} bytes, over the workspace.max_file_bytes cap of {max_bytes}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if b"\0" in data[:8192]:
        return "a binary file"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (invalid byte at offset {exc.start})"
    return ""


def _mentions(root: Path, mentions: Sequence[str], max_file_bytes: int) -> tuple[list[str], list[str]]:
    """The mentions that can go in (a folder as ``path/``), and a note for each that cannot."""
    usable: list[str] = []
    notes: list[str] = []
    for rel in mentions:
        if (root / rel).is_dir():
            usable.append(f"{rel.rstrip('/')}/" if rel not in ("", ".") else "./")
            continue
        why = unpinnable(root / rel, max_file_bytes)
        if why:
            notes.append(f"mentioned {rel}: {why}, left out")
        else:
            usable.append(rel)
    return usable, notes


def prepare(planner: Planner, workspace: Workspace, question: Question, *, root: Path, predict_cached: PredictCached,
            pins: Sequence[str] = (), changes: Sequence[ChangeEvent] = (), map_base: MapBase | None = None,
            anticipated: Anticipated | None = None,
            config: PlannerConfig | None = None, max_file_bytes: int = 1_000_000) -> TurnPlan:
    """The turn's plan (blocking: reads files and git state; run it off the event loop).

    ``predict_cached``: the engine's prediction of the prompt tokens its cache serves. ``config``: the planner
    settings this plan uses (default: the planner's; an anticipation plans with its own retrieval budget).
    ``pins``: the workspace's pin specs. ``changes``: what the workspace's index reported changed since the last
    turn (its refreshes' events), said in words by segment kind. Raises :class:`~contenox.errors.OverContext`
    when even the shrunk turn does not fit.
    """
    tokenizer = planner.tokenizer

    def count(text: str) -> int:
        return len(tokenizer.encode(text))

    usable, mention_notes = _mentions(root, question.mentions, max_file_bytes)
    inputs = build_inputs(config or planner.config, workspace, count, root=root, prompt=question.prompt,
                          selection=question.selection, pins=pins, terminal=question.terminal,
                          thread=question.thread, reasons=change_reasons(changes), open_file=question.open_file,
                          selection_lines=question.selection_lines, map_base=map_base, mentions=usable)
    notes = (*question.notes, *mention_notes)
    if notes:
        inputs = msgspec.structs.replace(inputs, notes=(*notes, *inputs.notes))
    if anticipated is not None:
        chunks, laid = layout_retrieved(inputs.retrieved, anticipated.chunks, place=anticipated.place,
                                        state=anticipated.state, age_s=anticipated.age_s,
                                        count=lambda chunk: count(chunk_part(chunk)),
                                        new_tokens=anticipated.new_tokens, pointed=anticipated.pointed,
                                        computed=anticipated.computed)
        inputs = msgspec.structs.replace(inputs, retrieved=chunks, anticipation=laid)
    if question.text_only:
        inputs = msgspec.structs.replace(inputs, text_only=True, text_only_why=question.text_only_why)
    return planner.plan(inputs, predict_cached=predict_cached)


def finish(planner: Planner, plan: TurnPlan, answer: str, metrics: MetricsLike | None,
           workspace: Workspace | None = None, *, steps: Sequence[ToolStep] = (), finish_reason: str = "",
           notes: Sequence[str] = ()) -> TurnEnd:
    """The turn after its answer (blocking): the answer's citations checked against ``workspace`` (none
    without one; the model's, not the node's locations sentence after them), the turn recorded with its tool steps and ``notes`` (what the turn's later steps found: the
    tool loop, the verification, the edits), and the prefixes to persist and warm."""
    citations = check_citations(without_node_sentences(answer), workspace) if workspace is not None else None
    extra = [*notes, *([REPETITION_NOTE] if finish_reason == "repetition" else [])]
    explain = planner.record(plan, metrics, answer_text=answer, citations=citations, steps=steps,
                             finish_reason=finish_reason, notes=extra)
    return TurnEnd(explain=explain, resume_prefix=plan.resume_prefix(), rebased=planner.next_prefix(plan))
