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
from collections.abc import Awaitable, Callable
from typing import Any

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

Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]


def _str_param(params: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = params.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise InvalidRequest(f"param {name!r} must be a non-empty string", param=name)
    return value


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
        self._handlers: dict[str, Handler] = {
            "ask": self._ask, "explain": self._explain, "status": self._status, "stop": self._stop,
            "pin": self._pin, "unpin": self._unpin, "pins": self._pins,
            "models": self._models, "use_model": self._use_model, "threads": self._threads, "history": self._history,
            "complete": self._complete, "completion_info": self._completion_info, "focus": self._focus,
        }

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
        handler = self._handlers.get(method)
        if handler is None:
            await self.send(error_frame(msg_id, METHOD_NOT_FOUND, f"unknown method {method!r}", "method_not_found"))
            return
        if not isinstance(params, dict):
            await self.send(error_frame(msg_id, INVALID_PARAMS, "params must be an object", "invalid_request"))
            return
        task = asyncio.get_running_loop().create_task(self._run(msg_id, handler, params), name=f"rpc-{method}")
        self._tasks[msg_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(msg_id, None))

    async def _run(self, msg_id: Any, handler: Handler, params: dict[str, Any]) -> None:
        try:
            result = await handler(msg_id, params)
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
    async def _ask(self, msg_id: Any, params: dict[str, Any]) -> Any:
        pins = params.get("pins") or []
        if not isinstance(pins, list) or not all(isinstance(p, str) for p in pins):
            raise InvalidRequest("param 'pins' must be a list of paths", param="pins")
        max_new = params.get("max_new_tokens")
        if max_new is not None and (not isinstance(max_new, int) or isinstance(max_new, bool) or max_new <= 0):
            raise InvalidRequest("param 'max_new_tokens' must be a positive integer", param="max_new_tokens")
        lines = params.get("selection_lines")
        if lines is not None and not (isinstance(lines, list) and len(lines) == 2
                                      and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lines)):
            raise InvalidRequest("param 'selection_lines' must be [first, last] line numbers", param="selection_lines")
        plan_only = params.get("plan_only", False)
        if not isinstance(plan_only, bool):
            raise InvalidRequest("param 'plan_only' must be a boolean", param="plan_only")
        verify = params.get("verify")
        if verify is not None and not isinstance(verify, bool):
            raise InvalidRequest("param 'verify' must be a boolean", param="verify")
        env = params.get("env")
        if env is not None and not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                                  for k, v in env.items())):
            raise InvalidRequest("param 'env' must be an object of strings", param="env")
        request = TurnRequest(root=_str_param(params, "cwd"), prompt=_str_param(params, "prompt"),
                              verify=verify, env=env,
                              client_id=self.client_id, pins=tuple(pins),
                              terminal=_str_param(params, "terminal", required=False), max_new_tokens=max_new,
                              selection=_str_param(params, "selection", required=False) or None,
                              open_file=_str_param(params, "open_file", required=False) or None,
                              selection_lines=(lines[0], lines[1]) if lines else None,
                              thread=_str_param(params, "thread", required=False) or "main", plan_only=plan_only)

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

        runs = params.get("run_commands", False)
        outcome = await self.node.turn(request, on_event, _ClientCommands(self) if runs is True else None)
        return {"text": outcome.text, "finish_reason": outcome.finish_reason, "explain": outcome.explain.to_json(),
                "files_in_prompt": list(outcome.files_in_prompt), "output_tokens": outcome.output_tokens,
                "edits": [{"path": e.path, "diff": e.diff, "new_file": e.old_text is None, "blocks": e.blocks,
                           "old_text": e.old_text, "new_text": e.new_text} for e in outcome.edits.edits],
                "edit_problems": list(outcome.edits.problems),
                "verification": (msgspec.to_builtins(outcome.verification)
                                 if outcome.verification is not None else None)}

    async def _explain(self, msg_id: Any, params: dict[str, Any]) -> Any:
        explain = await self.node.explain(_str_param(params, "cwd"))
        return None if explain is None else explain.to_json()

    async def _threads(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return [msgspec.to_builtins(t) for t in await self.node.threads(_str_param(params, "cwd"))]

    async def _history(self, msg_id: Any, params: dict[str, Any]) -> Any:
        exchanges = await self.node.history(_str_param(params, "cwd"), _str_param(params, "thread"))
        return [msgspec.to_builtins(e) for e in exchanges]

    async def _complete(self, msg_id: Any, params: dict[str, Any]) -> Any:
        """An inline completion: {cwd, path, text, line, character, repo_context?, use_cache?} (0-based)."""
        try:
            request = msgspec.convert({**{k: v for k, v in params.items() if k != "cwd"},
                                       "root": _str_param(params, "cwd"), "client_id": self.client_id},
                                      type=CompletionRequest)
        except msgspec.ValidationError as exc:
            raise InvalidRequest(f"complete: {exc}") from exc
        return msgspec.to_builtins(await self.node.complete(request))

    async def _focus(self, msg_id: Any, params: dict[str, Any]) -> Any:
        """Where the user is: {cwd, path, line (1-based), thread?, draft?, terminal?, saved? (the file was just saved:
        anticipate again at the same place)}; answers {scheduled}."""
        line = params.get("line")
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            raise InvalidRequest("param 'line' must be a 1-based line number", param="line")
        scheduled = await self.node.focus(_str_param(params, "cwd"), _str_param(params, "path"), line,
                                          thread=_str_param(params, "thread", required=False) or "main",
                                          draft=_str_param(params, "draft", required=False),
                                          terminal=_str_param(params, "terminal", required=False),
                                          saved=params.get("saved") is True, client_id=self.client_id)
        return {"scheduled": scheduled}

    async def _completion_info(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return msgspec.to_builtins(await self.node.completion_info())

    async def _status(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return await self.node.status()

    async def _stop(self, msg_id: Any, params: dict[str, Any]) -> Any:
        asyncio.get_running_loop().call_later(0.05, self.request_stop)
        return {"stopping": True}

    async def _pin(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return {"pins": list(await self.node.pin(_str_param(params, "cwd"), _str_param(params, "path")))}

    async def _models(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return msgspec.to_builtins(await self.node.models())

    async def _use_model(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return msgspec.to_builtins(await self.node.use_model(_str_param(params, "name")))

    async def _pins(self, msg_id: Any, params: dict[str, Any]) -> Any:
        root, pins = await self.node.pins(_str_param(params, "cwd"))
        return {"root": root, "pins": list(pins)}

    async def _unpin(self, msg_id: Any, params: dict[str, Any]) -> Any:
        return {"pins": list(await self.node.unpin(_str_param(params, "cwd"), _str_param(params, "path")))}


class _ClientCommands:
    """An agent turn's commands, run by the CLI after it asked the user (``run_command`` requests), and the
    user's consent to a verification's check command (``allow_check``)."""

    def __init__(self, conn: RpcConnection) -> None:
        self.conn = conn

    async def allow_check(self, command: str, cwd: str) -> bool | None:
        try:
            reply = await self.conn.request("allow_check", {"command": command, "cwd": cwd}, 600.0)
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
