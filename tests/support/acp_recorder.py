"""An ACP client for tests: records every session update, refuses everything else."""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from acp import RequestError


class Recorder:
    """``permit``: the option id every permission request is answered with ("cancelled": the cancelled
    outcome; None: the method is refused). ``writes``: what ``fs/write_text_file`` was asked to write."""

    def __init__(self, permit: str | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()
        self.permit = permit
        self.permission_requests: list[Any] = []
        self.writes: list[tuple[str, str]] = []
        self.buffers: dict[str, str] = {}
        """Unsaved editor text by path, served by ``fs/read_text_file`` (other paths: the file on disk)."""
        self.reads: list[str] = []
        self.terminals: dict[str, asyncio.Task[tuple[bytes, bytes]]] = {}
        """A real terminal per ``terminal/create``: the command runs as a subprocess, as an editor would run it."""
        self.commands: list[tuple[str, list[str], str | None]] = []
        self.released: list[str] = []
        self._procs: dict[str, asyncio.subprocess.Process] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        if self.permit is None:
            raise RequestError.method_not_found("session/request_permission")
        self.permission_requests.append((tool_call, options))
        outcome = (DeniedOutcome(outcome="cancelled") if self.permit == "cancelled"
                   else AllowedOutcome(outcome="selected", option_id=self.permit))
        return RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            with open(path, encoding="utf-8") as fh:
                return ReadTextFileResponse(content=fh.read())
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.writes.append((path, content))
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: Any = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> Any:
        proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = asyncio.ensure_future(proc.communicate())
        self._procs[terminal_id] = proc
        self.commands.append((command, list(args or []), cwd))
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self.terminals[terminal_id]
        return WaitForTerminalExitResponse(exit_code=self._procs[terminal_id].returncode)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        task = self.terminals[terminal_id]
        out = task.result()[0].decode() if task.done() else ""
        code = self._procs[terminal_id].returncode
        return TerminalOutputResponse(output=out, truncated=False,
                                      exit_status=TerminalExitStatus(exit_code=code) if code is not None else None)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self._procs[terminal_id].kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.released.append(terminal_id)
        return ReleaseTerminalResponse()

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates
                if u.session_update == kind and (session_id is None or s == session_id)]

    def text(self, session_id: str, since: int = 0) -> str:
        """The agent's text in the session (from update ``since`` on); resource links are not text."""
        return "".join(u.content.text for s, u in self.updates[since:]
                       if s == session_id and u.session_update == "agent_message_chunk"
                       and getattr(u.content, "type", "") == "text")

    async def wait_until(self, predicate: Any, timeout: float = 600) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(loop(), timeout)

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 30) -> list[Any]:
        async def ready() -> list[Any]:
            while len(self.of(kind)) < count:
                self.changed.clear()
                await self.changed.wait()
            return self.of(kind)
        return await asyncio.wait_for(ready(), timeout)
