"""The node's own ``rpc`` protocol (what the CLI speaks): Content-Length framed JSON-RPC 2.0.

Methods: ``ask {cwd, prompt, pins?, terminal?, selection?, open_file?, selection_lines?, thread?, plan_only?,
max_new_tokens?}`` streams ``chunk {text}`` (and ``state {state}``) notifications, then answers ``{text,
finish_reason, explain, files_in_prompt}``; ``explain {cwd}``; ``status {}``;
``stop {}``; ``pin``/``unpin {cwd, path}``; ``focus {cwd, path, line, thread?, draft?, terminal?, saved?}`` (where the user is:
its code is anticipated); ``$/cancelRequest {id}``. Requests run concurrently; bad
frames, bad JSON, unknown methods and invalid params get JSON-RPC errors and the connection lives on.
When the client goes away its running turns are cancelled. An ``ask`` with ``run_commands: true`` (a CLI on a
terminal, where the user can be asked) lets an agent turn's ``run_command`` calls come back to the client as
``run_command {command, cwd}`` requests, answered ``{ran, exit_code, output, reason}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import msgspec

from contenox.errors import ContenoxError, InvalidRequest
from contenox.jsonrpc import ErrorCode, FrameError, FrameTooLarge, encode_frame, error_frame, read_frame
from contenox.node.contract import CommandResult, CompletionRequest, NodePort, TurnEvent, TurnRequest

__all__ = ["RpcConnection"]

log = logging.getLogger(__name__)

PARSE_ERROR = ErrorCode.PARSE_ERROR
INVALID_REQUEST = ErrorCode.INVALID_REQUEST
METHOD_NOT_FOUND = ErrorCode.METHOD_NOT_FOUND
INVALID_PARAMS = ErrorCode.INVALID_PARAMS
INTERNAL_ERROR = ErrorCode.INTERNAL_ERROR

Handler = Callable[[Any, Any], Awaitable[Any]]
"""``(request id, params decoded as the route's type)`` -> the result."""


NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
LineNumber = Annotated[int, msgspec.Meta(ge=1)]


class NoParams(msgspec.Struct, kw_only=True):
    """Methods that take nothing (what a client sends anyway is ignored)."""


class CwdParams(msgspec.Struct, kw_only=True):
    cwd: NonEmpty


class PathParams(msgspec.Struct, kw_only=True):
    cwd: NonEmpty
    path: NonEmpty


class HistoryParams(msgspec.Struct, kw_only=True):
    cwd: NonEmpty
    thread: NonEmpty


class NameParams(msgspec.Struct, kw_only=True):
    name: NonEmpty


class AskParams(msgspec.Struct, kw_only=True):
    cwd: NonEmpty
    prompt: NonEmpty
    pins: list[str] | None = None
    terminal: str | None = None
    selection: str | None = None
    open_file: str | None = None
    selection_lines: tuple[LineNumber, LineNumber] | None = None
    thread: str | None = None
    plan_only: bool = False
    max_new_tokens: Annotated[int, msgspec.Meta(gt=0)] | None = None
    verify: bool | None = None
    """True: consented for this question; False: never run a check; None: ask (or not, when nobody can be asked)."""
    env: dict[str, str] | None = None
    run_commands: bool = False
    """A CLI on a terminal, where the user can be asked: an agent turn's commands come back as ``run_command``."""


class FocusParams(msgspec.Struct, kw_only=True):
    cwd: NonEmpty
    path: NonEmpty
    line: LineNumber
    thread: str | None = None
    draft: str | None = None
    terminal: str | None = None
    saved: bool = False
    """The file was just saved: anticipate again at the same place."""


_MISSING = re.compile(r"missing required field `(\w+)`")
_AT = re.compile(r"at `\$\.(\w+)")


def decode_params(params: dict[str, Any], kind: type[Any]) -> Any:
    """``params`` as ``kind`` (decoded once, before the handler runs); a :class:`InvalidRequest` naming the
    param otherwise."""
    try:
        return msgspec.convert(params, type=kind)
    except msgspec.ValidationError as exc:
        found = _MISSING.search(str(exc)) or _AT.search(str(exc))
        raise InvalidRequest(f"invalid params: {exc}", **({"param": found.group(1)} if found else {})) from exc


class RpcConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, node: NodePort, client_id: str,
                 request_stop: Callable[[], None]) -> None:
        self.reader = reader
        self.writer = writer
        self.node = node
        self.client_id = client_id
        self.request_stop = request_stop
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._write_lock = asyncio.Lock()
        self._asked: dict[str, asyncio.Future[Any]] = {}
        """This node's requests to the client (``run_command``), by id, until answered."""
        self._asked_ids = 0
        self._routes: dict[str, tuple[type[Any], Handler]] = {
            "ask": (AskParams, self._ask), "explain": (CwdParams, self._explain), "status": (NoParams, self._status),
            "stop": (NoParams, self._stop), "pin": (PathParams, self._pin), "unpin": (PathParams, self._unpin),
            "pins": (CwdParams, self._pins), "models": (NoParams, self._models),
            "use_model": (NameParams, self._use_model), "threads": (CwdParams, self._threads),
            "history": (HistoryParams, self._history), "complete": (dict, self._complete),
            "completion_info": (NoParams, self._completion_info), "focus": (FocusParams, self._focus),
        }
        """The protocol's surface: method -> (its params' type, decoded once before the handler runs; handler)."""

    async def send(self, data: bytes) -> None:
        async with self._write_lock:
            self.writer.write(data)
            await self.writer.drain()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send(encode_frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def serve(self) -> None:
        try:
            while True:
                try:
                    body = await read_frame(self.reader)
                except FrameTooLarge as exc:
                    await self.send(error_frame(None, INVALID_REQUEST, str(exc), "message_too_large"))
                    continue
                except FrameError as exc:
                    await self.send(error_frame(None, PARSE_ERROR, f"bad frame: {exc}", "parse_error"))
                    continue
                if body is None:
                    return
                await self._dispatch(body)
        except (asyncio.LimitOverrunError, ValueError) as exc:  # a header line or block beyond any sane size
            log.warning("rpc client %s: oversized header, closing: %s", self.client_id, exc)
            with contextlib.suppress(ConnectionError, OSError, TimeoutError):
                await self.send(error_frame(None, INVALID_REQUEST, "header too large; closing", "message_too_large"))
                if self.writer.can_write_eof():
                    self.writer.write_eof()
                async with asyncio.timeout(2.0):  # let the error reach the peer before closing on its input
                    while await self.reader.read(1 << 16):
                        pass
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            log.info("rpc client %s: connection ended: %s", self.client_id, exc)
        finally:
            await self._cancel_all()

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Ask the client (its result; its error as a :class:`ContenoxError`)."""
        self._asked_ids += 1
        msg_id = f"node-{self._asked_ids}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._asked[msg_id] = answer
        try:
            await self.send(encode_frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
            message = await asyncio.wait_for(answer, timeout)
        finally:
            self._asked.pop(msg_id, None)
        if "error" in message:
            raise InvalidRequest(f"the client refused {method}: {message['error']}")
        return message.get("result")

    async def _cancel_all(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _dispatch(self, body: bytes) -> None:
        try:
            message = msgspec.json.decode(body)
        except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: nested beyond any real message
            await self.send(error_frame(None, PARSE_ERROR, f"invalid JSON: {exc}", "parse_error"))
            return
        asked = message.get("id") if isinstance(message, dict) and "method" not in message else None
        if isinstance(asked, str) and asked in self._asked:  # (a fuzzed id may be unhashable: a list, an object)
            answered = self._asked.pop(asked)
            if not answered.done():
                answered.set_result(message)
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            msg_id = message.get("id") if isinstance(message, dict) else None
            await self.send(error_frame(msg_id, INVALID_REQUEST, "not a JSON-RPC request", "invalid_request"))
            return
        method: str = message["method"]
        msg_id = message.get("id")
        params = message.get("params", {})
        if params is None:
            params = {}
        if method == "$/cancelRequest":
            target = params.get("id") if isinstance(params, dict) else None
            task = self._tasks.get(target) if isinstance(target, (int, str)) else None
            if task is not None:
                task.cancel()
            return
        if msg_id is None:
            return  # other notifications are ignored
        if isinstance(msg_id, (dict, list, bool, float)):
            await self.send(error_frame(None, INVALID_REQUEST, "invalid request id", "invalid_request"))
            return
        if msg_id in self._tasks:
            await self.send(error_frame(msg_id, INVALID_REQUEST, "duplicate request id", "invalid_request"))
            return
        route = self._routes.get(method)
        if route is None:
            await self.send(error_frame(msg_id, METHOD_NOT_FOUND, f"unknown method {method!r}", "method_not_found"))
            return
        if not isinstance(params, dict):
            await self.send(error_frame(msg_id, INVALID_PARAMS, "params must be an object", "invalid_request"))
            return
        task = asyncio.get_running_loop().create_task(self._run(msg_id, route, params), name=f"rpc-{method}")
        self._tasks[msg_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(msg_id, None))

    async def _run(self, msg_id: Any, route: tuple[type[Any], Handler], params: dict[str, Any]) -> None:
        kind, handler = route
        try:
            result = await handler(msg_id, decode_params(params, kind))
        except ContenoxError as exc:
            frame = error_frame(msg_id, exc.code, exc.message, exc.kind, exc.details)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("rpc request %r failed", msg_id)
            frame = error_frame(msg_id, INTERNAL_ERROR, f"internal error: {exc}", "internal_error")
        else:
            frame = encode_frame({"jsonrpc": "2.0", "id": msg_id, "result": result})
        try:
            await self.send(frame)
        except ConnectionError:
            pass

    # -- methods ---------------------------------------------------------------------------
    async def _ask(self, msg_id: Any, params: AskParams) -> Any:
        lines = params.selection_lines
        request = TurnRequest(root=params.cwd, prompt=params.prompt, verify=params.verify, env=params.env,
                              client_id=self.client_id, pins=tuple(params.pins or ()), terminal=params.terminal or "",
                              max_new_tokens=params.max_new_tokens, selection=params.selection or None,
                              open_file=params.open_file or None, selection_lines=(lines[0], lines[1]) if lines else None,
                              thread=params.thread or "main", plan_only=params.plan_only)

        async def on_event(event: TurnEvent) -> None:
            if event.kind == "chunk":
                await self.notify("chunk", {"id": msg_id, "text": event.text})
            elif event.kind == "tool" and event.tool is not None:
                await self.notify("tool", {"id": msg_id, **msgspec.to_builtins(event.tool)})
            else:
                await self.notify("state", {"id": msg_id, "state": event.state,
                                            **({"detail": event.text} if event.text else {}),
                                            **({"done": event.done, "total": event.total}
                                               if event.kind == "progress" else {})})

        outcome = await self.node.turn(request, on_event, _ClientCommands(self) if params.run_commands else None)
        return {"text": outcome.text, "finish_reason": outcome.finish_reason, "explain": outcome.explain.to_json(),
                "files_in_prompt": list(outcome.files_in_prompt), "output_tokens": outcome.output_tokens,
                "edits": [{"path": e.path, "diff": e.diff, "new_file": e.old_text is None, "blocks": e.blocks,
                           "old_text": e.old_text, "new_text": e.new_text} for e in outcome.edits.edits],
                "edit_problems": list(outcome.edits.problems),
                "verification": (msgspec.to_builtins(outcome.verification)
                                 if outcome.verification is not None else None)}

    async def _explain(self, msg_id: Any, params: CwdParams) -> Any:
        explain = await self.node.explain(params.cwd)
        return None if explain is None else explain.to_json()

    async def _threads(self, msg_id: Any, params: CwdParams) -> Any:
        return [msgspec.to_builtins(t) for t in await self.node.threads(params.cwd)]

    async def _history(self, msg_id: Any, params: HistoryParams) -> Any:
        return [msgspec.to_builtins(e) for e in await self.node.history(params.cwd, params.thread)]

    async def _complete(self, msg_id: Any, params: dict[str, Any]) -> Any:
        """An inline completion: {cwd, path, text, line, character, repo_context?, use_cache?} (0-based): the
        node's own :class:`CompletionRequest`, with ``cwd`` as its root."""
        cwd = decode_params(params, CwdParams).cwd
        request = decode_params({**{k: v for k, v in params.items() if k != "cwd"}, "root": cwd,
                                 "client_id": self.client_id}, CompletionRequest)
        return msgspec.to_builtins(await self.node.complete(request))

    async def _focus(self, msg_id: Any, params: FocusParams) -> Any:
        """Where the user is (its code is anticipated); answers {scheduled}."""
        scheduled = await self.node.focus(params.cwd, params.path, params.line, thread=params.thread or "main",
                                          draft=params.draft or "", terminal=params.terminal or "",
                                          saved=params.saved, client_id=self.client_id)
        return {"scheduled": scheduled}

    async def _completion_info(self, msg_id: Any, params: NoParams) -> Any:
        return msgspec.to_builtins(await self.node.completion_info())

    async def _status(self, msg_id: Any, params: NoParams) -> Any:
        return await self.node.status()

    async def _stop(self, msg_id: Any, params: NoParams) -> Any:
        asyncio.get_running_loop().call_later(0.05, self.request_stop)
        return {"stopping": True}

    async def _pin(self, msg_id: Any, params: PathParams) -> Any:
        return {"pins": list(await self.node.pin(params.cwd, params.path))}

    async def _unpin(self, msg_id: Any, params: PathParams) -> Any:
        return {"pins": list(await self.node.unpin(params.cwd, params.path))}

    async def _pins(self, msg_id: Any, params: CwdParams) -> Any:
        root, pins = await self.node.pins(params.cwd)
        return {"root": root, "pins": list(pins)}

    async def _models(self, msg_id: Any, params: NoParams) -> Any:
        return msgspec.to_builtins(await self.node.models())

    async def _use_model(self, msg_id: Any, params: NameParams) -> Any:
        return msgspec.to_builtins(await self.node.use_model(params.name))


class _ClientCommands:
    """An agent turn's commands, run by the CLI after it asked the user (``run_command`` requests), and the
    user's consent to a verification's check command (``allow_check``)."""

    def __init__(self, conn: RpcConnection) -> None:
        self.conn = conn

    async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None:
        try:
            reply = await self.conn.request("allow_check", {"command": command, "cwd": cwd, "scope": scope}, 600.0)
        except (TimeoutError, ContenoxError, ConnectionError):
            return None
        allowed = reply.get("allowed") if isinstance(reply, dict) else None
        return allowed if isinstance(allowed, bool) else None

    async def run_command(self, call_id: str, command: str, cwd: str) -> CommandResult:
        timeout = self.conn.node.config.tools.max_seconds + 60  # the user's decision, then the run
        try:
            reply = await self.conn.request("run_command", {"id": call_id, "command": command, "cwd": cwd}, timeout)
        except TimeoutError:
            return CommandResult(ran=False, reason=f"the client did not answer within {timeout:g} s")
        except (ContenoxError, ConnectionError) as exc:
            return CommandResult(ran=False, reason=f"the client could not run it: {exc}")
        data = reply if isinstance(reply, dict) else {}
        code = data.get("exit_code")
        return CommandResult(ran=data.get("ran") is True, exit_code=code if isinstance(code, int) else None,
                             output=str(data.get("output") or ""), reason=str(data.get("reason") or ""))
