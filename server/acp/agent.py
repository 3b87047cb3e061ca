"""The ACP agent: one per client connection; sessions are threads over a node workspace."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from acp.helpers import plan_entry, resource_link_block, update_agent_message, update_user_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    Usage,
    UsageUpdate,
)

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_plan
from contenox.errors import Cancelled, ContenoxError, InvalidRequest
from contenox.node.asked import CUT_OFF
from contenox.node.contract import Exchange, NodePort, TurnEvent, TurnOutcome, TurnRequest
from contenox.node.tasks import TaskSet
from contenox.planner import render_markdown

from .edits import ClientTerminal, offer_edits, report_tool
from .prompt import COMMANDS, Command, PromptParts, parse_command, parse_prompt
from .sessions import LegacyUnanswered, SessionRecord, SessionStore, title_of

__all__ = ["ContenoxAgent"]

log = logging.getLogger(__name__)
_STEPS = (("indexing", "Index the workspace"), ("prefill", "Read the context (cached prefix + new tokens)"),
          ("decode", "Write the answer"))


def _request_error(exc: ContenoxError) -> RequestError:
    return RequestError(exc.code, exc.message, exc.to_dict())


def _cited_files(cwd: str, outcome: TurnOutcome) -> list[str]:
    """Workspace files the answer cites that exist (each becomes a resource link under the answer)."""
    cited = outcome.explain.citations
    if cited is None:
        return []
    root = outcome.explain.workspace or cwd
    return [p for p in cited.files_real if ".." not in Path(p).parts and Path(root, p).is_file()][:12]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)", re.MULTILINE)


def _next_place(cwd: str, outcome: TurnOutcome, mentioned: tuple[str, ...]) -> tuple[str, int] | None:
    """Where the user goes next after an answer, as far as an ACP client shows it (it reports no cursor): the
    first file the answer changes, at its first hunk; else the first file mentioned; else the first one cited."""
    root = outcome.explain.workspace or cwd
    for edit in outcome.edits.edits:
        if Path(root, edit.path).is_file():
            hunk = _HUNK.search(edit.diff)
            return str(Path(root, edit.path)), int(hunk.group(1)) if hunk else 1
    for path in mentioned:
        if Path(path).is_file():
            return path, 1
    cited = _cited_files(cwd, outcome)
    return (str(Path(root, cited[0])), 1) if cited else None


def _thread(session_id: str) -> str:
    """The node thread of an ACP session (session ids already start with ``acp-``)."""
    return session_id if session_id.startswith("acp-") else f"acp-{session_id}"


_PAGE = 50
"""Sessions per ``session/list`` page."""


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _with_legacy(exchanges: list[Exchange], legacy: tuple[LegacyUnanswered, ...]) -> list[Exchange]:
    """The thread's exchanges with the prompts an earlier version kept in the session record put back where they
    were asked (after that many answered exchanges; one recorded under way was cut off)."""
    if not legacy:
        return exchanges
    waiting = sorted(legacy, key=lambda u: u.after)
    merged: list[Exchange] = []
    answered = 0
    for exchange in [*exchanges, None]:
        while waiting and (exchange is None or min(waiting[0].after, len(exchanges)) <= answered):
            old = waiting.pop(0)
            merged.append(Exchange(turn=0, user=old.prompt, answer="", unanswered=old.why or CUT_OFF))
        if exchange is not None:
            merged.append(exchange)
            answered += 0 if exchange.unanswered else 1
    return merged


def _max_new_tokens(ours: Any) -> int | None:
    """``_meta: {"contenox": {"maxNewTokens": N}}`` on session/prompt caps this turn's answer (the SDK
    passes ``_meta`` entries as keyword arguments)."""
    value = ours.get("maxNewTokens") if isinstance(ours, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class ContenoxAgent:
    """Implements the agent side of ACP on top of the node; the SDK does the JSON-RPC."""

    def __init__(self, node: NodePort, client_id: str) -> None:
        self.node = node
        self.client_id = client_id
        self.store = SessionStore(node.config.state_dir / "acp" / "sessions")
        self.sessions: dict[str, SessionRecord] = {}
        self.running: dict[str, asyncio.Task[TurnOutcome]] = {}
        self._starting: set[str] = set()
        """Sessions whose prompt is being set up (its turn not yet running): a cancel then is remembered."""
        self._early_cancel: set[str] = set()
        self._background = TaskSet()
        self._conn: Client | None = None
        self._client_capabilities: Any = None

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> Client:
        assert self._conn is not None, "on_connect runs before any request"
        return self._conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self._client_capabilities = client_capabilities
        caps = AgentCapabilities(load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True),
                                 session_capabilities=SessionCapabilities(list=SessionListCapabilities()))
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION), agent_capabilities=caps,
                                  agent_info=Implementation(name="contenox", title="Contenox", version="0.1.0"))

    async def new_session(self, cwd: str, additional_directories: Any = None, mcp_servers: Any = None,
                          **kwargs: Any) -> NewSessionResponse:
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise _request_error(InvalidRequest(f"cwd must be an existing absolute directory: {cwd!r}", cwd=cwd))
        record = self.store.create(cwd)
        self.sessions[record.session_id] = record
        self._after_reply(self._advertise(record.session_id))
        return NewSessionResponse(session_id=record.session_id, config_options=await self._config_options())

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """This user's sessions (of ``cwd`` when given), most recently used first, a page at a time."""
        if cursor is not None and not cursor.isdigit():
            raise RequestError.invalid_params({"cursor": f"not a cursor this agent gave out: {cursor!r}"})
        start = int(cursor or 0)
        records = await asyncio.to_thread(self.store.all, cwd)
        page = records[start:start + _PAGE]
        more = start + _PAGE < len(records)
        return ListSessionsResponse(sessions=[SessionInfo(
            session_id=r.session_id, cwd=r.cwd, title=r.title or None, updated_at=_iso(max(r.updated, r.created)))
            for r in page], next_cursor=str(start + _PAGE) if more else None)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           additional_directories: Any = None, **kwargs: Any) -> LoadSessionResponse:
        try:
            record = self.store.load(session_id)
        except InvalidRequest as exc:
            raise _request_error(exc) from exc
        if record is None:
            raise RequestError.resource_not_found(session_id)
        try:
            # the thread as the node holds it for every client: the journal's answers, and the prompts without one
            # (stopped, failed, cut off) where they were asked
            exchanges = await self.node.history(record.cwd, _thread(session_id))
        except ContenoxError as exc:
            raise _request_error(exc) from exc
        self.sessions[session_id] = record
        for exchange in _with_legacy(exchanges, record.unanswered):
            await self.conn.session_update(session_id, update_user_message_text(exchange.user))
            await self.conn.session_update(session_id, update_agent_message_text(
                f"_(no answer: {exchange.unanswered})_" if exchange.unanswered else exchange.answer))
        if record.title:
            await self.conn.session_update(session_id, SessionInfoUpdate(
                session_update="session_info_update", title=record.title,
                updated_at=_iso(max(record.updated, record.created))))
        await self._advertise(session_id)
        return LoadSessionResponse(config_options=await self._config_options())

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """The model picker: ``model`` switches the node (every session of it) to an installed model."""
        self._session(session_id)
        if config_id != "model" or not isinstance(value, str):
            raise RequestError.invalid_params({"configId": f"unknown option {config_id!r} (this agent has: model)"})
        try:
            await self.node.use_model(value)
        except ContenoxError as exc:
            raise _request_error(exc) from exc
        return SetSessionConfigOptionResponse(config_options=await self._config_options())

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        record = self._session(session_id)
        parts = parse_prompt(prompt, record.cwd)
        if not parts.text and parts.context is None:
            raise RequestError.invalid_params({"prompt": "no text or embedded context to answer"})
        command = parse_command(parts.text)
        try:
            if command is not None:
                answer = await self._command(record, command)
                await self.conn.session_update(session_id, update_agent_message_text(answer))
                return PromptResponse(stop_reason="end_turn")
            return await self._turn(record, parts, _max_new_tokens(kwargs.get("contenox")))
        except ConnectionError:  # the client went away mid-prompt (its turn was cancelled): nobody to answer
            log.info("%s: prompt in %s ended: the client is gone", self.client_id, session_id)
            return PromptResponse(stop_reason="cancelled")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        task = self.running.get(session_id)
        if task is not None:
            task.cancel()
        elif session_id in self._starting:
            self._early_cancel.add(session_id)

    # -- internals ------------------------------------------------------------------------
    def _session(self, session_id: str) -> SessionRecord:
        record = self.sessions.get(session_id)
        if record is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}; call session/new "
                                               "or session/load first"})
        return record

    async def _prompted(self, session_id: str, prompt: str | None = None) -> None:
        """A prompt of the session began (``prompt``: the first one names the session in the client's thread
        list) or ended (None: when it was last used)."""
        record = self.sessions[session_id]
        titled = prompt is not None and not record.title
        record = msgspec.structs.replace(record, title=title_of(prompt) if prompt is not None and titled else record.title,
                                         updated=time.time() if prompt is None else record.updated)
        self.sessions[session_id] = record
        await asyncio.to_thread(self.store.save, record)
        if titled:
            await self.conn.session_update(session_id, SessionInfoUpdate(
                session_update="session_info_update", title=record.title, updated_at=_iso(time.time())))

    async def _config_options(self) -> list[Any]:
        """The model picker as an ACP session config option (the installed models, the one served)."""
        try:
            choice = await self.node.models()
        except ContenoxError:
            return []
        return [SessionConfigOptionSelect(
            type="select", id="model", name="Model", category="model", current_value=choice.current,
            description="The local model the Contenox node serves (all its sessions switch)",
            options=[SessionConfigSelectOption(value=name, name=name) for name in choice.installed])]

    def _after_reply(self, coro: Any) -> None:
        """Run ``coro`` after the current response is queued (session updates must follow session/new)."""
        self._background.spawn(coro)

    async def _advertise(self, session_id: str) -> None:
        await self.conn.session_update(session_id, AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=COMMANDS))

    async def _command(self, record: SessionRecord, command: Command) -> str:
        if command.name not in {c.name for c in COMMANDS}:
            known = ", ".join(f"/{c.name}" for c in COMMANDS)
            return f"Unknown command /{command.name}. The commands are {known}; anything else is asked as a question."
        try:
            if command.name == "explain-context":
                explain = await self.node.explain(record.cwd)
                return render_markdown(explain) if explain else "No turn has run in this workspace yet."
            if command.argument:
                path = os.path.join(record.cwd, command.argument)
                if command.name == "pin":
                    await self.node.pin(record.cwd, path)
                    done = f"Pinned {command.argument}."
                else:
                    await self.node.unpin(record.cwd, path)
                    done = f"Unpinned {command.argument}."
            elif command.name == "unpin":
                return "Usage: /unpin PATH (`/pin` alone lists the pins)"
            else:
                done = ""
            root, pins = await self.node.pins(record.cwd)
            listed = (f"Pinned in every turn of `{root}`:\n" + "\n".join(f"- `{p}`" for p in pins) if pins else
                      "Nothing is pinned. `/pin PATH` pins a file (`PATH:10-40` lines, `PATH:outline` its outline).")
            return f"{done}\n\n{listed}" if done else listed
        except ContenoxError as exc:
            raise _request_error(exc) from exc

    async def _plan(self, session_id: str, reached: str | None, *, stopped: bool = False) -> None:
        """The turn's steps; ``stopped``: the turn ended at ``reached`` (Stop or an error), so no step stays in
        progress: the ones before it are done, the rest never ran."""
        names = [name for name, _ in _STEPS]
        index = names.index(reached) if reached in names else -1
        entries = [plan_entry(title + (" (stopped)" if stopped and i == index else ""),
                              priority="high" if name == "decode" else "medium",
                              status="completed" if i < index or reached == "done" else
                              "pending" if stopped or i > index else "in_progress")
                   for i, (name, title) in enumerate(_STEPS)]
        await self.conn.session_update(session_id, update_plan(entries))

    async def _turn(self, record: SessionRecord, parts: PromptParts, max_new_tokens: int | None) -> PromptResponse:
        session_id = record.session_id
        request = TurnRequest(root=record.cwd, prompt=parts.text or "Explain the attached context.",
                              client_id=f"{self.client_id}/{session_id}", selection=parts.context, pins=parts.pins,
                              max_new_tokens=max_new_tokens, thread=_thread(session_id), notes=parts.notes)
        chunks: list[str] = []
        reached: list[str] = []
        prompt_key = uuid.uuid4().hex[:8]  # tool call ids are unique within the session

        async def on_event(event: TurnEvent) -> None:
            if event.kind == "chunk" and event.text:
                chunks.append(event.text)
                await self.conn.session_update(session_id, update_agent_message_text(event.text))
            elif event.kind == "state" and event.state in ("indexing", "prefill", "decode"):
                reached.append(event.state)
                await self._plan(session_id, event.state)
            elif event.kind == "tool" and event.tool is not None:
                await report_tool(self.conn, session_id, prompt_key, event.tool)

        self._starting.add(session_id)  # a session/cancel from now on is for this turn
        try:
            # in the node's open-questions log at once (every client's): kept, and shown where it was asked, if
            # it is stopped or the node goes away before the answer, even while the client's buffers are read
            asked = await self.node.ask(record.cwd, request.thread, request.prompt)
        except ContenoxError as exc:
            self._starting.discard(session_id)
            raise _request_error(exc) from exc
        request = msgspec.structs.replace(request, asked=asked)
        buffers: list[str] = []
        try:
            await self._prompted(session_id, request.prompt)
            await self._plan(session_id, None)
            buffers = await self._client_buffers(session_id, record.cwd, parts.pins, request.client_id)
        except BaseException:
            await self._unanswered(record.cwd, asked, "stopped before the answer was finished")
            raise
        finally:
            self._starting.discard(session_id)
        try:
            commands = ClientTerminal(self.conn, session_id, prompt_key, self._client_capabilities,
                                      self.node.config.tools.max_seconds)
            return await self._run(record, request, on_event, reached, commands)
        finally:
            for path in buffers:  # the editor's unsaved text served this turn; the disk is the truth again
                with contextlib.suppress(ContenoxError):
                    await self.node.workspace_overlay(record.cwd, path, None, owner=request.client_id)

    async def _client_buffers(self, session_id: str, cwd: str, paths: tuple[str, ...], owner: str) -> list[str]:
        """Mentioned files as the client has them (``fs/read_text_file``: unsaved edits included) when it offers
        that, laid over the disk for this turn; the paths laid over."""
        fs = getattr(self._client_capabilities, "fs", None)
        if not paths or not getattr(fs, "read_text_file", False):
            return []
        laid: list[str] = []
        for path in paths:
            if not os.path.isfile(path):
                continue
            try:
                text = (await self.conn.read_text_file(session_id=session_id, path=path)).content
                if await asyncio.to_thread(Path(path).read_text, encoding="utf-8") == text:
                    continue  # nothing unsaved: the disk serves
                await self.node.workspace_overlay(cwd, path, text, owner=owner)
            except (OSError, UnicodeDecodeError, ContenoxError):
                continue
            except Exception:  # the client could not read it: the file on disk serves
                log.debug("fs/read_text_file %s failed", path, exc_info=True)
                continue
            laid.append(path)
        return laid

    async def _unanswered(self, cwd: str, asked: str, why: str) -> None:
        """End a question the node was told of without an answer (shielded: a closing connection still says it)."""
        with contextlib.suppress(ContenoxError):
            await asyncio.shield(self.node.end_question(cwd, asked, why))

    async def _run(self, record: SessionRecord, request: TurnRequest, on_event: Any,
                   reached: list[str], commands: ClientTerminal | None = None) -> PromptResponse:
        session_id = record.session_id
        task = asyncio.ensure_future(self.node.turn(request, on_event, commands))
        self.running[session_id] = task
        if session_id in self._early_cancel:  # Stop pressed before the turn was under way
            self._early_cancel.discard(session_id)
            task.cancel()
        try:
            outcome = await task
        except (Cancelled, asyncio.CancelledError) as exc:
            task.cancel()
            current = asyncio.current_task()
            # (a turn cancelled before it ran never ended its question: the node's turn does that once it runs)
            await self._unanswered(record.cwd, request.asked, "stopped before the answer was finished")
            if isinstance(exc, asyncio.CancelledError) and current is not None and current.cancelling():
                raise  # the connection is closing, not a session/cancel
            await self._prompted(session_id)
            await self._plan(session_id, reached[-1] if reached else "indexing", stopped=True)
            return PromptResponse(stop_reason="cancelled")
        except ContenoxError as exc:  # the node's turn ended the question with it
            await self._prompted(session_id)
            await self._plan(session_id, reached[-1] if reached else "indexing", stopped=True)
            raise _request_error(exc) from exc
        finally:
            if self.running.get(session_id) is task:
                del self.running[session_id]
        await self._prompted(session_id)  # answered: the journal holds it now
        await self._plan(session_id, "done")
        explain = outcome.explain
        for path in _cited_files(record.cwd, outcome):
            await self.conn.session_update(session_id, update_agent_message(resource_link_block(
                name=path, uri=Path(explain.workspace or record.cwd, path).as_uri(), title=f"{path} (cited)")))
        if outcome.verification is not None:  # the verdict before the edit it is about
            report = outcome.verification
            note = report.summary()
            if report.chosen not in (None, 1):
                note += f"; the change offered is candidate {report.chosen}'s, not the one written above"
            await self.conn.session_update(session_id, update_agent_message_text(f"\n\n_{note}_"))
        if outcome.edits.problems:
            await self.conn.session_update(session_id, update_agent_message_text(
                "\n\n" + "\n".join(f"- Edit not applied: {p}" for p in outcome.edits.problems)))
        if outcome.edits.edits:
            await offer_edits(self.conn, session_id, explain.workspace or record.cwd, explain.turn,
                              outcome.edits.edits, self._client_capabilities)
        await self.conn.session_update(session_id, UsageUpdate(
            session_update="usage_update", used=explain.totals.tokens, size=explain.context_size,
            field_meta={"contenox": explain.to_json()}))
        place = _next_place(record.cwd, outcome, request.pins)
        if place is not None:  # the session's next question likely starts there: anticipate its code
            with contextlib.suppress(ContenoxError):
                await self.node.focus(record.cwd, place[0], max(1, place[1]), thread=request.thread,
                                      client_id=request.client_id)
        usage = Usage(input_tokens=explain.totals.tokens, output_tokens=outcome.output_tokens,
                      total_tokens=explain.totals.tokens + outcome.output_tokens,
                      cached_read_tokens=explain.totals.cached)
        return PromptResponse(stop_reason="max_tokens" if outcome.finish_reason == "length" else "end_turn",
                              usage=usage, field_meta={"contenox": explain.to_json()})
