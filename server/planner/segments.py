"""The ten segments of a turn, rendered as text parts that tokenize independently.

Order: system, tools, policy, instructions, repo_map, pins, history, diff, terminal, user. The
first six form the system message, history holds earlier turns of the thread as user/assistant
messages, and diff, terminal and user form the last user message. Chat-template pieces sit at the
edges of segments.

Every part is cut where the tokenizer cannot merge across the cut: a part never ends in
whitespace, and a section after the first of a message starts with ``"\\n\\n#"``. So tokenizing the
parts one by one and joining the ids equals tokenizing the rendered chat template as a whole.
"""

from __future__ import annotations

import functools
from typing import Literal

import msgspec

from contenox.planner.chat_frame import ChatFrame
from contenox.planner.prompts import PromptTexts

__all__ = [
    "CACHE_CLASS",
    "INVALIDATION",
    "SEGMENT_KINDS",
    "CacheClass",
    "Draft",
    "RenderedSegment",
    "messages_of",
    "render_segments",
]

SegmentKind = Literal["system", "tools", "policy", "instructions", "repo_map", "pins", "history", "diff",
                      "terminal", "user"]
SEGMENT_KINDS: tuple[SegmentKind, ...] = ("system", "tools", "policy", "instructions", "repo_map", "pins",
                                          "history", "diff", "terminal", "user")

CacheClass = Literal["highest", "high", "medium", "low"]
CACHE_CLASS: dict[str, CacheClass] = {
    "system": "highest", "tools": "highest", "policy": "highest", "instructions": "highest",
    "repo_map": "high", "pins": "high", "history": "low", "diff": "medium", "terminal": "medium", "user": "low",
}
INVALIDATION: dict[str, str] = {
    "system": "system prompt or chat template changes",
    "tools": "tool schemas change",
    "policy": "chain policy changes",
    "instructions": "AGENTS.md / CLAUDE.md / ... edited, added or removed",
    "repo_map": "indexed files change (symbols, ranks) or the repo-map budget shrinks",
    "pins": "a pinned file is edited, pinned, unpinned or summarised",
    "history": "append-only: grows by each recorded turn; the window jumps every max_history_turns/2",
    "diff": "working tree or index changes",
    "terminal": "new terminal or test output",
    "user": "every turn",
}


class Draft(msgspec.Struct, kw_only=True):
    """The contents of one turn after budget fitting (mutable while the budget is fitted)."""

    instructions: list[tuple[str, str]]
    repo_map: str
    pins: list[tuple[str, str]]
    """(path, text or outline shown)"""
    history: list[tuple[str, str]]
    """(user, answer) of earlier turns, oldest first"""
    diff: str
    terminal: str
    user: str
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


def render_segments(frame: ChatFrame, prompts: PromptTexts, draft: Draft) -> list[RenderedSegment]:
    segs: list[RenderedSegment] = [
        RenderedSegment(kind="system", parts=(frame.open_system, prompts.system)),
        RenderedSegment(kind="tools", parts=("\n\n# Tools\nCall a tool by answering with one JSON object "
                                             '{"tool": name, "arguments": {...}}.\n' + prompts.tools,)),
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
    history: list[str] = [frame.system_to_user]
    for asked, answered in draft.history:
        history += [asked.strip(), frame.user_to_assistant, answered.strip(), frame.assistant_to_user]
    segs.append(RenderedSegment(kind="history", parts=tuple(history)))
    first = True
    diff = draft.diff.strip("\n")
    if diff.strip():
        segs.append(RenderedSegment(kind="diff", parts=("# Current diff\n" + _fence(diff, "diff"),)))
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
    user = draft.user.strip()
    parts = (_section(first, user), frame.generation) if user else (frame.generation,)
    segs.append(RenderedSegment(kind="user", parts=parts))
    return segs


def messages_of(prompts: PromptTexts, draft: Draft, rendered: list[RenderedSegment]) -> list[dict[str, str]]:
    """The chat messages whose template rendering equals the joined segments (for checks)."""
    segs = {s.kind: s for s in rendered}
    system = prompts.system + "".join(p for k in SEGMENT_KINDS[1:6] for p in segs[k].parts)
    messages = [{"role": "system", "content": system}]
    for asked, answered in draft.history:
        messages += [{"role": "user", "content": asked.strip()}, {"role": "assistant", "content": answered.strip()}]
    last = "".join(segs["diff"].parts + segs["terminal"].parts + segs["user"].parts[:-1])
    messages.append({"role": "user", "content": last})
    return messages
