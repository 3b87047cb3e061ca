"""What callers hand the engine and what streams back: requests, events and the request handle.

The handle lives on the caller's side. The engine thread delivers events into it with
``loop.call_soon_threadsafe`` (or directly, under a lock, when the request was submitted outside
an event loop); the caller iterates it, awaits ``result()`` or cancels it.
"""

from __future__ import annotations

import asyncio
import enum
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

import msgspec

from contenox.errors import ContenoxError, EngineError
from contenox.runtime_ov.metrics import RequestMetrics

__all__ = ["CallTag", "FinalEvent", "Forward", "GenerateRequest", "PrefillEvent", "Priority", "RequestHandle",
           "Sampling", "Started", "TokenEvent", "ToolCallGrammar"]


class Priority(enum.IntEnum):
    """Lower runs first: inline completions, then interactive turns, then background warm-ups.

    A completion does not wait for a running turn: it pauses a turn still in prefill (at the next step; the
    computed part stays cached) and shares the steps of a turn that is decoding.
    """

    COMPLETION = -1
    INTERACTIVE = 0
    BACKGROUND = 1


class Sampling(msgspec.Struct, frozen=True, kw_only=True):
    """Multinomial sampling instead of greedy decoding (a candidate answer drawn beside the greedy one)."""

    temperature: float = 0.8
    top_p: float = 0.95
    seed: int = 0


class CallTag(msgspec.Struct, frozen=True, kw_only=True):
    """One way of writing a call of one tool: ``begin`` (which starts with one of the triggers), the arguments
    object under ``schema`` (JSON schema text), then ``end``."""

    begin: str
    schema: str
    end: str


class ToolCallGrammar(msgspec.Struct, frozen=True, kw_only=True):
    """Lazy structured output for tool calls (OpenVINO GenAI's ``TriggeredTags``): the answer is free text until
    it writes a trigger (a call opening that names a declared tool); from there the tag that begins with it is
    generated under its grammar, so the call's arguments match the tool's schema."""

    triggers: tuple[str, ...]
    tags: tuple[CallTag, ...]
    stop_after_first: bool = True
    """The answer ends with its first call (the node runs it and answers again with the result)."""
    required: bool = False
    """The answer must make a call (``TriggeredTags``' ``at_least_one``; an OpenAI-compatible server's
    ``tool_choice: "required"``): a step the tool check said needs a tool."""


class GenerateRequest(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    token_ids: list[int]
    max_new_tokens: int = 0
    """0: the engine's default."""
    priority: Priority = Priority.INTERACTIVE
    stop_token_ids: tuple[int, ...] = ()
    """Stop on these besides the tokenizer's EOS."""
    report_prefill: bool = False
    """Deliver a :class:`PrefillEvent` after each prefill step (a progress line for the user)."""
    sampling: Sampling | None = None
    """None: greedy."""
    grammar: str = ""
    """An EBNF grammar (root rule ``root``) the whole answer is generated under (structured output)."""
    tool_calls: ToolCallGrammar | None = None
    """Tool calls the answer may make, constrained once one begins (ignored under ``grammar``)."""
    group: str = ""
    """Requests of one non-empty group run side by side, sharing the engine's steps (the candidates of one
    prompt decode as one batch; the prompt's prefix is cached once the first of them has computed it)."""
    stable_tokens: int = 0
    """How many of ``token_ids`` are the planner's stable prefix (system .. pins): a serving engine's request
    carries its hash for a prefix-aware router (0: unknown, no hash sent)."""


class TokenEvent(msgspec.Struct, frozen=True, kw_only=True):
    token_ids: list[int]
    text: str
    """Text delta (may be empty while a multi-byte character is incomplete)."""


class PrefillEvent(msgspec.Struct, frozen=True, kw_only=True):
    """How far the prompt's prefill has got: ``computed`` of ``total`` prompt tokens are in the KV cache (the
    cached prefix counts from the start). Only for requests that asked (``report_prefill``)."""

    computed: int
    total: int


class FinalEvent(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    token_ids: list[int]
    finish_reason: str
    """"stop" | "length" | "cancelled"."""
    metrics: RequestMetrics


Event = TokenEvent | PrefillEvent | FinalEvent


class Started(msgspec.Struct, frozen=True, kw_only=True):
    """Told to a handle's ``forward`` only: the engine took the request (``run_index``: in which order)."""

    run_index: int


Forward = Callable[["Event | Started | None", "ContenoxError | None"], None]
"""Called with every event (and the start) or error as the engine delivers it, on the engine's thread."""


class RequestHandle:
    """One submitted request: ``async for ev in handle``, ``await handle.result()``, ``handle.cancel()``."""

    def __init__(self, request: GenerateRequest, request_id: int, loop: asyncio.AbstractEventLoop | None,
                 on_cancel: Callable[[RequestHandle], None],
                 forward: Forward | None = None) -> None:
        self.request = request
        self.request_id = request_id
        self.submitted_at = time.perf_counter()
        self.queue_seq = 0
        """Its place among requests of its priority (kept when a paused request is queued again)."""
        self.paused = 0
        self.run_index: int | None = None
        """Order in which the engine started this request (None until it starts)."""
        self.committed: tuple[list[int], int] | None = None
        """What the run left in the prefix cache: (computed ids, occupied tokens), for a block model
        mirrored in another process (None: nothing, or not run yet)."""
        self._loop = loop
        self._on_cancel = on_cancel
        self._cancel_requested = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._events: deque[Event] = deque()
        self._final: FinalEvent | None = None
        self._error: ContenoxError | None = None
        self._wakeup: asyncio.Event | None = asyncio.Event() if loop is not None else None
        self._forward = forward

    # -- caller side -------------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the engine to stop: at the next chunk boundary in prefill, the next token in decode."""
        if not self._done.is_set():
            self._cancel_requested.set()
            self._on_cancel(self)

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            with self._lock:
                event = self._events.popleft() if self._events else None
                finished = self._done.is_set() and not self._events
            if event is not None:
                yield event
                if isinstance(event, FinalEvent):
                    return
                continue
            if finished:
                if self._error is not None:
                    raise self._error
                return
            await self._wait()

    async def _wait(self) -> None:
        if self._wakeup is None:
            await asyncio.get_running_loop().run_in_executor(None, self._done.wait, 0.05)
            return
        await self._wakeup.wait()
        self._wakeup.clear()

    async def result(self) -> FinalEvent:
        """The final event (drains the stream); raises the request's error if it failed."""
        while not self._done.is_set():
            await self._wait()
        return self._result()

    def wait(self, timeout: float | None = None) -> FinalEvent:
        """Blocking form of :meth:`result` for callers outside an event loop (bench, CLI)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"request {self.request_id} not finished after {timeout} s")
        return self._result()

    def _result(self) -> FinalEvent:
        if self._error is not None:
            raise self._error
        if self._final is None:  # pragma: no cover - the engine always ends with one of the two
            raise EngineError(f"request {self.request_id} ended without a result")
        return self._final

    # -- engine side (any thread) -------------------------------------------------------------
    def _deliver(self, event: Event | None, error: ContenoxError | None = None) -> None:
        if self._forward is not None:
            self._forward(event, error)

        def apply() -> None:
            with self._lock:
                if event is not None:
                    self._events.append(event)
                    if isinstance(event, FinalEvent):
                        self._final = event
                        self._done.set()
                if error is not None:
                    self._error = error
                    self._done.set()
            if self._wakeup is not None:
                self._wakeup.set()

        if self._loop is None:
            apply()
            return
        try:
            self._loop.call_soon_threadsafe(apply)
        except RuntimeError:  # the caller's loop is closed: nobody is listening any more
            with self._lock:
                if isinstance(event, FinalEvent):
                    self._final = event
                self._error = error
                self._done.set()

    def started(self, run_index: int) -> None:
        """The engine took this request (engine side)."""
        self.run_index = run_index
        if self._forward is not None:
            self._forward(Started(run_index=run_index), None)

    def emit(self, event: TokenEvent | PrefillEvent) -> None:
        self._deliver(event)

    def finish(self, event: FinalEvent) -> None:
        self._deliver(event)

    def fail(self, error: ContenoxError) -> None:
        self._deliver(None, error)
