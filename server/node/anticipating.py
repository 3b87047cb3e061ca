"""Anticipated context: the code at the user's place, prefilled while the user reads it.

The editors report where the user is (``Node.focus``: the active file and cursor line, the chat thread, the
question being typed and the last failing command's output, if any). When a workspace's place settles and the
engine is idle, the :class:`Anticipator` plans the turn a question about that place would get (the same
retrieval, seeded by the place, the diff, the draft and the failing run; no question) and prefills it up to the
end of its retrieved segment (the diff and the failing run come before it) as one BACKGROUND request: a turn or an
inline completion pauses it at the next chunk, and what it computed stays cached. The question's turn takes the
anticipation (``take``) and lays its retrieved code out with the anticipated chunks first
(:func:`contenox.planner.anticipate.layout_retrieved`), so only what the question adds is new. Only the chunks the
cache holds when the question comes count (:meth:`Anticipation.computed`): an anticipation cut short never makes the
question prefill code it did not choose. A new place on the same prefix (the cursor moved, the user began typing)
keeps first the previous anticipation's computed code it also wants (:func:`contenox.planner.anticipate.carried_over`).

Budgeted (``[anticipate] tokens``), off with ``[anticipate] enabled = false`` and while on battery
(``[anticipate] on_battery``); a completion within ``quiet_ms`` (the user is typing) postpones it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.errors import ContenoxError
from contenox.node.contract import AnticipationState, AnticipationStatus

if TYPE_CHECKING:
    from contenox.config import AnticipateConfig, PlannerConfig
    from contenox.node.workspaces import WorkspaceState
    from contenox.planner import Chunk, TurnPlan
    from contenox.runtime_ov import EngineLike, RequestHandle

__all__ = ["TERMINAL_CHARS", "Anticipation", "Anticipator", "Focus", "anticipated_tokens", "on_battery", "pieces",
           "reported_run"]

log = logging.getLogger(__name__)

_SAME_PLACE_LINES = 5
"""A cursor that moved at most this many lines is still at the same place (no new anticipation)."""
_IDLE_WAIT_S = 120.0
"""How long an anticipation waits for the engine to be idle before it gives up."""
TERMINAL_CHARS = 12_000
"""The most of a reported failing run a focus keeps: its ``$ command`` line and the end of its output."""


def anticipated_tokens(config: AnticipateConfig, planner: PlannerConfig, draft: str) -> int:
    """The retrieved code an anticipation may prefill: ``[anticipate] tokens`` for a place; for a question being
    typed (a draft), ``draft_tokens``, or the question's own budget: it is about to be asked, and what of its code
    the anticipation did not hold it waits for (12 held-out questions typed: with the place's 2,048 tokens, the
    question still added a median 194 tokens of its own code; with its own budget, 18)."""
    if not draft.strip():
        return config.tokens
    return config.draft_tokens or planner.retrieval_tokens


def reported_run(text: str, limit: int = TERMINAL_CHARS) -> str:
    """A failing run as an editor reported it, kept to ``limit`` characters: the first line (``$ command``) and
    the end of the output, the cut named in one line."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    first, _, rest = text.partition("\n")
    if len(first) >= limit // 2:  # no command line worth keeping whole: the end of it all
        first, rest = "$ (command line cut)", text
    kept = rest[len(rest) - max(0, limit - len(first)):]
    if "\n" in kept:  # the cut falls between lines
        kept = kept.partition("\n")[2]
    return f"{first}\n[... {len(rest) - len(kept):,} characters of output cut ...]\n{kept}"


class Focus(msgspec.Struct, frozen=True, kw_only=True):
    """Where the user is in a workspace, as an editor reported it."""

    path: str
    """Workspace-relative POSIX path of the active file."""
    line: int
    """1-based cursor line."""
    visible: tuple[int, int] | None = None
    """1-based inclusive visible line range."""
    thread: str = ""
    """The chat thread a question would go to ('' : the workspace's last one)."""
    draft: str = ""
    """The question being typed in the chat box, if any."""
    terminal: str = ""
    """The last failing command's output the editor saw (``$ command`` first, as a turn's terminal), if any."""
    terminal_at: float = 0.0
    """monotonic time the editor first reported this terminal output."""
    client_id: str = ""
    saved: bool = False
    """Reported on a save: the diff changed, anticipate again even at the same place."""
    at: float = 0.0

    def place(self) -> str:
        return (f"{self.path}:{self.line}" + (", draft" if self.draft.strip() else "")
                + (", failing run" if self.terminal.strip() else ""))

    def same_place(self, other: Focus | None) -> bool:
        return (other is not None and not self.saved and other.path == self.path and other.thread == self.thread
                and other.draft.strip() == self.draft.strip() and other.terminal == self.terminal
                and abs(other.line - self.line) <= _SAME_PLACE_LINES)

    def failing_run(self, thread: str, now: float, ttl_s: float) -> str:
        """The editor's last failing run, for a question of ``thread`` asked at ``now`` that brings none of its
        own: '' when there is none, it is older than ``ttl_s``, or the place is another thread's."""
        if not self.terminal.strip() or self.thread not in ("", thread) or now - self.terminal_at > ttl_s:
            return ""
        return self.terminal


class Anticipation:
    """One anticipation of a workspace: what was planned at a place, and how far its prefill got."""

    def __init__(self, focus: Focus, thread: str, chunks: list[Chunk], tokens: int, prefix: int,
                 prefix_ids: Sequence[int] = (), ends: Sequence[tuple[str, int]] = (),
                 held: Iterable[str] = (), carried: int = 0) -> None:
        self.focus = focus
        self.thread = thread
        self.chunks = chunks
        """The retrieved chunks of the anticipated turn, best first (as the planner laid them out)."""
        self.tokens = tokens
        """Tokens of its retrieved segment (the code this anticipation prefills)."""
        self.prefix = prefix
        """Tokens of the whole prefill (stable segments, history, retrieved code)."""
        self.prefix_ids = list(prefix_ids)
        """The ids it prefills (``prefix`` of them)."""
        self._ends = dict(ends)
        """Where each chunk it laid out ends in ``prefix_ids`` (the plan's ``chunk_ends``)."""
        self._held = frozenset(held)
        """Chunks the thread already held (referenced, not laid out again)."""
        self.carried = carried
        """Of ``chunks``, how many lead it because the previous anticipation had computed them
        (:func:`~contenox.planner.anticipate.carried_over`)."""
        self.state: AnticipationState = "planned"
        self.planned_at = time.monotonic()
        self.handle: RequestHandle | None = None
        self.prefill_s: float | None = None

    def computed(self, cached: int, block: int = 1) -> int:
        """How many of ``chunks``, from the first, a prefix cache holding the first ``cached`` of ``prefix_ids``
        holds: each laid-out chunk up to its end, the thread's own in between. A chunk budget fitting left out
        was never prefilled: it ends the count. ``block``: the cache's block size; it holds whole blocks only, so
        a chunk whose end falls in the block after ``cached`` counts (a turn recomputes at most that block)."""
        for index, chunk in enumerate(self.chunks):
            end = self._ends.get(chunk.id)
            if chunk.id not in self._held and (end is None or end >= cached + max(1, block)):
                return index
        return len(self.chunks)

    def code_start(self) -> int:
        """Where its retrieved segment begins in ``prefix_ids``."""
        return self.prefix - self.tokens

    def status(self, root: Path) -> AnticipationStatus:
        name = Path(self.focus.path).name
        text = {"planned": f"anticipating {name}",
                "computing": f"prefilling {self.tokens:,} tokens of code for {name}",
                "warm": f"warm for {name}: {self.tokens:,} tokens of code prefilled"}.get(self.state, "")
        return AnticipationStatus(root=str(root), path=self.focus.path, state=self.state, tokens=self.tokens,
                                  text=text)


PlanAt = Callable[["WorkspaceState", Focus, "Anticipation | None"],
                  Awaitable["tuple[TurnPlan, list[Chunk], int] | None"]]
"""Plans the anticipation at a place, given the one it replaces: (the plan, its chunks, how many of them lead it
carried over from the one it replaces)."""
Notify = Callable[[str, AnticipationStatus], None]


def on_battery(root: Path = Path("/sys/class/power_supply")) -> bool:
    """Whether the machine runs on battery, where the OS says so (Linux sysfs): a battery present and no
    mains supply online. Unknown (no sysfs, a desktop): False."""
    try:
        supplies = list(root.iterdir())
    except OSError:
        return False
    battery = mains = False
    for supply in supplies:
        try:
            kind = (supply / "type").read_text().strip()
        except OSError:
            continue
        if kind == "Battery":
            battery = True
        elif kind == "Mains":
            try:
                mains = mains or (supply / "online").read_text().strip() == "1"
            except OSError:
                continue
    return battery and not mains


def pieces(cached: int, total: int, piece: int, block: int) -> list[int]:
    """Where each request of a background prefill ends: ``piece`` new tokens at a time (a multiple of the cache
    block) from what the cache holds to ``total``. An inline completion waits at most one piece's step, not one
    of the engine's larger prefill chunks; 0: one request for all of it."""
    start = min(cached, total) // block * block
    if piece <= 0 or total - start <= piece:
        return [total] if total > start else []
    size = max(block, piece // block * block)
    return [*range(start + size, total, size), total]


class Anticipator:
    """Schedules and runs the anticipations of the node's workspaces (one at a time per workspace)."""

    def __init__(self, config: AnticipateConfig, engine: Callable[[], EngineLike | None], plan_at: PlanAt,
                 busy: Callable[[WorkspaceState], bool], notify: Notify,
                 battery: Callable[[], bool] = on_battery) -> None:
        self.config = config
        self._engine = engine
        """The loaded engine, or None (anticipation never loads a model)."""
        self._plan_at = plan_at
        self._busy = busy
        """Whether turns run or wait (in the node, or on this workspace)."""
        self._notify = notify
        self._battery = battery
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._current: dict[str, Anticipation] = {}
        self._focus: dict[str, Focus] = {}
        self._roots: dict[str, Path] = {}
        self.last_completion = 0.0
        """monotonic time of the last inline completion request (the user is typing)."""
        self.prefilled_tokens = 0
        """Prompt tokens anticipations computed since the node started (whole pieces; status)."""
        self.prefilled_code_tokens = 0
        """Of which: tokens of retrieved code (the rest: stable segments and history not cached yet)."""
        self.runs = 0

    def focus_of(self, state: WorkspaceState) -> Focus | None:
        return self._focus.get(state.key)

    def signal(self, state: WorkspaceState, focus: Focus) -> bool:
        """A new place; returns whether an anticipation was scheduled for it."""
        if not self.config.enabled:
            return False
        self._roots[state.key] = state.root
        previous = self._focus.get(state.key)
        if previous is not None and previous.terminal == focus.terminal:  # the same run: reported when first seen
            focus = msgspec.structs.replace(focus, terminal_at=previous.terminal_at)
        current = self._current.get(state.key)
        if (previous is not None and focus.same_place(previous) and current is not None
                and current.state in ("planned", "computing", "warm")):
            # the place the code was anticipated for stays the place (a question seeds its retrieval from it)
            self._focus[state.key] = msgspec.structs.replace(previous, at=focus.at)
            return False
        self._focus[state.key] = focus
        self._schedule(state, focus)
        return True

    def again(self, state: WorkspaceState) -> None:
        """The thread grew (a turn was recorded): anticipate again at the same place, after the new prefix."""
        focus = self._focus.get(state.key)
        if focus is not None and self.config.enabled:
            self._schedule(state, msgspec.structs.replace(focus, saved=False, draft=""))

    def take(self, state: WorkspaceState, thread: str, *, keep: bool = False) -> Anticipation | None:
        """The anticipation a turn of ``thread`` lays its retrieved code out by (None: none fits). Its prefill is
        stopped if still running (what it computed stays cached; the turn computes the rest). ``keep``: only
        look (a turn that is planned, not run)."""
        if keep:
            current = self._current.get(state.key)
            return current if current is not None and current.thread == thread else None
        task = self._tasks.pop(state.key, None)
        if task is not None and not task.done():
            task.cancel()
        current = self._current.pop(state.key, None)
        if current is None or current.thread != thread or current.state not in ("planned", "computing", "warm"):
            return None
        if current.handle is not None and not current.handle.done:
            current.handle.cancel()
        return current

    def status(self) -> dict[str, Any]:
        return {"enabled": self.config.enabled, "runs": self.runs, "prefilled_tokens": self.prefilled_tokens,
                "prefilled_code_tokens": self.prefilled_code_tokens,
                "workspaces": {
                    **{key: {"root": str(self._roots.get(key, "")), "place": self._focus[key].place(),
                             "state": "scheduled", "tokens": 0}
                       for key in self._tasks if key not in self._current and key in self._focus},
                    **{key: {"root": str(self._roots.get(key, "")), "place": a.focus.place(), "state": a.state,
                             "tokens": a.tokens} for key, a in self._current.items()}}}

    def _schedule(self, state: WorkspaceState, focus: Focus) -> None:
        old = self._tasks.pop(state.key, None)
        if old is not None and not old.done():
            old.cancel()
        current = self._current.pop(state.key, None)
        if current is not None and current.handle is not None and not current.handle.done:
            current.handle.cancel()  # superseded: the place moved
        task = asyncio.get_running_loop().create_task(self._run(state, focus, current), name="node-anticipate")
        self._tasks[state.key] = task
        task.add_done_callback(functools.partial(self._forget, state.key))

    def _forget(self, key: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]

    async def _quiet(self) -> None:
        """Wait while inline completions come (the user is typing), at most the idle wait."""
        quiet = self.config.quiet_ms / 1000.0
        deadline = time.monotonic() + _IDLE_WAIT_S
        while time.monotonic() - self.last_completion < quiet and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    async def _idle(self, state: WorkspaceState) -> EngineLike | None:
        """Wait until the engine is loaded and idle and the user stopped typing; None when it never was."""
        quiet = self.config.quiet_ms / 1000.0
        deadline = time.monotonic() + _IDLE_WAIT_S
        while time.monotonic() < deadline:
            engine = self._engine()
            typing = time.monotonic() - self.last_completion < quiet
            if engine is not None and not typing and not self._busy(state):
                stats = engine.stats()
                if not stats.running and not stats.queue_depth:
                    return engine
            await asyncio.sleep(0.25)
        return None

    async def _run(self, state: WorkspaceState, focus: Focus, previous: Anticipation | None) -> None:
        await asyncio.sleep(self.config.delay_ms / 1000.0)
        if self.config.on_battery is False and await asyncio.to_thread(self._battery):
            self._notify(focus.client_id, AnticipationStatus(root=str(state.root), path=focus.path, state="off",
                                                             text="anticipation paused: on battery"))
            return
        engine = await self._idle(state)
        if engine is None:
            return
        try:
            planned = await self._plan_at(state, focus, previous)
        except ContenoxError as exc:  # a workspace problem: the question's turn will say it
            log.info("anticipation at %s not planned: %s", focus.place(), exc.message)
            return
        except Exception:  # background work: never the node's failure, always in the log
            log.exception("anticipation at %s not planned", focus.place())
            return
        if planned is None:
            return
        plan, chunks, carried = planned
        seg = plan.manifest.segment("retrieved")  # (the diff and a failing run come before it)
        prefix = plan.token_ids[: seg.token_end]
        anticipation = Anticipation(focus, plan.manifest.thread, chunks, seg.tokens, seg.token_end, prefix_ids=prefix,
                                    ends=plan.chunk_ends,
                                    held=(c.id for c in plan.manifest.chunks if c.status == "in thread"),
                                    carried=carried)
        self._current[state.key] = anticipation
        block = max(1, engine.blocks.block_size)
        if seg.tokens == 0 or engine.predict_cached(prefix) >= (len(prefix) // block) * block:
            # nothing new to retrieve here (the thread holds it all), or all of it is cached already
            anticipation.state = "warm"
            self._notify(focus.client_id, anticipation.status(state.root))
            return
        from contenox.runtime_ov import GenerateRequest, Priority

        anticipation.state = "computing"
        self._notify(focus.client_id, anticipation.status(state.root))
        started = time.perf_counter()
        try:
            done = engine.predict_cached(prefix) // block * block
            for end in pieces(done, len(prefix), self.config.piece_tokens, block):
                await self._quiet()  # the user is typing: completions first, the rest of the prefill after
                handle = engine.submit(GenerateRequest(session_id=state.session_id, token_ids=prefix[:end],
                                                       max_new_tokens=1, priority=Priority.BACKGROUND))
                anticipation.handle = handle
                final = await handle.result()
                if final.finish_reason == "cancelled":
                    break
                self.prefilled_tokens += end - done  # (a piece cut short by a turn is not counted)
                self.prefilled_code_tokens += max(0, min(end, seg.token_end) - max(done, seg.token_start))
                done = end
        except ContenoxError as exc:
            log.warning("anticipation at %s failed: %s", focus.place(), exc.message)
            anticipation.state = "idle"
            self._notify(focus.client_id, anticipation.status(state.root))
            return
        except asyncio.CancelledError:
            if anticipation.handle is not None:
                anticipation.handle.cancel()
            raise
        if final.finish_reason == "cancelled":
            return  # taken by a turn, or superseded: whoever stopped it reports
        anticipation.prefill_s = time.perf_counter() - started
        anticipation.state = "warm"
        self.runs += 1
        log.info("anticipated %s: %d tokens of code (%d in all) prefilled in %.1f s%s", focus.place(), seg.tokens,
                 len(prefix), anticipation.prefill_s,
                 f"; {carried} chunk(s) computed for {previous.focus.place()} kept first" if carried and previous else "")
        self._notify(focus.client_id, anticipation.status(state.root))

    async def close(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        for anticipation in self._current.values():
            if anticipation.handle is not None and not anticipation.handle.done:
                anticipation.handle.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
