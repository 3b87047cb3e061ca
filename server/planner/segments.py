"""The twelve segments of a turn, rendered as text parts that tokenize independently.

Order: system, tools, policy, instructions, repo_map, pins, history, map_delta, diff, terminal,
retrieved, user: what changes less often first, so the diff and a failing run known before the question (and
prefilled with the code anticipated at the user's place) stay cached when the question adds code of its own. The first six form the system message; history holds the thread's earlier turns as
user/assistant messages, each user message exactly as it was sent (the thread is append-only:
what a turn entered never moves or changes, so the next turn's prefill starts where this one
ended); map_delta (definitions changed since the base repo map), diff, terminal, retrieved and user
form the last user message, which becomes the thread's next entry. A rebased thread starts with a summary of its older turns, at the end of the system
message. Chat-template pieces sit at the edges of segments.

Every part is cut where the tokenizer cannot merge across the cut: a part never ends in
whitespace, and a section after the first of a message starts with ``"\\n\\n#"``. So tokenizing the
parts one by one and joining the ids equals tokenizing the rendered chat template as a whole.
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath
from typing import Literal

import msgspec

from contenox.planner.chat_frame import ChatFrame
from contenox.planner.inputs import Chunk
from contenox.planner.prompts import PromptTexts, explain_request

__all__ = [
    "CACHE_CLASS",
    "INVALIDATION",
    "SEGMENT_KINDS",
    "CacheClass",
    "Draft",
    "RenderedSegment",
    "chunk_part",
    "entry_of",
    "entry_parts",
    "history_parts",
    "messages_of",
    "render_segments",
]

SegmentKind = Literal["system", "tools", "policy", "instructions", "repo_map", "pins", "history", "map_delta",
                      "diff", "terminal", "retrieved", "user"]
SEGMENT_KINDS: tuple[SegmentKind, ...] = ("system", "tools", "policy", "instructions", "repo_map", "pins",
                                          "history", "map_delta", "diff", "terminal", "retrieved", "user")
TURN_KINDS = ("map_delta", "diff", "terminal", "retrieved", "user")
"""The segments of the last user message: together they become the thread's entry for this turn."""

CacheClass = Literal["highest", "high", "medium", "low"]
CACHE_CLASS: dict[str, CacheClass] = {
    "system": "highest", "tools": "highest", "policy": "highest", "instructions": "highest",
    "repo_map": "high", "pins": "high", "history": "medium", "map_delta": "medium", "retrieved": "medium",
    "diff": "medium",
    "terminal": "medium", "user": "low",
}
INVALIDATION: dict[str, str] = {
    "system": "system prompt or chat template changes",
    "tools": "tool schemas change",
    "policy": "chain policy changes",
    "instructions": "AGENTS.md / CLAUDE.md / ... edited, added or removed",
    "repo_map": "a base rebuild: the delta outgrows planner.repo_map_delta_tokens, pins or the map budget change",
    "map_delta": "definitions added or removed since the base map, as the thread has not seen them yet",
    "pins": "a pinned file is edited, pinned, unpinned or summarised",
    "history": "append-only: grows by each recorded turn as it was sent; a rebase (older turns summarised) "
               "when the thread outgrows planner.thread_tokens or planner.max_history_turns",
    "retrieved": "the question's code not yet in the thread (chunks already in it are referenced, not repeated)",
    "diff": "working tree or index changes since the thread's last turn (files already shown are not repeated)",
    "terminal": "new terminal or test output",
    "user": "every turn",
}


class Draft(msgspec.Struct, kw_only=True):
    """The contents of one turn after budget fitting (mutable while the budget is fitted)."""

    instructions: list[tuple[str, str]]
    repo_map: str
    pins: list[tuple[str, str]]
    """(path, text or outline shown)"""
    history: list[tuple[tuple[str, ...], str]]
    """(entry parts, answer) of earlier turns kept in full, oldest first: each entry as the parts it was sent
    in, so it tokenizes to the very ids the engine cached (a tokenizer may merge across a part boundary)."""
    summary: list[str]
    """One line per older turn of the thread that a rebase summarised, oldest first."""
    history_lines: list[str]
    """A summary line for each turn in ``history`` (budget fitting summarises the oldest first)."""
    history_chunks: list[tuple[str, ...]] = msgspec.field(default_factory=list)
    """The ids of the chunks each entry of ``history`` entered (aligned with it; empty when unknown): what a
    chunk ``referenced`` relies on to be in the prompt."""
    map_delta: str
    """Definitions changed since the base map that the thread has not seen yet."""
    retrieved: list[Chunk]
    """Chunks this turn enters into the thread, best first."""
    calls: str = ""
    """The calls the definitions the question names make, read from the source (its own section before it)."""
    referenced: list[Chunk]
    """Chunks relevant to this turn that the thread already holds (named, not repeated)."""
    diff: str
    terminal: str
    selection: str
    user: str
    text_only: bool = False
    """The tool check answered no: the ``text_only`` line follows the question."""
    explain: bool = False
    """The question only asks how code works, where it is, or yes or no: the explain format
    (:func:`~contenox.planner.prompts.explain_request`) follows it instead of the answer format."""
    notes: dict[str, list[str]] = msgspec.field(default_factory=dict)
    """What budget fitting did, by segment kind."""

    def note(self, kind: str, text: str) -> None:
        self.notes.setdefault(kind, []).append(text)


class RenderedSegment(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    parts: tuple[str, ...]
    """Tokenized one by one; their ids joined are the segment's ids."""
    items: tuple[tuple[str, str], ...] = ()
    """(name, text) of the things inside (pinned paths, instruction files), to name what changed."""


def _section(first: bool, text: str) -> str:
    return text if first else "\n\n" + text


@functools.lru_cache(maxsize=1024)
def _fence(text: str, lang: str = "") -> str:
    body = text.rstrip()
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body}\n{fence}"


_LANGS = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
          ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust", ".java": "java", ".c": "c",
          ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cxx": "cpp"}


def fenced_file(path: str, text: str) -> str:
    """A file's text fenced for the prompt, with the language its suffix names (a fence inside is kept whole)."""
    return _fence(text, _LANGS.get(PurePosixPath(path).suffix, ""))


def chunk_part(chunk: Chunk) -> str:
    """A retrieved chunk as it goes into the prompt: its location and name, then its code, fenced."""
    lang = _LANGS.get(PurePosixPath(chunk.path).suffix, "")
    return f"\n\n## {chunk.id} ({chunk.name})\n{_fence(chunk.text, lang)}"


def _retrieved_parts(first: bool, draft: Draft) -> tuple[str, ...]:
    parts: list[str] = []
    if draft.retrieved:
        parts.append(_section(first, "# Code for this question (retrieved from the workspace)"))
        parts += [chunk_part(chunk) for chunk in draft.retrieved]
        first = False
    if draft.referenced:
        names = "".join(f"\n- {c.id} ({c.name})" for c in draft.referenced)
        parts.append(_section(first, "# Also relevant, shown earlier in this thread" + names))
    return tuple(parts)


def entry_parts(rendered: list[RenderedSegment]) -> tuple[str, ...]:
    """The last user message's parts: what this turn enters into the thread, part for part."""
    return tuple(p for seg in rendered if seg.kind in TURN_KINDS
                 for p in (seg.parts[:-1] if seg.kind == "user" else seg.parts))


def entry_of(rendered: list[RenderedSegment]) -> str:
    """The last user message's content, byte for byte."""
    return "".join(entry_parts(rendered))


def history_parts(frame: ChatFrame, summary: list[str],
                  history: list[tuple[tuple[str, ...], str]]) -> tuple[str, ...]:
    """The history segment: the summary of a rebased thread's older turns (still in the system message),
    then each kept turn's entry and answer as user / assistant messages."""
    parts: list[str] = []
    if summary:
        parts.append("\n\n# Earlier in this thread (summarised)" + "".join(f"\n- {line}" for line in summary))
    parts.append(frame.system_to_user)
    for asked, answered in history:
        parts += [*_entry(asked), frame.user_to_assistant, answered.strip(), frame.assistant_to_user]
    return tuple(parts)


def _entry(parts: tuple[str, ...]) -> list[str]:
    """An entry's parts with the whole stripped at its ends (as a message's content is)."""
    out = [p for p in parts if p]
    if out:
        out[0] = out[0].lstrip()
        out[-1] = out[-1].rstrip()
    return [p for p in out if p]


def render_segments(frame: ChatFrame, prompts: PromptTexts, draft: Draft, *, tools: str) -> list[RenderedSegment]:
    """The segments of ``draft``; ``tools``: the tool schemas as the model's template renders them, only for a
    model certified to call them and a node that runs the calls (else empty: no turn advertises tools that
    nothing executes)."""
    segs: list[RenderedSegment] = [
        RenderedSegment(kind="system", parts=(frame.open_system, prompts.system)),
        RenderedSegment(kind="tools", parts=(("\n\n" + prompts.tool_policy, tools) if prompts.tool_policy else (tools,))
                        if tools else ()),
        RenderedSegment(kind="policy", parts=("\n\n# Policy\n" + prompts.policy,)),
    ]
    instructions = [f"\n\n## {path}\n{text.strip()}" for path, text in draft.instructions if text.strip()]
    segs.append(RenderedSegment(
        kind="instructions",
        parts=(("\n\n# Repository instructions" + "".join(instructions),) if instructions else ()),
        items=tuple(draft.instructions)))
    repo_map = draft.repo_map.strip()
    segs.append(RenderedSegment(kind="repo_map", parts=(("\n\n# Repository map\n" + _fence(repo_map),)
                                                         if repo_map else ())))
    pins = tuple(f"\n\n## {path}\n{_fence(text)}" for path, text in draft.pins)
    segs.append(RenderedSegment(kind="pins", parts=(("\n\n# Pinned files", *pins) if pins else ()),
                                items=tuple(draft.pins)))
    segs.append(RenderedSegment(kind="history", parts=history_parts(frame, draft.summary, draft.history)))
    delta = draft.map_delta.strip("\n")
    segs.append(RenderedSegment(kind="map_delta", parts=(
        "# Repository map changes since the map above\n" + _fence(delta),) if delta.strip() else ()))
    first = not delta.strip()
    diff = draft.diff.strip("\n")
    if diff.strip():
        segs.append(RenderedSegment(kind="diff", parts=(_section(first, "# Current diff\n" + _fence(diff, "diff")),)))
        first = False
    else:
        segs.append(RenderedSegment(kind="diff", parts=()))
    terminal = draft.terminal.strip("\n")
    if terminal.strip():
        segs.append(RenderedSegment(kind="terminal",
                                    parts=(_section(first, "# Terminal output\n" + _fence(terminal)),)))
        first = False
    else:
        segs.append(RenderedSegment(kind="terminal", parts=()))
    retrieved = _retrieved_parts(first, draft)
    segs.append(RenderedSegment(kind="retrieved", parts=retrieved,
                                items=tuple((c.id, c.text) for c in draft.retrieved)))
    first = first and not retrieved
    user: list[str] = []
    selection = draft.selection.strip("\n")
    if selection.strip():
        user.append(_section(first, "# Selected code\n" + _fence(selection)))
        first = False
    calls = draft.calls.strip("\n")
    if calls.strip():
        user.append(_section(first, "# Calls from the code the question names (read from the source, not run; "
                                    "`->` is a call, indented under its caller)\n" + _fence(calls)))
        first = False
    question = draft.user.strip()
    if question:
        user.append(_section(first, question))
        if draft.explain:
            user.append("\n\n" + explain_request())
        elif prompts.answer:
            user.append("\n\n" + prompts.answer)
        if draft.text_only and prompts.text_only:
            user.append("\n\n" + prompts.text_only)
    segs.append(RenderedSegment(kind="user", parts=(*user, frame.generation)))
    return segs


def messages_of(prompts: PromptTexts, draft: Draft, rendered: list[RenderedSegment]) -> list[dict[str, str]]:
    """The chat messages whose template rendering equals the joined segments (for checks)."""
    segs = {s.kind: s for s in rendered}
    system = prompts.system + "".join(p for k in SEGMENT_KINDS[1:6] for p in segs[k].parts)
    system += "".join(segs["history"].parts[:1]) if draft.summary else ""
    messages = [{"role": "system", "content": system}]
    for asked, answered in draft.history:
        messages += [{"role": "user", "content": "".join(asked).strip()},
                     {"role": "assistant", "content": answered.strip()}]
    messages.append({"role": "user", "content": entry_of(rendered)})
    return messages
