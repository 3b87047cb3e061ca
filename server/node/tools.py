"""The tools of an agent turn, run by the node against the workspace: ``read_file``, ``search``,
``find_symbol``, ``list_files`` and ``propose_edit`` (``run_command`` runs in the client's terminal, through the
adapter's :class:`~contenox.node.contract.CommandHost`: see :mod:`contenox.node.agent`).

Every call ends in a :class:`ToolResult`: the text the model is given (a structured tool error for a path outside
the workspace, a missing file, a bad pattern or a diff that does not apply, never an exception), what the user is
shown (kind, title, locations, output) and, for ``propose_edit``, the edit the editor offers for review: a
proposed diff is checked with ``git apply --check`` against the file's current text (unsaved buffers first) and
never written by the node itself. Results over ``max_chars`` are cut, and the cut is said in the result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from contenox.answer.edits import ProposedEdit, first_changed_line, unified_diff
from contenox.answer.toolcalls import ToolCall
from contenox.answer.udiff import apply_unified_diff
from contenox.errors import ContenoxError
from contenox.workspace import Workspace

__all__ = ["ToolKind", "ToolResult", "cut", "kind_of", "run_tool"]

ToolKind = Literal["read", "search", "edit", "execute", "other"]
_KINDS: dict[str, ToolKind] = {"read_file": "read", "list_files": "read", "search": "search",
                               "find_symbol": "search", "propose_edit": "edit", "run_command": "execute"}


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    kind: ToolKind
    title: str
    """One line for the user: what the call did."""
    ok: bool
    text: str
    """What the model is given (the tool's output, or ``error: ...``)."""
    locations: tuple[tuple[str, int | None], ...] = ()
    """(workspace-relative path, 1-based line or None) the call touched."""
    edit: ProposedEdit | None = None
    unapplied: bool = False
    """A ``propose_edit`` whose diff does not apply or changes nothing (the node may draw it again, held to the
    file's lines: :meth:`contenox.node.Node._agent_steps`)."""


def kind_of(name: str) -> ToolKind:
    """What a tool does, for the user (ACP's tool kinds)."""
    return _KINDS.get(name, "other")


def cut(text: str, max_chars: int) -> str:
    """``text`` within ``max_chars`` (whole lines), saying what was cut."""
    if len(text) <= max_chars:
        return text
    kept = text[:max_chars].rsplit("\n", 1)[0]
    return f"{kept}\n[... cut: the result has {len(text):,} characters, {max_chars:,} shown]"


def _error(call: ToolCall, title: str, message: str, locations: tuple[tuple[str, int | None], ...] = (),
           *, unapplied: bool = False) -> ToolResult:
    return ToolResult(name=call.name, kind=_KINDS.get(call.name, "other"), title=title, ok=False,
                      text=f"error: {message}", locations=locations, unapplied=unapplied)


def _int(arguments: dict[str, Any], key: str) -> int | None:
    value = arguments.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def run_tool(call: ToolCall, workspace: Workspace, *, max_chars: int,
             pending: Mapping[str, ProposedEdit] | None = None) -> ToolResult:
    """Run one parsed (schema-valid) call; blocking (the node runs it off the event loop). ``pending``: the
    turn's proposed edits so far, by path (a second ``propose_edit`` of a file builds on or replaces the first)."""
    try:
        if call.name == "read_file":
            return _read_file(call, workspace, max_chars)
        if call.name == "search":
            return _search(call, workspace, max_chars)
        if call.name == "find_symbol":
            return _find_symbol(call, workspace, max_chars)
        if call.name == "list_files":
            return _list_files(call, workspace, max_chars)
        if call.name == "propose_edit":
            return _propose_edit(call, workspace, (pending or {}).get(workspace.relpath(str(call.arguments["path"]))))
    except ContenoxError as exc:
        return _error(call, f"{call.name} failed", exc.message)
    return _error(call, f"unknown tool {call.name}", f"no tool named {call.name!r}")


def _read_file(call: ToolCall, workspace: Workspace, max_chars: int) -> ToolResult:
    path = str(call.arguments["path"])
    rel = workspace.relpath(path)
    text = workspace.read_text(rel)
    lines = text.splitlines()
    if not lines:
        return ToolResult(name=call.name, kind="read", title=f"Read {rel} (empty)", ok=True, text=f"{rel} is empty",
                          locations=((rel, None),))
    start, end = _int(call.arguments, "start_line"), _int(call.arguments, "end_line")
    first = max(1, start or 1)
    last = min(len(lines), end or len(lines))
    if first > max(1, len(lines)) or last < first:
        return _error(call, f"Read {rel}", f"{rel} has {len(lines)} lines; lines {first}-{last} are not in it",
                      ((rel, None),))
    numbered = "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(first, last + 1))
    span = "" if (first, last) == (1, len(lines)) else f" (lines {first}-{last})"
    return ToolResult(name=call.name, kind="read", title=f"Read {rel}{span}", ok=True,
                      text=cut(f"{rel}{span}, {len(lines)} lines:\n{numbered}", max_chars),
                      locations=((rel, first if start else None),))


def _search(call: ToolCall, workspace: Workspace, max_chars: int) -> ToolResult:
    pattern = str(call.arguments["pattern"])
    limit = max(1, min(200, _int(call.arguments, "limit") or 100))
    try:
        re.compile(pattern)
    except re.error as exc:
        return _error(call, f"Search {pattern!r}", f"not a regular expression: {exc}")
    hits = workspace.search(pattern, regex=True, limit=limit)
    body = "\n".join(f"{h.path}:{h.line}: {h.text.strip()}" for h in hits) or "no matches"
    more = f"\n(stopped at {limit} matches)" if len(hits) >= limit else ""
    return ToolResult(name=call.name, kind="search", title=f"Search {pattern!r}: {len(hits)} match(es)", ok=True,
                      text=cut(body + more, max_chars), locations=tuple((h.path, h.line) for h in hits[:20]))


def _find_symbol(call: ToolCall, workspace: Workspace, max_chars: int) -> ToolResult:
    name = str(call.arguments["name"])
    info = workspace.symbol_info(name.rsplit(".", 1)[-1])
    if info is None or not info.definitions:
        return ToolResult(name=call.name, kind="search", title=f"Find {name}: not defined here", ok=True,
                          text=f"{name} is not defined in the workspace")
    defs = "\n".join(f"{d.path}:{d.line}-{d.end_line}: {d.text}" for d in info.definitions)
    refs = ", ".join(info.referenced_by[:30]) or "none"
    return ToolResult(name=call.name, kind="search", title=f"Find {name}: {len(info.definitions)} definition(s)",
                      ok=True, text=cut(f"defined at:\n{defs}\nreferenced by: {refs}", max_chars),
                      locations=tuple((d.path, d.line) for d in info.definitions))


def _list_files(call: ToolCall, workspace: Workspace, max_chars: int) -> ToolResult:
    folder = str(call.arguments.get("path") or "").strip().strip("/")
    if folder in ("", "."):
        folder = ""
    else:
        folder = workspace.relpath(folder)
    prefix = f"{folder}/" if folder else ""
    paths = [p for p in workspace.indexed_paths() if p.startswith(prefix)]
    if folder and not paths:
        return _error(call, f"List {folder}/", f"no indexed files under {folder}/")
    return ToolResult(name=call.name, kind="read", title=f"List {prefix or './'}: {len(paths)} file(s)", ok=True,
                      text=cut("\n".join(paths) or "no files", max_chars), locations=((folder or ".", None),))


def _propose_edit(call: ToolCall, workspace: Workspace, earlier: ProposedEdit | None) -> ToolResult:
    """The diff applied to the file; when the turn already proposed an edit of it (``earlier``), to the file as
    that edit leaves it first (a further change: the two compose into one edit), else to the file as it is (a
    new version of the change, which replaces the earlier one). Either way the turn offers one edit per file,
    from the file as it is."""
    rel = workspace.relpath(str(call.arguments["path"]))
    diff = str(call.arguments["diff"])
    if not diff.endswith("\n"):
        diff += "\n"
    try:
        old: str | None = workspace.read_text(rel)
    except ContenoxError:
        old = None  # a new file (the diff must create it)
    new: str | None = None
    how = ""
    if earlier is not None:
        new, _ = apply_unified_diff(rel, earlier.new_text, diff)
        how = " on top of the earlier edit" if new is not None else ""
    if new is None:
        new, problem = apply_unified_diff(rel, old, diff)
        if new is None:
            return _error(call, f"Edit {rel}: the diff does not apply", problem, ((rel, None),), unapplied=True)
        how = " (replaces the earlier edit of it)" if earlier is not None else ""
    if new == old:
        return _error(call, f"Edit {rel}: no change", "the diff changes nothing", ((rel, None),), unapplied=True)
    unified = unified_diff(rel, old, new)
    edit = ProposedEdit(path=rel, old_text=old, new_text=new, diff=unified, blocks=1)
    return ToolResult(name=call.name, kind="edit", title=f"Edit {rel}{how}", ok=True,
                      text=f"proposed: the diff applies to {rel}{how}; the user reviews it (applied only if approved)",
                      locations=((rel, first_changed_line(edit)),), edit=edit)


