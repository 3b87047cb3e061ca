"""Proposed edits offered to an ACP client: an ``edit`` tool call with the diff, a permission request, the write.

Each file an answer changes becomes one ``tool_call`` (kind ``edit``, status ``pending``, a ``diff`` content
and the first changed line as its location), then ``session/request_permission`` with Apply / Reject.
Applied: the file is written through ``fs/write_text_file`` when the client offers it (its buffers and undo
stay right), else by the node, atomically; either way only when the file still holds the text the edit
was made from (a file changed since is a failed tool call, never overwritten). The tool call ends
``completed`` or ``failed`` with the reason as its content. The tool calls of an agent turn (reads, searches,
proposals) are reported as they run (:func:`report_tool`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from acp.helpers import start_tool_call, text_block, tool_content, tool_diff_content, update_tool_call
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)

from contenox.answer.edits import ProposedEdit, apply_edit, first_changed_line
from contenox.errors import StaleEdit
from contenox.node.contract import CommandResult, ToolActivity
from contenox.node.persist import write_atomic

__all__ = ["ClientTerminal", "offer_edits", "report_tool"]

log = logging.getLogger(__name__)

_OPTIONS = [PermissionOption(option_id="apply", name="Apply", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once")]


async def _current_text(conn: Client, session_id: str, path: Path, client_reads: bool) -> str | None:
    if client_reads:
        try:
            return (await conn.read_text_file(session_id=session_id, path=str(path))).content
        except Exception:  # the client could not read it (no such file): fall back to the disk
            log.debug("fs/read_text_file %s failed", path, exc_info=True)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


async def _apply(conn: Client, session_id: str, path: Path, edit: ProposedEdit, fs: Any) -> str | None:
    """Write the edit; the reason it was not written, or None."""
    current = await _current_text(conn, session_id, path, bool(getattr(fs, "read_text_file", False)))
    try:
        text = apply_edit(edit, current)
    except StaleEdit as exc:
        return exc.message
    if text is None:  # ACP's fs has no delete: the approved deletion is made on the disk the node shares
        await asyncio.to_thread(path.unlink, True)
    elif getattr(fs, "write_text_file", False):
        await conn.write_text_file(session_id=session_id, path=str(path), content=text)
    else:
        await asyncio.to_thread(write_atomic, path, text.encode("utf-8"), keep_mode=True)
    return None


async def offer_edits(conn: Client, session_id: str, root: str, turn: int, edits: tuple[ProposedEdit, ...],
                      client_capabilities: Any) -> list[str]:
    """Offer each edit for approval and apply what is approved; the paths written."""
    fs = getattr(client_capabilities, "fs", None)
    written: list[str] = []
    for number, edit in enumerate(edits, 1):
        call_id = f"contenox-edit-{turn}-{number}"
        path = Path(root, edit.path)
        title = f"{'Create' if edit.old_text is None else 'Delete' if edit.new_text is None else 'Edit'} {edit.path}"
        diff = tool_diff_content(str(path), edit.new_text or "", edit.old_text)
        location = ToolCallLocation(path=str(path), line=first_changed_line(edit))
        await conn.session_update(session_id, start_tool_call(
            call_id, title, kind="edit", status="pending", content=[diff], locations=[location],
            raw_input={"path": edit.path, "diff": edit.diff}))
        response = await conn.request_permission(
            session_id=session_id, options=_OPTIONS,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title, kind="edit", status="pending",
                                     content=[diff], locations=[location]))
        outcome = response.outcome
        if not (isinstance(outcome, AllowedOutcome) and outcome.option_id == "apply"):
            why = "cancelled" if getattr(outcome, "outcome", "") == "cancelled" else "rejected"
            await conn.session_update(session_id, update_tool_call(
                call_id, status="failed", content=[tool_content(text_block(f"Not applied: {why}."))]))
            continue
        await conn.session_update(session_id, update_tool_call(call_id, status="in_progress"))
        try:
            problem = await _apply(conn, session_id, path, edit, fs)
        except OSError as exc:
            problem = f"cannot write {edit.path}: {exc.strerror or exc}"
        if problem is not None:
            await conn.session_update(session_id, update_tool_call(
                call_id, status="failed", content=[tool_content(text_block(problem))]))
            continue
        written.append(edit.path)
        await conn.session_update(session_id, update_tool_call(call_id, status="completed"))
    return written


_TOOL_OUTPUT_CHARS = 4000


async def report_tool(conn: Client, session_id: str, prompt_key: str, tool: ToolActivity) -> None:
    """A tool call of an agent turn as ACP ``tool_call`` (started) and ``tool_call_update`` (ended) updates, with
    its kind, locations and output. A proposed edit is offered for approval after the turn (:func:`offer_edits`)."""
    call_id = f"contenox-tool-{prompt_key}-{tool.id}"
    locations = [ToolCallLocation(path=path, line=line) for path, line in tool.locations]
    if tool.status == "in_progress":
        await conn.session_update(session_id, start_tool_call(call_id, tool.title, kind=tool.kind,
                                                              status="in_progress", locations=locations or None))
        return
    output = tool.output if len(tool.output) <= _TOOL_OUTPUT_CHARS else tool.output[:_TOOL_OUTPUT_CHARS] + "\n[...]"
    await conn.session_update(session_id, update_tool_call(
        call_id, title=tool.title, kind=tool.kind, status=tool.status, locations=locations or None,
        content=[tool_content(text_block(f"```\n{output}\n```"))]))


_COMMAND_OPTIONS = [PermissionOption(option_id="apply", name="Run", kind="allow_once"),
                    PermissionOption(option_id="reject", name="Don't run", kind="reject_once")]
_OUTPUT_BYTES = 64_000
_CHECK_OPTIONS = [PermissionOption(option_id="allow", name="Allow in this workspace", kind="allow_always"),
                  PermissionOption(option_id="deny", name="Don't run it", kind="reject_always")]


class ClientTerminal:
    """An agent turn's commands, run in the ACP client's terminal (``terminal/*``) after
    ``session/request_permission``, the terminal embedded in the command's tool call while it runs. A client
    without the terminal capability runs none (the model is told so)."""

    def __init__(self, conn: Client, session_id: str, prompt_key: str, capabilities: Any, timeout_s: float) -> None:
        self.conn, self.session_id, self.prompt_key = conn, session_id, prompt_key
        self.offered = bool(getattr(capabilities, "terminal", False))
        self.timeout_s = timeout_s

    async def allow_check(self, command: str, cwd: str, scope: str = "") -> bool | None:
        """A verified fix's check command: allowed (remembered by the node for the workspace) or not, asked with
        ``session/request_permission`` (what else the answer covers, ``scope``, in the tool call's content); None
        when the client cancelled the question."""
        response = await self.conn.request_permission(
            session_id=self.session_id, options=_CHECK_OPTIONS,
            tool_call=ToolCallUpdate(tool_call_id=f"contenox-check-consent-{self.prompt_key}",
                                     title=f"Check the proposed change by running `{command}` in a scratch copy"[:160],
                                     kind="execute", status="pending",
                                     content=[tool_content(text_block(f"Allowing it also allows {scope}."))]
                                     if scope else None,
                                     raw_input={"command": command, "cwd": cwd, **({"scope": scope} if scope else {})}))
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            return outcome.option_id == "allow"
        return None

    async def run_command(self, call_id: str, command: str, cwd: str) -> CommandResult:
        if not self.offered:
            return CommandResult(ran=False, reason="the editor offers no terminal to run it in (ACP terminal "
                                                   "capability); tell the user the command instead")
        tool_call_id = f"contenox-tool-{self.prompt_key}-{call_id}"
        title = f"Run {command}"[:120]
        response = await self.conn.request_permission(
            session_id=self.session_id, options=_COMMAND_OPTIONS,
            tool_call=ToolCallUpdate(tool_call_id=tool_call_id, title=title, kind="execute", status="pending",
                                     raw_input={"command": command, "cwd": cwd}))
        outcome = response.outcome
        if not (isinstance(outcome, AllowedOutcome) and outcome.option_id == "apply"):
            return CommandResult(ran=False, reason="the user did not allow it")
        terminal = await self.conn.create_terminal(session_id=self.session_id, command="/bin/sh",
                                                   args=["-c", command], cwd=cwd, output_byte_limit=_OUTPUT_BYTES)
        terminal_id = terminal.terminal_id
        try:
            await self.conn.session_update(self.session_id, update_tool_call(
                tool_call_id, status="in_progress",
                content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]))
            try:
                exited = await asyncio.wait_for(
                    self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id),
                    self.timeout_s)
            except asyncio.CancelledError:  # the turn was stopped: so is its command
                with contextlib.suppress(Exception):
                    await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
                raise
            except TimeoutError:
                await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
                output = await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
                return CommandResult(ran=False, output=output.output,
                                     reason=f"it ran past {self.timeout_s:g} s (tools.max_seconds) and was killed")
            output = await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
        finally:
            with contextlib.suppress(Exception):
                await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        code = exited.exit_code if exited.exit_code is not None else -1
        text = output.output + ("\n[output truncated by the terminal]" if output.truncated else "")
        return CommandResult(ran=True, exit_code=code, output=text)
