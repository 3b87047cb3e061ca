"""A small in-process stand-in for contenox.node.Node, built from the node contract's real types."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from contenox.answer.edits import ProposedEdits
from contenox.answer.renames import propagate_renames
from contenox.answer.resolve import propose_edits
from contenox.config import Config
from contenox.errors import Cancelled, ModelNotFound, OverContext
from contenox.node.contract import (
    AnticipationStatus,
    CommandHost,
    CommandResult,
    ConsentAsker,
    EventCallback,
    Exchange,
    ModelChoice,
    ThreadInfo,
    ToolActivity,
    TurnEvent,
    TurnOutcome,
    TurnRequest,
)
from contenox.planner import Citations, Explain, ExplainSegment, ExplainTotals
from contenox.verify import Verification, consent_scope
from contenox.workspace import RelatedHit, SymbolInfo, SymbolLocation, rename_identifier


class FakeNode:
    """Answers every turn with a fixed list of chunks; ``hold`` makes a turn wait until cancelled."""

    def __init__(self, state_dir: Path | None = None, chunks: tuple[str, ...] = ("Hello", " world")) -> None:
        self.config = Config(home=str(state_dir.parent)) if state_dir else Config(home="/nonexistent")
        self.chunks = chunks
        self.requests: list[TurnRequest] = []
        self.overlays: dict[str, str | None] = {}
        self.overlays_at_turns: list[dict[str, str | None]] = []
        """The overlays each turn saw (unsaved editor text laid over the disk)."""
        self.command: str | None = None
        """A command each turn runs through the adapter's command host (when it has one)."""
        self.check: str | None = None
        """A check command each turn asks consent for through the adapter's host (a verified fix)."""
        self.check_answers: list[bool | None] = []
        self.verification: Verification | None = None
        """What every change turn's verification reports (None: not a change turn)."""
        self.command_hosts: list[CommandHost | None] = []
        self.command_results: list[CommandResult] = []
        self.tools: list[ToolActivity] = []
        self.finish_reason = "stop"
        """How each turn's answer ends (recorded in its exchange too)."""
        """Tool activity each turn reports before its answer."""
        self.overlay_owners: dict[str, str] = {}
        self.released: list[str] = []
        """Owners whose overlays were released (their connection ended)."""
        self.pinned: dict[str, list[str]] = {}
        self.model = "smollm2-135m"
        self.explains: dict[str, Explain] = {}
        self.exchanges: dict[tuple[str, str], list[Exchange]] = {}
        self.cites: tuple[str, ...] = ()
        """Files every answer cites (as the node's citation check would report them real)."""
        self.edits = ProposedEdits()
        """The edits every answer proposes (as the node would resolve its edit blocks)."""
        self.resolved: list[tuple[str, str, str]] = []
        """The code blocks resolve_edit was asked about: (root, block as an answer, question)."""
        self.hold = False
        self.started = asyncio.Event()
        self.cancelled = 0
        self.focuses: list[dict[str, Any]] = []
        """Where the editors said the user is (``focus`` calls)."""
        self.listeners: list[Callable[[str, AnticipationStatus], None]] = []
        self.asked: dict[str, tuple[str, str, str]] = {}
        """Questions recorded before their turn (``ask``), by id: (root, thread, prompt); as the node's log,
        one that ends without an answer goes into its thread's history where it was asked."""

    @staticmethod
    def _explain(root: str, turn: int, prompt_tokens: int) -> Explain:
        cached = 0 if turn == 1 else prompt_tokens - 8
        return Explain(
            workspace=root, turn=turn, model="fake",
            segments=(ExplainSegment(kind="system", tokens=prompt_tokens - 8, cached=cached, new=0),
                      ExplainSegment(kind="user", tokens=8, cached=0, new=8, invalidated_by="new turn")),
            totals=ExplainTotals(tokens=prompt_tokens, cached=cached, new=prompt_tokens - cached,
                                 hit_pct=round(100.0 * cached / prompt_tokens, 1)),
            predicted_cached_tokens=cached, measured_recomputed_tokens=prompt_tokens - cached, ttft_ms=12.5,
            context_size=8192)

    async def turn(self, request: TurnRequest, on_event: EventCallback | None = None,
                   commands: CommandHost | None = None) -> TurnOutcome:
        if request.prompt == "too long":
            raise OverContext("prompt needs 9000 tokens; the profile allows 8192", over_by=808)
        self.requests.append(request)
        self.overlays_at_turns.append(dict(self.overlays))

        async def emit(event: TurnEvent) -> None:
            if on_event is not None:
                await on_event(event)

        await emit(TurnEvent(kind="state", state="prefill"))
        await emit(TurnEvent(kind="progress", state="prefill", text="60 of 100 new prompt tokens computed",
                             done=60, total=100))
        self.started.set()
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                if request.asked:  # as the node's turn ends the question it carries
                    await self.end_question(request.root, request.asked, "stopped before the answer was finished")
                raise Cancelled("turn cancelled during prefill") from None
        for tool in self.tools:  # an agent turn's tool calls, as the node reports them
            await emit(TurnEvent(kind="tool", tool=tool))
        self.command_hosts.append(commands)
        if self.check is not None and isinstance(commands, ConsentAsker):
            self.check_answers.append(await commands.allow_check(self.check, request.root, consent_scope(self.check)))
        if self.command is not None and commands is not None:  # an agent turn's run_command
            self.command_results.append(await commands.run_command("step1-0", self.command, request.root))
        await emit(TurnEvent(kind="state", state="decode"))
        for chunk in self.chunks:
            await emit(TurnEvent(kind="chunk", text=chunk))
            await asyncio.sleep(0)
        turn = sum(1 for r in self.requests if r.root == request.root)
        explain = self._explain(request.root, turn, 100)
        if self.cites:
            explain = msgspec.structs.replace(explain, citations=Citations(files_real=self.cites))
        self.explains[request.root] = explain
        text = "".join(self.chunks)
        self.asked.pop(request.asked, None)  # answered: the journal holds it
        thread = self.exchanges.setdefault((request.root, request.thread), [])
        thread.append(Exchange(turn=turn, user=request.prompt, answer=text, explain=explain,
                               finish_reason=self.finish_reason))
        return TurnOutcome(text=text, finish_reason=self.finish_reason, explain=explain, output_tokens=len(self.chunks),
                           edits=self.edits, verification=self.verification)

    async def explain(self, root: str) -> Explain | None:
        return self.explains.get(root)

    async def history(self, root: str, thread: str) -> list[Exchange]:
        return list(self.exchanges.get((root, thread), []))

    async def ask(self, root: str, thread: str, prompt: str) -> str:
        asked = f"q{len(self.asked) + 1}"
        self.asked[asked] = (root, thread, prompt)
        return asked

    async def end_question(self, root: str, asked: str, why: str) -> None:
        entry = self.asked.pop(asked, None)
        if entry is not None:
            self.exchanges.setdefault((entry[0], entry[1]), []).append(
                Exchange(turn=0, user=entry[2], answer="", unanswered=why))

    async def threads(self, root: str) -> list[ThreadInfo]:
        return [ThreadInfo(thread=thread, turns=len(turns), title=turns[0].user, last_used=0.0)
                for (r, thread), turns in self.exchanges.items() if r == root]

    async def pin(self, root: str, path: str) -> tuple[str, ...]:
        self.pinned.setdefault(root, []).append(path)
        return tuple(self.pinned[root])

    async def unpin(self, root: str, path: str) -> tuple[str, ...]:
        self.pinned.get(root, []).remove(path)
        return tuple(self.pinned.get(root, []))

    async def models(self) -> ModelChoice:
        return ModelChoice(current=self.model, installed=("alt", "smollm2-135m"))

    async def use_model(self, name: str) -> ModelChoice:
        if name not in ("alt", "smollm2-135m"):
            raise ModelNotFound(f"model {name!r} is not installed", model=name)
        self.model = name
        return await self.models()

    async def pins(self, root: str) -> tuple[str, tuple[str, ...]]:
        return root, tuple(self.pinned.get(root, []))

    async def related(self, root: str, text: str) -> list[RelatedHit]:
        name = text.split()[0] if text.split() else ""
        return [RelatedHit(kind="definition", name=name, path="util.py", line=3, text=f"def {name}():", score=1.0)]

    async def symbol_info(self, root: str, name: str) -> SymbolInfo | None:
        if name != "helper":
            return None
        return SymbolInfo(name=name, definitions=(SymbolLocation(name=name, kind="function", path="util.py", line=1,
                                                                 end_line=2, text="def helper():"),),
                          referenced_by=("main.py",), rank=0.25, rank_position=2, files_ranked=3)

    async def resolve_edit(self, root: str, text: str, question: str = "") -> ProposedEdits:
        """The node's real resolver over the files under ``root`` (definitions located with ``ast``)."""
        self.resolved.append((root, text, question))
        base = Path(root)
        files = sorted(p.relative_to(base).as_posix() for p in base.rglob("*.py"))

        def read(path: str) -> str | None:
            target = base / path
            return target.read_text() if target.is_file() else None

        def locate(name: str) -> list[tuple[str, int, int]]:
            found = []
            for path in files:
                for node in ast.walk(ast.parse(read(path) or "")):
                    if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
                        found.append((path, node.lineno, node.end_lineno or node.lineno))
            return found

        def users(name: str) -> list[str]:
            return [path for path in files if name in (read(path) or "")]

        proposed = propose_edits(text, read, files, locate, (), question)
        return propagate_renames(proposed, locate, users, read, rename_identifier) if proposed.edits else proposed

    async def workspace_overlay(self, root: str, path: str, text: str | None, owner: str = "editor") -> None:
        self.overlays[path] = text
        self.overlay_owners[path] = owner

    async def release_overlays(self, owner: str) -> None:
        self.released.append(owner)

    async def status(self) -> dict[str, Any]:
        return {"pid": 0, "clients": 0}

    async def focus(self, root: str, path: str, line: int, *, visible: tuple[int, int] | None = None,
                    thread: str = "", draft: str = "", terminal: str = "", saved: bool = False,
                    client_id: str = "") -> bool:
        self.focuses.append({"root": root, "path": path, "line": line, "visible": visible, "thread": thread,
                             "draft": draft, "terminal": terminal, "client_id": client_id})
        return True

    def watch_anticipation(self, listener: Callable[[str, AnticipationStatus], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def anticipated(self, client_id: str, status: AnticipationStatus) -> None:
        """As the node does when an anticipation a client's focus started changes state."""
        for listener in list(self.listeners):
            listener(client_id, status)
