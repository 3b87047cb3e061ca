"""The node's contract: what a protocol adapter hands the node, what comes back, and the port it calls.

Adapters (``contenox.lsp``, ``contenox.acp``, ``contenox.rpc``) hold a :class:`NodePort`; the node core
(:class:`contenox.node.Node`) implements it and test fakes implement it with the same types. Results stay
typed (the planner's :class:`~contenox.planner.Explain`, the workspace's ``SymbolInfo`` / ``RelatedHit``)
until an adapter puts them on its wire.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

from contenox.answer.edits import ProposedEdits
from contenox.config import Config
from contenox.planner.explain import Explain
from contenox.verify import Verification

if TYPE_CHECKING:
    from contenox.workspace import RelatedHit, SymbolInfo

__all__ = [
    "AnticipationState",
    "AnticipationStatus",
    "CommandHost",
    "CommandResult",
    "CompletionInfo",
    "CompletionOutcome",
    "CompletionRequest",
    "ConsentAsker",
    "EventCallback",
    "Exchange",
    "ModelChoice",
    "NodePort",
    "ThreadInfo",
    "ToolActivity",
    "TurnEvent",
    "TurnOutcome",
    "TurnRequest",
    "TurnState",
]

TurnState = Literal["queued", "indexing", "prefill", "decode", "idle"]
"""``queued`` while the turn waits for its workspace or an engine slot; ``idle`` once it ended."""


class TurnRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One turn for the workspace at ``root`` (any directory inside it; the node resolves the root)."""

    root: str
    prompt: str
    client_id: str = "anonymous"
    selection: str | None = None
    """Selected text (or a file excerpt) the user asked about; goes into the user segment."""
    pins: tuple[str, ...] = ()
    """Extra files pinned for this turn only (paths relative to the root or absolute inside it)."""
    terminal: str = ""
    max_new_tokens: int | None = None
    """None: the config's ``engine.max_new_tokens``."""
    thread: str = "main"
    """Conversation thread inside the workspace (an ACP session, a chat panel); threads share the
    workspace's stable prefix and each keeps its own history."""
    open_file: str | None = None
    """The editor's active file (absolute, or relative to the root), which seeds retrieval's graph neighbours."""
    selection_lines: tuple[int, int] | None = None
    """1-based inclusive lines of ``selection`` in ``open_file``."""
    plan_only: bool = False
    """Plan the turn (index, retrieve, assemble) and report its explain without running the model;
    nothing is recorded (``contenox eval --retrieval-only``)."""
    notes: tuple[str, ...] = ()
    """What the client left out of the request and why (an unsupported attachment), for explain-context."""
    verify: bool | None = None
    """Running the check command of a change: True, the user consented for this request (``ask --verify``, the
    eval); False, never (``--no-verify``, piped without ``--verify``); None, as the workspace's remembered
    consent says, else asked through the client (``ConsentAsker``)."""
    env: dict[str, str] | None = None
    """The client's environment for commands the turn runs (its PATH, virtualenv, PYTHONPATH); None: the node's."""
    asked: str = ""
    """The question's id in the workspace's open-questions log when the client recorded it before sending the
    turn (``NodePort.ask``: ACP reads the client's buffers first); the turn ends it. Empty: the turn records it."""


class ToolActivity(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call of an agent turn as the user sees it: started (``in_progress``), then ``completed`` or
    ``failed`` under the same id."""

    id: str
    name: str
    kind: Literal["read", "search", "edit", "execute", "other"]
    title: str
    status: Literal["in_progress", "completed", "failed"]
    locations: tuple[tuple[str, int | None], ...] = ()
    """(absolute path, 1-based line or None) the call touched."""
    output: str = ""
    """What the tool returned (as the model got it; cut for long results)."""
    edit_index: int | None = None
    """A proposed edit: its index in the outcome's ``edits`` (the client offers it for review after the turn)."""


class CommandResult(msgspec.Struct, frozen=True, kw_only=True):
    """What became of a ``run_command`` call: run (its exit code and output), or not and why."""

    ran: bool
    exit_code: int | None = None
    output: str = ""
    reason: str = ""
    """Why it did not run (no terminal in this client, the user declined, it timed out)."""


class CommandHost(Protocol):
    """Runs an agent turn's commands where the user can see them: the client's terminal, after permission.
    An adapter that has one passes it with the turn; without one, ``run_command`` is a tool error."""

    async def run_command(self, call_id: str, command: str, cwd: str) -> CommandResult: ...


@runtime_checkable
class ConsentAsker(Protocol):
    """A client that can ask its user whether a check command may run (a dialog, a ``[y/N]`` question, ACP
    ``session/request_permission``): True, False, or None when nobody can be asked. ``scope``: what else the
    answer covers, in words, said with the question ('' for nothing more)."""

    async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None: ...


class TurnEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A streamed event: a state change (``kind="state"``), how far the prefill has got (``kind="progress"``,
    after each engine step, state ``prefill``), answer text (``kind="chunk"``) or an agent turn's tool call
    started or ended (``kind="tool"``)."""

    kind: Literal["state", "progress", "chunk", "tool"]
    text: str = ""
    """The answer's text (``chunk``), or what the state is doing in words (``state``: the prefill's size;
    ``progress``: tokens done of total and the cache share)."""
    state: TurnState | None = None
    done: int = 0
    """``progress``: prompt tokens in the KV cache so far (the cached prefix included)."""
    total: int = 0
    """``progress``: the prompt's tokens."""
    tool: ToolActivity | None = None
    """``tool``: a tool call of an agent turn, started or ended."""


class TurnOutcome(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    finish_reason: str
    """"stop" | "length" | "repetition" (stopped in a loop; the repeats dropped) | "planned" (``plan_only``);
    a cancelled turn raises
    :class:`contenox.errors.Cancelled` instead."""
    explain: Explain
    files_in_prompt: tuple[str, ...] = ()
    """Workspace files whose code (not only a repo-map line) the prompt held: retrieved chunks and pins."""
    output_tokens: int = 0
    """Tokens the model generated."""
    edits: ProposedEdits = ProposedEdits()
    """The answer's edit blocks resolved against the workspace: per-file diffs, and the blocks that did not
    resolve. Nothing is written: the client shows them and applies what the developer accepts."""
    tool_steps: int = 0
    """Tool steps the turn took before its answer (an agent turn; 0 otherwise)."""
    verification: Verification | None = None
    """A change turn's check: candidates tried, the command, which one is offered (None: not a change turn)."""


class Exchange(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded turn of a thread, as the planner's journal holds it (``session/load`` replays these)."""

    turn: int
    user: str
    answer: str
    explain: Explain | None = None
    """The turn's explain-context as recorded (a panel restored after a reload shows its summary again)."""
    finish_reason: str = ""
    """How the answer ended as recorded (``length``, ``repetition``, ...; empty when not known)."""
    unanswered: str = ""
    """A question without an answer (``turn`` 0, ``answer`` empty): why (stopped, the error, or cut off by the
    node going away); empty for an answered turn."""


class ThreadInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation thread of a workspace, as ``contenox threads`` lists it."""

    thread: str
    turns: int
    title: str
    """The first question, shortened."""
    last_used: float


class ModelChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The model the node serves and the installed ones it could switch to (the model pickers)."""

    current: str
    installed: tuple[str, ...]


class CompletionRequest(msgspec.Struct, frozen=True, kw_only=True):
    """An inline completion at ``line``/``character`` (0-based) of ``path`` whose current text is ``text``."""

    root: str
    path: str
    """Absolute, or relative to the root."""
    text: str
    line: int
    character: int
    client_id: str = "anonymous"
    repo_context: bool = True
    """False: the current file's window only (the benchmark's "without context" arm)."""
    use_cache: bool = True
    """False: always ask the model (the benchmark's cold and quality arms)."""
    time_budget_ms: int | None = None
    """None: ``completion.time_budget_ms``; 0: none (the benchmark's whole-block quality arm)."""


class CompletionOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What to show at the cursor (``text`` may be empty) and how it was made."""

    text: str
    ended: str
    """"line" | "block" | "suffix" | "lines" (where the completion was cut), "time" (the time budget ran out: it
    ends with the line then being generated), "stop" | "length" (the model
    ended), "cached" (from the recent-results cache), "superseded" (a newer request from the same client
    and file cancelled it), "unavailable" (see ``reason``)."""
    reason: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the prefix cache served (block model, at the start)."""
    context_tokens: int = 0
    window_tokens: int = 0
    context_files: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    """Context chunks wanted but not given (over ``completion.context_tokens``), named."""
    cut_lines: tuple[int, int] = (0, 0)
    """Lines of the file before the prefix window and after the suffix window (over their budgets)."""
    ttft_ms: float = 0.0
    total_ms: float = 0.0
    generated_tokens: int = 0


class CompletionInfo(msgspec.Struct, frozen=True, kw_only=True):
    available: bool
    reason: str | None
    model: str


AnticipationState = Literal["planned", "computing", "warm", "idle", "off"]


class AnticipationStatus(msgspec.Struct, frozen=True, kw_only=True):
    """What the editors show (``$/contenox/anticipation``): is the workspace warm for the place."""

    root: str
    path: str
    state: AnticipationState
    tokens: int = 0
    """Retrieved-code tokens prefilled ahead of the question."""
    text: str = ""


EventCallback = Callable[[TurnEvent], Awaitable[None]]
"""``on_event``: a coroutine function; it must not block."""


class NodePort(Protocol):
    """The node core as every adapter sees it; all methods are coroutines."""

    @property
    def config(self) -> Config: ...

    async def turn(self, request: TurnRequest, on_event: EventCallback | None = None,
                   commands: CommandHost | None = None) -> TurnOutcome: ...

    async def explain(self, root: str) -> Explain | None: ...

    async def history(self, root: str, thread: str) -> list[Exchange]: ...

    async def ask(self, root: str, thread: str, prompt: str) -> str: ...

    async def end_question(self, root: str, asked: str, why: str) -> None: ...

    async def threads(self, root: str) -> list[ThreadInfo]: ...

    async def pin(self, root: str, path: str) -> tuple[str, ...]: ...

    async def unpin(self, root: str, path: str) -> tuple[str, ...]: ...

    async def pins(self, root: str) -> tuple[str, tuple[str, ...]]: ...

    async def models(self) -> ModelChoice: ...

    async def use_model(self, name: str) -> ModelChoice: ...

    async def related(self, root: str, text: str) -> list[RelatedHit]: ...

    async def symbol_info(self, root: str, name: str) -> SymbolInfo | None: ...

    async def resolve_edit(self, root: str, text: str, question: str = "") -> ProposedEdits: ...

    async def workspace_overlay(self, root: str, path: str, text: str | None, owner: str = "editor") -> None: ...

    async def release_overlays(self, owner: str) -> None: ...

    async def status(self) -> dict[str, Any]: ...

    async def complete(self, request: CompletionRequest) -> CompletionOutcome: ...

    async def completion_info(self) -> CompletionInfo: ...

    async def focus(self, root: str, path: str, line: int, *, visible: tuple[int, int] | None = None,
                    thread: str = "", draft: str = "", terminal: str = "", saved: bool = False,
                    client_id: str = "") -> bool: ...

    def watch_anticipation(self, listener: Callable[[str, AnticipationStatus], None]) -> Callable[[], None]: ...
