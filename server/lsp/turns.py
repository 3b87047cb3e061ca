"""Running one node turn for an LSP request: streamed chunks, progress, cacheStatus, cancellation."""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from contenox.errors import Cancelled, ContenoxError
from contenox.node.contract import CommandResult, TurnEvent, TurnRequest
from contenox.planner import Explain

from .render import cache_status
from .server import ContenoxLanguageServer, to_jsonrpc

__all__ = ["CACHE_STATUS", "CHAT_CHUNK", "CHAT_PROGRESS", "CHAT_TOOL", "run_turn"]

log = logging.getLogger(__name__)
CACHE_STATUS = "$/contenox/cacheStatus"
CHAT_CHUNK = "$/contenox/chatChunk"
CHAT_TOOL = "$/contenox/chatTool"
"""A tool call of an agent turn, started or ended (the panel shows each step, collapsed)."""
CHAT_PROGRESS = "$/contenox/chatProgress"
"""Where a chat's turn is before its first token (``{chatId, state, text, done, total}``): the panel shows the
prefill's progress in the pending answer, as the work-done progress does in the status bar."""
ALLOW_CHECK = "contenox/allowCheck"
"""Server -> client request: may a verified fix's check command run in this workspace (``{allowed}``; the node
remembers the answer per workspace and command)? Clients that declare ``contenoxRunCommand``."""
RUN_COMMAND = "contenox/runCommand"
"""Server -> client request: run an agent turn's command, after asking the user (clients that declare the
``contenoxRunCommand`` experimental capability)."""


def runs_commands(ls: ContenoxLanguageServer) -> bool:
    """Whether the client declared that it runs commands (asking the user first)."""
    experimental = getattr(ls.client_capabilities, "experimental", None)
    return isinstance(experimental, dict) and experimental.get("contenoxRunCommand") is True


class EditorCommands:
    """An agent turn's ``run_command`` calls, run by the editor (which asks the user first) through a
    ``contenox/runCommand`` request; its answer ``{ran, exitCode, output, reason}``."""

    def __init__(self, ls: ContenoxLanguageServer, chat_id: str | None) -> None:
        self.ls, self.chat_id = ls, chat_id

    async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None:
        try:
            reply = await asyncio.wait_for(self.ls.protocol.send_request_async(ALLOW_CHECK, {
                "chatId": self.chat_id, "command": command, "cwd": cwd, "scope": scope}), 600.0)
        except Exception as exc:  # an editor without the request, or no answer: nobody could be asked
            log.info("the editor did not answer %s: %s", ALLOW_CHECK, exc)
            return None
        data = reply if isinstance(reply, dict) else reply._asdict() if hasattr(reply, "_asdict") else {}
        allowed = data.get("allowed")
        return allowed if isinstance(allowed, bool) else None

    async def run_command(self, call_id: str, command: str, cwd: str) -> CommandResult:
        timeout = self.ls.node.config.tools.max_seconds + 60  # the user's decision, then the run
        try:
            reply = await asyncio.wait_for(self.ls.protocol.send_request_async(RUN_COMMAND, {
                "chatId": self.chat_id, "id": call_id, "command": command, "cwd": cwd}), timeout)
        except TimeoutError:
            return CommandResult(ran=False, reason=f"the editor did not answer within {timeout:g} s")
        except Exception as exc:  # the editor refused the request or failed: the model is told why
            return CommandResult(ran=False, reason=f"the editor could not run it: {exc}")
        # pygls hands an unknown method's result over as a namedtuple
        data = reply if isinstance(reply, dict) else reply._asdict() if hasattr(reply, "_asdict") else {}
        ran = bool(data.get("ran"))
        code = data.get("exitCode")
        return CommandResult(ran=ran, exit_code=code if isinstance(code, int) else None,
                             output=str(data.get("output") or ""), reason=str(data.get("reason") or ""))
_tokens = itertools.count(1)
_CREATE_TIMEOUT_S = 10.0
_PENDING = 64
"""Reports kept while the progress token is being created (the latest ones)."""


class _Progress:
    """window/workDoneProgress for one turn, when the client supports server-created progress."""

    def __init__(self, ls: ContenoxLanguageServer, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token: str | None = None
        self.pending: collections.deque[types.WorkDoneProgressReport] | None = collections.deque(maxlen=_PENDING)
        """Reports made while the client is still creating the token (the turn runs meanwhile: a short
        prefill can be over before the client answers); sent right after ``begin``. None once begun."""

    async def begin(self) -> None:
        window = self.ls.client_capabilities.window
        if not (window and window.work_done_progress):
            self.pending = None
            return
        token = f"contenox-{self.ls.client_id}-{next(_tokens)}"
        try:
            await asyncio.wait_for(self.ls.work_done_progress.create_async(token), _CREATE_TIMEOUT_S)
        except Exception as exc:  # the client refused or did not answer: run without progress
            log.debug("work done progress refused: %s", exc)
            self.pending = None
            return
        self.token = token
        begin = types.WorkDoneProgressBegin(title=self.title, cancellable=False, percentage=0)
        self.ls.work_done_progress.begin(token, begin)
        pending, self.pending = self.pending or (), None
        for report in pending:
            self.ls.work_done_progress.report(token, report)

    def report(self, message: str, percentage: int | None = None) -> None:
        report = types.WorkDoneProgressReport(message=message, percentage=percentage)
        if self.token is not None:
            self.ls.work_done_progress.report(self.token, report)
        elif self.pending is not None:
            self.pending.append(report)

    def end(self, message: str) -> None:
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.token = None


async def _last_explain(ls: ContenoxLanguageServer, root: str) -> Explain | None:
    """The workspace's last completed turn, so a status bar keeps its numbers after a cancel."""
    try:
        return await ls.node.explain(root)
    except ContenoxError:
        return None


async def run_turn(ls: ContenoxLanguageServer, request: TurnRequest, *, title: str,
                   chat_id: str | None = None) -> dict[str, Any]:
    """Run ``request`` on the node; the result is ``{text, explain, finishReason}``.

    The running turn is registered under the current request id so ``$/cancelRequest`` cancels it.
    """
    notify = ls.protocol.notify
    progress = _Progress(ls, title)

    async def on_event(event: TurnEvent) -> None:
        if event.kind == "chunk":
            if chat_id is not None and event.text:
                notify(CHAT_CHUNK, {"chatId": chat_id, "text": event.text})
        elif event.kind == "tool" and event.tool is not None:
            if chat_id is not None:
                tool = event.tool
                notify(CHAT_TOOL, {"chatId": chat_id, "id": tool.id, "kind": tool.kind, "title": tool.title,
                                   "status": tool.status, "output": tool.output,
                                   "locations": [{"path": path, "line": line} for path, line in tool.locations]})
        elif event.kind == "progress":  # after each prefill step: the work-done progress and the panel
            progress.report(event.text, round(100 * event.done / event.total) if event.total else None)
            if chat_id is not None:
                notify(CHAT_PROGRESS, {"chatId": chat_id, "state": "prefill", "text": event.text,
                                       "done": event.done, "total": event.total})
        elif event.state is not None:
            progress.report(event.state)
            if chat_id is not None:
                notify(CHAT_PROGRESS, {"chatId": chat_id, "state": event.state, "text": event.text,
                                       "done": event.done, "total": event.total})
            notify(CACHE_STATUS, cache_status(request.root, None, event.state))

    msg_id = ls.protocol.msg_id
    commands = EditorCommands(ls, chat_id) if runs_commands(ls) else None
    task = asyncio.ensure_future(ls.node.turn(request, on_event, commands))
    if msg_id is not None:
        ls.turn_tasks[msg_id] = task
    try:
        await progress.begin()
        outcome = await task
    except (Cancelled, asyncio.CancelledError) as exc:
        notify(CACHE_STATUS, cache_status(request.root, await _last_explain(ls, request.root), "idle"))
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise to_jsonrpc(exc) from exc
    except ContenoxError as exc:
        notify(CACHE_STATUS, cache_status(request.root, None, "error"))
        raise to_jsonrpc(exc) from exc
    finally:
        if not task.done():  # this request was cancelled or failed before the turn ended
            task.cancel()
        progress.end("done")
        if msg_id is not None:
            ls.turn_tasks.pop(msg_id, None)
    notify(CACHE_STATUS, cache_status(request.root, outcome.explain, "idle"))
    root = Path(outcome.explain.workspace or request.root)
    return {"text": outcome.text, "explain": outcome.explain.to_json(), "finishReason": outcome.finish_reason,
            "edits": [{"path": e.path, "uri": (root / e.path).as_uri(), "diff": e.diff, "oldText": e.old_text,
                       "newText": e.new_text} for e in outcome.edits.edits],
            "editProblems": list(outcome.edits.problems),
            "verification": None if outcome.verification is None else {
                "status": outcome.verification.status, "summary": outcome.verification.summary(),
                "command": outcome.verification.command, "candidates": len(outcome.verification.candidates),
                "passed": outcome.verification.passed_count, "chosen": outcome.verification.chosen}}
