"""Inline completions on the node: the FIM prompt with the workspace's cached context block, served as the
engine's most urgent request class, cut where the editor expects, with a cache of recent results.

A new request from the same client for the same file cancels the one still running (each keystroke makes
the previous suggestion stale). Typing what the suggestion said, or deleting back to where it was made, is
answered from the recent results without the model.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from contenox.answer.fim_trim import trim_completion
from contenox.config import CompletionConfig
from contenox.errors import ContenoxError
from contenox.node.contract import CompletionInfo, CompletionOutcome, CompletionRequest
from contenox.planner.fim import (
    ContextEntry,
    FimSupport,
    FimWindow,
    WorkingSet,
    build_fim_prompt,
    cursor_window,
    fim_support,
    identifiers_near,
)

if TYPE_CHECKING:
    from contenox.node.workspaces import WorkspaceState
    from contenox.runtime_ov import EngineLike, RequestHandle
    from contenox.workspace import Workspace

__all__ = ["Completer", "CompletionState"]

_USES = 8
"""Definitions of names near the cursor taken into the context block, nearest first."""
_RECENT = 6
"""Places completed at recently (in other files) taken into the context block."""
_CHUNK_LINES = 40
_RESULTS = 32


class _Result:
    __slots__ = ("path", "prefix", "suffix", "text")

    def __init__(self, path: str, prefix: str, suffix: str, text: str) -> None:
        self.path, self.prefix, self.suffix, self.text = path, prefix, suffix, text


class CompletionState:
    """One workspace's completion state (``WorkspaceState.completions``): its context block, recent places and
    recent results, for the tokenizer it was counted with (another model's engine starts it afresh)."""

    def __init__(self, config: CompletionConfig, tokenizer: object, count_tokens: Callable[[str], int]) -> None:
        self.tokenizer = tokenizer
        self.working_set = WorkingSet(config.context_tokens, count_tokens)
        self.recent_places: deque[tuple[str, int]] = deque(maxlen=_RECENT)
        self.results: deque[_Result] = deque(maxlen=_RESULTS)

    def lookup(self, path: str, prefix: str, suffix: str) -> str | None:
        """A recent suggestion still valid here: made at this prefix, or at a shorter one whose suggestion
        starts with what was typed since (the rest of it is returned)."""
        for result in reversed(self.results):
            if result.path != path or result.suffix != suffix or not prefix.startswith(result.prefix):
                continue
            typed = prefix[len(result.prefix):]
            if result.text.startswith(typed) and len(result.text) > len(typed):
                return result.text[len(typed):]
        return None

    def remember(self, path: str, prefix: str, suffix: str, text: str) -> None:
        if text:
            self.results.append(_Result(path, prefix, suffix, text))

    def place(self, path: str, line: int) -> None:
        if (path, line) in self.recent_places:
            return
        self.recent_places.append((path, line))


def _entry(workspace: Workspace, path: str, line: int, why: str) -> ContextEntry | None:
    chunk = workspace.chunk_at(path, line + 1)
    if chunk is None:
        return None
    lines = chunk.text.split("\n")
    text = "\n".join(lines[:_CHUNK_LINES]) + ("\n..." if len(lines) > _CHUNK_LINES else "")
    if chunk.header and not text.lstrip().startswith(chunk.header.strip()):
        text = f"{chunk.header}\n{text}"
    return ContextEntry(path=chunk.path, start_line=chunk.start_line, text=text, why=why)


def _definition(workspace: Workspace, path: str, line: int, end_line: int, why: str) -> ContextEntry | None:
    """A definition's own lines (1-based, inclusive), the first :data:`_CHUNK_LINES` of them."""
    try:
        lines = workspace.read_text(path).split("\n")[line - 1:end_line]
    except ContenoxError:
        return None
    text = "\n".join(lines[:_CHUNK_LINES]) + ("\n..." if len(lines) > _CHUNK_LINES else "")
    return ContextEntry(path=path, start_line=line, text=text, why=why) if text.strip() else None


def gather_context(workspace: Workspace, rel: str, window: FimWindow,
                   recent: list[tuple[str, int]]) -> list[ContextEntry]:
    """Chunks of other files the completion should see: definitions of the names near the cursor, nearest
    first, then places completed at recently (blocking: run in a thread)."""
    wanted: list[ContextEntry] = []
    for name in identifiers_near(window):
        for found in workspace.find_symbol(name)[:2]:
            if found.path != rel and (entry := _definition(workspace, found.path, found.line, found.end_line,
                                                           f"uses {name}")):
                wanted.append(entry)
        if len(wanted) >= _USES:
            break
    for path, line in reversed(recent):
        if path != rel and (entry := _entry(workspace, path, line, "edited")):
            wanted.append(entry)
    return wanted


class Completer:
    """The node's inline completions; ``engine`` and ``index`` are the node's doors to its engine and to a
    workspace's index."""

    def __init__(self, config: CompletionConfig, engine: Callable[[], Awaitable[EngineLike]],
                 index: Callable[[WorkspaceState], Awaitable[Workspace]]) -> None:
        self.config = config
        self._engine = engine
        self._index = index
        self._support: tuple[object, FimSupport] | None = None
        self._running: dict[tuple[str, str], RequestHandle] = {}
        self._latest: dict[tuple[str, str], object] = {}
        """The newest request per (client, file): an older one still preparing its prompt gives way."""
        self._superseded: set[int] = set()

    def support(self, engine: EngineLike) -> FimSupport:
        if self._support is None or self._support[0] is not engine:
            self._support = (engine, fim_support(engine.profile, engine.tokenizer))
        return self._support[1]

    async def info(self) -> CompletionInfo:
        engine = await self._engine()
        if not self.config.enabled:
            return CompletionInfo(available=False, reason="completion.enabled is false in the config",
                                  model=engine.model.name)
        support = self.support(engine)
        return CompletionInfo(available=support.available, reason=support.reason, model=engine.model.name)

    async def complete(self, state: WorkspaceState, request: CompletionRequest) -> CompletionOutcome:
        started = time.perf_counter()
        engine = await self._engine()
        support = self.support(engine)
        if not self.config.enabled or not support.available or support.tokens is None:
            reason = support.reason if self.config.enabled else "completion.enabled is false in the config"
            return CompletionOutcome(text="", ended="unavailable", reason=reason)
        rel = state.relative(request.path)
        ticket = self._latest[(request.client_id, rel)] = object()
        try:
            return await self._complete(state, request, engine, support, rel, ticket, started)
        finally:
            if self._latest.get((request.client_id, rel)) is ticket:
                del self._latest[(request.client_id, rel)]

    async def _complete(self, state: WorkspaceState, request: CompletionRequest, engine: EngineLike,
                        support: FimSupport, rel: str, ticket: object, started: float) -> CompletionOutcome:
        tokenizer = engine.tokenizer

        def count(text: str) -> int:
            return len(tokenizer.encode(text))

        ws_state = state.completions
        if ws_state is None or ws_state.tokenizer is not tokenizer:  # first, or since the model changed
            ws_state = state.completions = CompletionState(self.config, tokenizer, count)
        window = cursor_window(request.text, request.line, request.character, count,
                               prefix_tokens=self.config.prefix_tokens, suffix_tokens=self.config.suffix_tokens)
        full_prefix = "\n".join([*request.text.split("\n")[:request.line], window.line_prefix])
        if request.use_cache and (hit := ws_state.lookup(rel, full_prefix, window.suffix)) is not None:
            return CompletionOutcome(text=hit, ended="cached", total_ms=(time.perf_counter() - started) * 1000)
        left_out: list[str] = []
        context: list[ContextEntry] = []
        if request.repo_context and support.repo_level and self.config.context_tokens > 0:
            workspace = await self._index(state)
            wanted = await asyncio.to_thread(gather_context, workspace, rel, window, list(ws_state.recent_places))
            left_out = ws_state.working_set.want(wanted)
            context = list(ws_state.working_set.entries)
        ws_state.place(rel, request.line)
        assert support.tokens is not None  # available
        prompt = await asyncio.to_thread(build_fim_prompt, support.tokens, tokenizer, window, rel, context,
                                         state.root.name, ws_state.working_set.render)
        if self._latest.get((request.client_id, rel)) is not ticket:
            return CompletionOutcome(text="", ended="superseded")
        cached = engine.predict_cached(prompt.token_ids)
        outcome = await self._generate(engine, request, rel, prompt.token_ids, window, support, started)
        if outcome.ended not in ("superseded", "cancelled"):
            ws_state.remember(rel, full_prefix, window.suffix, outcome.text)
        return CompletionOutcome(
            text=outcome.text, ended=outcome.ended, prompt_tokens=len(prompt.token_ids), cached_tokens=cached,
            context_tokens=prompt.context_tokens, window_tokens=prompt.window_tokens,
            context_files=prompt.context_files, left_out=tuple(left_out),
            cut_lines=(window.cut_prefix_lines, window.cut_suffix_lines), ttft_ms=outcome.ttft_ms,
            total_ms=(time.perf_counter() - started) * 1000, generated_tokens=outcome.generated_tokens)

    async def _generate(self, engine: EngineLike, request: CompletionRequest, rel: str, ids: list[int],
                        window: FimWindow, support: FimSupport, started: float) -> CompletionOutcome:
        from contenox.node.backend import submit_completion
        from contenox.runtime_ov import FinalEvent, TokenEvent

        assert support.tokens is not None
        key = (request.client_id, rel)
        if (previous := self._running.pop(key, None)) is not None:
            self._superseded.add(id(previous))
            previous.cancel()
        handle = submit_completion(engine, f"complete:{request.client_id}", ids, self.config.max_new_tokens,
                                   stops=support.tokens.stops)
        self._running[key] = handle
        text, ended, first, generated = "", "", 0.0, 0
        budget = self.config.time_budget_ms if request.time_budget_ms is None else request.time_budget_ms

        def trimmed(final: bool) -> tuple[str, str | None]:
            cut = trim_completion(text, line_prefix=window.line_prefix, line_suffix=window.line_suffix,
                                  suffix=window.suffix, final=final)
            return cut.text, cut.ended

        try:
            async for event in handle:
                if isinstance(event, TokenEvent):
                    generated += len(event.token_ids)
                    first = first or time.perf_counter()
                    text += event.text
                    shown, why = trimmed(False)
                    late = budget > 0 and (time.perf_counter() - started) * 1000 > budget
                    if why is None and late and "\n" in shown.lstrip("\n"):  # keep the lines already complete
                        shown, why = shown[:shown.rfind("\n")].rstrip(), "time"
                    if why is not None:
                        handle.cancel()
                        return CompletionOutcome(text=shown, ended=why, ttft_ms=(first - started) * 1000,
                                                 generated_tokens=generated)
                elif isinstance(event, FinalEvent):
                    ended = event.finish_reason
        except asyncio.CancelledError:  # the editor cancelled the request (a newer keystroke)
            handle.cancel()
            raise
        except ContenoxError:
            if id(handle) in self._superseded:
                ended = "cancelled"
            else:
                raise
        finally:
            if self._running.get(key) is handle:
                del self._running[key]
        if id(handle) in self._superseded:
            self._superseded.discard(id(handle))
            return CompletionOutcome(text="", ended="superseded")
        shown, why = trimmed(True)
        return CompletionOutcome(text=shown, ended=why or ended, ttft_ms=(first - started) * 1000 if first else 0.0,
                                 generated_tokens=generated)
