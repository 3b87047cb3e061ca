"""What the planner is handed for one turn, and how a turn's inputs are gathered from a workspace.

:func:`build_inputs` and :func:`change_reasons` are the one way a turn is assembled: the node calls
them for every turn and the benchmark's replay calls them to build turns the node's way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from contenox.config import PlannerConfig
from contenox.planner.manifest import AnticipationRecord
from contenox.planner.map_base import MapBase, MapChange

if TYPE_CHECKING:
    from contenox.workspace import ChangeEvent, Workspace

__all__ = ["Chunk", "Pin", "PlannerInputs", "as_pin", "build_inputs", "change_reasons", "join_pin", "mention_section", "pin_text",
           "retrieve", "split_pin"]


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    """A pinned file: its text, and optionally its outline (used when the budget is short)."""

    path: str
    """Relative to the workspace root."""
    text: str
    outline: str = ""
    """Signatures only (from the workspace's symbol index); empty: the planner derives a rough one."""


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    """A piece of code retrieved for the question (from ``Workspace.retrieve``), with why it was chosen."""

    id: str
    """``path:start-end``; with ``text`` it identifies the chunk in the thread."""
    path: str
    start_line: int
    end_line: int
    name: str
    text: str
    """The code as it goes into the prompt (the enclosing class line, then the source lines)."""
    reasons: tuple[str, ...] = ()


class PlannerInputs(msgspec.Struct, frozen=True, kw_only=True):
    user: str
    """This turn's question (the user's words)."""
    prompt: str = ""
    """The user's own words, as a replayed thread shows them (empty: ``user``)."""
    selection: str = ""
    """Selected code or attached context the question is about (its own section before the question)."""
    retrieved: Sequence[Chunk] = ()
    """Code chosen for the question, best first; chunks already in the thread are referenced, not repeated."""
    calls: str = ""
    """The calls the definitions a how-does-it-work question names make, read from the source (``Workspace.
    call_tree``): its own section before the question; empty for other questions."""
    notes: tuple[str, ...] = ()
    """Turn-level facts from gathering the inputs (what retrieval left out, a rebuilt base map), for explain."""
    map_changes: Sequence[MapChange] = ()
    """Definitions added / removed since the base repo map (``repo_map``), per file."""
    map_label: str = ""
    """``base @abc1234 + 3 changed symbols`` (explain-context names the map so)."""
    workspace: str = ""
    """Absolute workspace root (shown by explain-context)."""
    instructions: Sequence[tuple[str, str]] = ()
    """(relative path, text) of AGENTS.md, CLAUDE.md, ... as ``Workspace.instructions()`` returns them."""
    repo_map: str = ""
    repo_map_at: Callable[[int], str] | None = None
    """Rebuilds the repo map for a smaller token budget (``lambda n: ws.repo_map(n, count)``); None:
    the planner cuts ``repo_map`` at line ends, keeping its top (the highest-ranked entries)."""
    pins: Sequence[Pin | tuple[str, str]] = ()
    """Pinned files, as :class:`Pin` or ``(path, text)``."""
    history: Sequence[tuple[str, str]] | None = None
    """(user, answer) of earlier turns of this thread, oldest first, when the caller keeps them; None:
    the planner's own record of the thread (what ``record()`` persisted). Either way the planner
    windows it (at most ``max_history_turns``, moving in jumps so the history stays append-only)."""
    diff: str = ""
    """Working tree + index vs HEAD, unified diff."""
    terminal: str = ""
    """Terminal or test output the user attached; when short of budget its tail is kept."""
    thread: str = "main"
    """Conversation thread inside the workspace (an ACP session, the chat panel, the CLI)."""
    change_reasons: dict[str, str] = msgspec.field(default_factory=dict)
    """Optional words for why a segment changed, by segment kind (``{"repo_map": "repo map changed: 3
    files"}`` from ``ChangeEvent``); without them the planner names the change itself."""
    anticipation: AnticipationRecord | None = None
    """How ``retrieved`` was laid out from context anticipated at the user's place (``layout_retrieved``)."""
    text_only: bool = False
    """A tool-enabled turn whose tool check answered no: the question is followed by the ``text_only`` line."""
    text_only_why: str = ""
    """Why it is answered in text (the check's answers, or what the request asks that the node does not do)."""


def as_pin(pin: Pin | tuple[str, str]) -> Pin:
    return pin if isinstance(pin, Pin) else Pin(path=pin[0], text=pin[1])


def change_reasons(events: Sequence[ChangeEvent]) -> dict[str, str]:
    """Why each planner segment changed since the last turn, in words, from the workspace's events."""
    paths: dict[str, list[str]] = {}
    for event in events:
        for kind in event.segments:
            paths.setdefault(str(kind), []).append(f"{event.kind} {event.path}".strip())
    reasons: dict[str, str] = {}
    for segment, items in paths.items():
        shown = ", ".join(items[:3]) + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
        reasons[segment] = f"{segment.replace('_', ' ')} changed: {shown}"
    return reasons


def retrieve(workspace: Workspace, config: PlannerConfig, count: Callable[[str], int], *, prompt: str,
             selection: str, diff: str, terminal: str, open_file: str | None = None,
             selection_lines: tuple[int, int] | None = None) -> tuple[list[Chunk], tuple[str, ...]]:
    """The code the question is about, fitted to ``planner.retrieval_tokens``, and what was left out."""
    from contenox.workspace import RetrievalQuery

    if config.retrieval_tokens <= 0:
        return [], ("retrieval is off (planner.retrieval_tokens = 0)",)
    query = RetrievalQuery(text=prompt, selection=selection, open_file=open_file,
                           selection_lines=selection_lines, diff=diff, terminal=terminal)
    found = workspace.retrieve(query, config.retrieval_tokens, count)
    chunks = [Chunk(id=c.id, path=c.path, start_line=c.start_line, end_line=c.end_line, name=c.name,
                    text=(f"{c.header}\n    ...\n" if c.header else "") + c.text.strip("\n"), reasons=c.reasons)
              for c in found.chunks]
    dropped = [f"retrieval left out {d}" for d in found.dropped[:3]]
    if len(found.dropped) > 3:
        dropped.append(f"retrieval left out {len(found.dropped) - 3} more candidate(s) over its budget")
    return chunks, tuple(dropped)


_RANGE_PIN = re.compile(r"^(?P<path>.+):(?P<start>\d+)-(?P<end>\d+)$")
_OUTLINE_PIN = ":outline"


def split_pin(spec: str) -> tuple[str, tuple[int, int] | None, bool]:
    """A pin as the user wrote it: ``path`` (the whole file), ``path:START-END`` (those 1-based lines) or
    ``path:outline`` (its definitions only). (path, line range or None, outline only)."""
    if spec.endswith(_OUTLINE_PIN):
        return spec[: -len(_OUTLINE_PIN)], None, True
    found = _RANGE_PIN.match(spec)
    if found:
        start, end = int(found["start"]), int(found["end"])
        if 1 <= start <= end:
            return found["path"], (start, end), False
    return spec, None, False


def join_pin(path: str, lines: tuple[int, int] | None, outline: bool) -> str:
    """The pin as it is stored: :func:`split_pin`'s inverse."""
    return path + (f":{lines[0]}-{lines[1]}" if lines else _OUTLINE_PIN if outline else "")


def pin_text(workspace: Workspace, spec: str) -> str:
    """What a pin puts in every turn: the file, its line range (with where it is), or its outline."""
    from contenox.planner.budget import rough_outline  # (it imports this module's types)

    path, lines, outline = split_pin(spec)
    text = workspace.read_text(path)
    if outline:
        return "# outline (pinned as outline)\n" + (rough_outline(text).strip() or "(no definitions)")
    if lines is not None:
        all_lines = text.splitlines()
        start, end = lines[0], min(lines[1], len(all_lines))
        return f"# lines {start}-{end} of {len(all_lines)}\n" + "\n".join(all_lines[start - 1:end])
    return text


def mention_section(workspace: Workspace, paths: Sequence[str], count: Callable[[str], int],
                    budget: int) -> tuple[str, tuple[str, ...]]:
    """Files mentioned for this turn as a section of its message (turn material: entered into the thread once,
    so the next turn's prefix keeps it cached, unlike a pin that comes and goes): each whole while they fit in
    ``budget`` tokens together, else its outline. The section and a note for each file."""
    from contenox.planner.budget import rough_outline  # (both import this module's types)
    from contenox.planner.segments import fenced_file

    parts: list[str] = []
    notes: list[str] = []
    used = 0
    for rel in paths:
        if rel.endswith("/"):  # a folder: the definitions of its indexed files
            _, signatures = workspace.signatures()
            inside = sorted(path for path in signatures if path.startswith(rel) or rel == "./")
            outline = "\n".join(f"{path}:\n" + "\n".join(f"  {line}" for line in signatures[path])
                                for path in inside) or "(no indexed definitions)"
            whole = f"## {rel} (folder outline: {len(inside)} file(s))\n{fenced_file('', outline)}"
            short = f"## {rel} (folder: {len(inside)} file(s); outline over the budget)\n" + "\n".join(inside[:50])
            said = ("its outline in this turn's message", "file list only", "as an outline")
        else:
            text = workspace.read_text(rel)
            whole = f"## {rel}\n{fenced_file(rel, text)}"
            short = f"## {rel} (outline only)\n{fenced_file(rel, rough_outline(text).strip() or '(no definitions)')}"
            said = ("in this turn's message", "outline only", "whole")
        size = count(whole)
        if used + size <= budget:
            block, note = whole, f"mentioned {rel}: {said[0]} ({size} tokens), kept in the thread"
        else:
            block, note = short, (f"mentioned {rel}: {said[1]} ({size} tokens {said[2]}; the turn's mentions may "
                                    f"use {budget}, planner.mention_tokens)")
            size = count(block)
        parts.append(block)
        notes.append(note)
        used += size
    if not parts:
        return "", ()
    return "# Files mentioned with the question\n\n" + "\n\n".join(parts), tuple(notes)


def build_inputs(config: PlannerConfig, workspace: Workspace, count: Callable[[str], int], *, root: Path,
                 prompt: str, selection: str | None, pins: Sequence[str], terminal: str, thread: str,
                 reasons: dict[str, str], open_file: str | None = None,
                 selection_lines: tuple[int, int] | None = None, map_base: MapBase | None = None,
                 mentions: Sequence[str] = ()) -> PlannerInputs:
    """The planner's inputs for one turn (blocking: reads files and git state).

    The repo map is ranked by the pinned files only, never by the prompt's words: it must stay
    byte-identical from turn to turn so the prefix cache keeps it: with ``map_base`` (the workspace's) the map
    is that base and the definitions changed since it come as a delta. The question's own code comes from
    retrieval instead (its own segment, entered into the thread once). ``count`` is the model's token
    counter.
    """
    pinned = tuple(dict.fromkeys(split_pin(spec)[0] for spec in pins))  # the files, for ranking the map
    diff = workspace.diff_text()

    def repo_map_at(budget: int) -> str:
        return workspace.repo_map(budget, count, pinned=pinned)

    chunks, notes = retrieve(workspace, config, count, prompt=prompt, selection=selection or "", diff=diff,
                             terminal=terminal, open_file=open_file, selection_lines=selection_lines)
    notes = (*workspace.index_notes(), *notes)
    from contenox.workspace import RetrievalQuery

    calls, roots = workspace.call_tree(RetrievalQuery(text=prompt, terminal=terminal), config.call_tree_lines)
    if calls:
        notes = (*notes, f"calls: the calls {', '.join(roots)} make{'s' if len(roots) == 1 else ''}, read from the "
                         f"source ({calls.count(chr(10)) + 1} lines, at most planner.call_tree_lines = "
                         f"{config.call_tree_lines}), before the question")
    mentioned, mention_notes = mention_section(workspace, mentions, count, config.mention_tokens)
    if mentioned:
        selection = f"{selection}\n\n{mentioned}" if selection else mentioned
        notes = (*notes, *mention_notes)
    changes: list[MapChange] = []
    label = ""
    if map_base is not None:
        head, signatures = workspace.signatures()
        repo_map, changes, map_notes = map_base.current(
            (pinned, config.repo_map_tokens), head, signatures, lambda: repo_map_at(config.repo_map_tokens), count,
            config.repo_map_delta_tokens)
        notes = (*notes, *map_notes)
        label = map_base.label(changes)
    else:
        repo_map = repo_map_at(config.repo_map_tokens)
    return PlannerInputs(
        user=prompt,
        prompt=prompt,
        selection=selection or "",
        retrieved=chunks,
        calls=calls,
        notes=notes,
        map_changes=changes,
        map_label=label,
        workspace=str(root),
        instructions=workspace.instructions(),
        repo_map=repo_map,
        repo_map_at=repo_map_at,
        pins=[(spec, pin_text(workspace, spec)) for spec in pins],
        diff=diff,
        terminal=terminal,
        thread=thread,
        change_reasons=reasons,
    )
