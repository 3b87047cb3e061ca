"""The engine in its own process, behind the :class:`Engine` surface the node uses.

``RemoteEngine.start`` spawns ``python -m contenox.runtime_ov.worker`` and loads the model there. The
node keeps what planning needs without a round trip: the tokenizer, the profile, and a mirror of the
engine's block model (each finished request sends what it committed to the prefix cache, and the mirror
commits the same). Requests go over the pipe; a reader thread delivers their events to the same
:class:`RequestHandle` the in-process engine uses, so callers cannot tell the two apart, except that no
prefill step ever holds the node's GIL and a cancel is written to the pipe at once.

Supervision: when the process exits or stops sending its heartbeat for ``hang_s`` without computing, every
request in flight fails with :class:`EngineCrashed` naming what was running and how the process ended,
``alive`` turns false, and the node starts a new engine on its next turn (``crash_reason`` says why). The
heartbeat comes from a thread of the process, and a pipeline step keeps the interpreter's lock while it runs
(OpenVINO GenAI's ``step()``): on a loaded machine one step of a 1.5B model took longer than ``hang_s``, and a
busy engine was killed as hung in the middle of a verification (twice in one evening, with a test suite
running beside it). So a silent process that is using the CPU is computing, not hung: it is given up to
``busy_s`` before it is killed (a runaway loop in native code computes too); one that uses none (stopped,
deadlocked, waiting) is killed after ``hang_s`` as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec

from contenox.errors import ContenoxError, EngineBusy, EngineCrashed, EngineError, OverBatch
from contenox.runtime_ov._forwarding import ForwardingEngine
from contenox.runtime_ov._pipe import (
    Beat,
    Cancel,
    Close,
    Fail,
    Failed,
    Final,
    FrameWriter,
    FromEngine,
    Prefill,
    Ready,
    Refused,
    RequestStarted,
    Start,
    Submit,
    Token,
    error_from,
    read_frame,
)
from contenox.runtime_ov.block_model import BlockModel
from contenox.runtime_ov.converted import converted
from contenox.runtime_ov.engine import Engine, check_fits, vocab_size
from contenox.runtime_ov.metrics import EngineStats
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.profile import Profile
from contenox.runtime_ov.requests import (
    FinalEvent,
    Forward,
    GenerateRequest,
    RequestHandle,
)
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer

__all__ = ["EngineLike", "RemoteEngine", "start_engine"]

log = logging.getLogger(__name__)

_START_TIMEOUT_S = 600.0
_CLOSE_TIMEOUT_S = 10.0
HANG_S = 30.0
"""No heartbeat for this long (the process beats every second from a thread of its own) and no CPU used: hung."""
BUSY_S = 300.0
"""No heartbeat for this long even though the process computes: hung (a native loop that never returns)."""
_BUSY_CPU = 0.1
"""CPU seconds per second of silence (over the last ``hang_s``) that make a silent process busy, not hung."""


def silence_verdict(silent_s: float, cpu_s: float | None, hang_s: float, busy_s: float) -> str:
    """Whether a process that has sent no heartbeat for ``silent_s`` is hung: '' (not yet), ``"hung"`` (silent
    past ``hang_s`` and computing less than :data:`_BUSY_CPU` of a core over the last ``hang_s``: ``cpu_s``, its
    CPU seconds in that window; None when unreadable) or ``"busy"`` (computing, but silent past ``busy_s``)."""
    if silent_s <= hang_s:
        return ""
    if cpu_s is None or cpu_s < _BUSY_CPU * hang_s:
        return "hung"
    return "busy" if silent_s > busy_s else ""


def _cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far (user and system, all threads); None when it cannot be read."""
    try:
        import psutil

        times = psutil.Process(pid).cpu_times()
    except Exception:  # gone, or not allowed: then silence alone decides
        return None
    return float(times.user + times.system)


def _describe_exit(code: int | None, why: str = "hung") -> str:
    if code is None:
        return ("stopped answering (no heartbeat)" if why == "hung" else
                "stopped answering (no heartbeat while computing, past the busy limit)")
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class RemoteEngine(ForwardingEngine):
    """One model loaded in a child process. Create with :meth:`start`; ``close()`` when done."""

    def __init__(self, model: InstalledModel, options: EngineOptions, tokenizer: Tokenizer,
                 process: subprocess.Popen[bytes], ready: Ready, *, hang_s: float = HANG_S,
                 busy_s: float = BUSY_S) -> None:
        self.model = model
        self.profile: Profile = model.profile
        self.options = options
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size(model.weights)
        self.device = ready.device
        self.pid = ready.pid
        self.num_kv_blocks = ready.num_kv_blocks
        self.kv_bytes_per_token = ready.kv_bytes_per_token
        self.blocks = BlockModel(self.num_kv_blocks, model.profile.cache_block_size)
        self.crash_reason: str | None = None
        """Why the process ended while in use (None while it runs, or after a clean close), or why it refuses."""
        self.refused: ContenoxError | None = None
        """Why the engine process refuses every request now (its weights failed the background check)."""
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        self._out = FrameWriter(process.stdin)
        self._stdout = process.stdout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._inflight: dict[int, RequestHandle] = {}
        self._sessions: set[str] = set()
        self._done = 0
        self._closing = False
        self._hang_s = hang_s
        self._busy_s = max(busy_s, hang_s)
        self._last_beat = time.monotonic()
        self.silent_busy = 0
        """Silences past ``hang_s`` the process computed through (not killed: a long step on a loaded machine)."""
        self._reader = threading.Thread(target=self._read, name=f"contenox-engine-pipe-{model.name}", daemon=True)
        self._watchdog = threading.Thread(target=self._watch, name="contenox-engine-watchdog", daemon=True)
        self._reader.start()
        self._watchdog.start()

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def start(cls, model: InstalledModel, options: EngineOptions | None = None, *,
              hang_s: float = HANG_S, busy_s: float = BUSY_S) -> RemoteEngine:
        """Start the engine process for ``model``; returns once its pipeline is ready (its load error
        otherwise, as the same ContenoxError the in-process engine raises)."""
        options = options or EngineOptions()
        process = subprocess.Popen(
            [sys.executable, "-m", "contenox.runtime_ov.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=None, start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert process.stdin is not None and process.stdout is not None
        try:
            FrameWriter(process.stdin).send(Start(models_dir=str(Path(model.path).parent), model=model.name,
                                                  options=options))
            ready = cls._await_ready(process)
            # the tokenizer from what the engine process loaded: the IR it converted a GGUF model to, once (not
            # here, where the conversion's peak memory would stay with the node)
            tokenizer = load_tokenizer(converted(model, create=False))
        except BaseException:
            process.kill()
            process.wait()
            raise
        engine = cls(model, options, tokenizer, process, ready, hang_s=hang_s, busy_s=busy_s)
        log.info("engine process %d for %s on %s: %d KV blocks, chunk %d", engine.pid, model.name, engine.device,
                 engine.num_kv_blocks, options.chunk_tokens)
        return engine

    @staticmethod
    def _await_ready(process: subprocess.Popen[bytes]) -> Ready:
        assert process.stdout is not None
        result: list[FromEngine | None] = []
        reader = threading.Thread(target=lambda: result.append(read_frame(process.stdout, FromEngine)),  # type: ignore[arg-type]
                                  daemon=True)
        reader.start()
        reader.join(_START_TIMEOUT_S)
        message = result[0] if result else None
        if message is None:
            code = process.poll()
            raise EngineCrashed(f"the engine process {_describe_exit(code) if code is not None else 'did not start'} "
                                "while loading the model", exit_code=code)
        if isinstance(message, Failed):
            raise error_from(message.error)
        if not isinstance(message, Ready):
            raise EngineError(f"the engine process sent {type(message).__name__} instead of Ready")
        return message

    @property
    def alive(self) -> bool:
        return self.crash_reason is None and not self._closing and self._process.poll() is None

    def close(self) -> None:
        """Cancel what runs, ask the process to exit, kill it if it does not."""
        with self._lock:
            self._closing = True
            inflight = list(self._inflight.values())
        for handle in inflight:
            handle.cancel()
        with contextlib.suppress(OSError, ValueError):
            self._out.send(Close())
        try:
            self._process.wait(_CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._fail_all(EngineBusy("the engine is shutting down"))
        with contextlib.suppress(OSError):
            self._process.stdin.close()  # type: ignore[union-attr]

    def __enter__(self) -> RemoteEngine:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- requests ----------------------------------------------------------------------------
    def submit(self, request: GenerateRequest, forward: Forward | None = None) -> RequestHandle:
        max_new = request.max_new_tokens or self.options.max_new_tokens
        check_fits(request.token_ids, max_new, profile=self.profile, vocab_size=self.vocab_size, blocks=self.blocks)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            if self.refused is not None:
                raise type(self.refused)(self.refused.message, **self.refused.details)
            if self._closing:
                raise EngineBusy("the engine is closed")
            if not self.alive:
                raise EngineCrashed(f"the engine process {self.crash_reason or 'ended'}")
            if len(self._inflight) >= self.options.max_queued:
                raise OverBatch(f"{len(self._inflight)} requests already queued (max_queued "
                                f"{self.options.max_queued})", queued=len(self._inflight))
            handle = RequestHandle(request, next(self._ids), loop, self._cancel, forward)
            self._inflight[handle.request_id] = handle
        try:
            self._out.send(Submit(id=handle.request_id, request=request))
        except (OSError, ValueError) as exc:
            with self._lock:
                self._inflight.pop(handle.request_id, None)
            raise EngineCrashed(f"cannot reach the engine process: {exc}") from exc
        return handle

    def _cancel(self, handle: RequestHandle) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._out.send(Cancel(id=handle.request_id))


    # -- pipe ---------------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            while (message := read_frame(self._stdout, FromEngine)) is not None:
                self._dispatch(message)
        except (OSError, ValueError, msgspec.DecodeError, ContenoxError) as exc:
            log.warning("engine pipe broke: %s", exc)
        self._ended(None)

    def _dispatch(self, message: FromEngine) -> None:
        if isinstance(message, Beat):
            self._last_beat = time.monotonic()
            return
        if isinstance(message, Refused):  # the weights failed their check: not alive, so the node's next turn restarts it
            error = error_from(message.error)
            with self._lock:
                self.refused, self.crash_reason = error, error.message
            log.error("engine process %d refuses %s: %s", self.pid, self.model.name, error.message)
            return
        if not isinstance(message, (RequestStarted, Token, Prefill, Final, Fail)):
            return  # (a second Ready or Failed: nothing to route)
        with self._lock:
            handle = self._inflight.get(message.id)
        if handle is None:
            return
        if isinstance(message, RequestStarted):
            handle.started(message.run_index)
        elif isinstance(message, (Token, Prefill)):
            handle.emit(message.event)
        elif isinstance(message, Final):
            if message.committed:
                self.blocks.commit(message.committed[0], occupied_tokens=message.committed[1])
            handle.run_index = message.run_index
            with self._lock:
                self._inflight.pop(handle.request_id, None)
                self._done += 1
                if handle.request.session_id:
                    self._sessions.add(handle.request.session_id)
            handle.finish(message.event)
        else:
            with self._lock:
                self._inflight.pop(handle.request_id, None)
                self._done += 1
            handle.fail(error_from(message.error))

    def _watch(self) -> None:
        samples: list[tuple[float, float | None]] = []  # (when, CPU seconds): the last hang_s of them
        reported = 0.0  # the beat a busy silence was logged for
        while self._process.poll() is None and not self._closing:
            time.sleep(min(1.0, self._hang_s / 4))
            now = time.monotonic()
            samples = [*(x for x in samples if x[0] >= now - self._hang_s - 1.0), (now, _cpu_seconds(self.pid))]
            silent = now - self._last_beat
            if silent <= self._hang_s or self._closing:
                continue
            first, last = samples[0][1], samples[-1][1]
            gained = None if first is None or last is None else last - first
            verdict = silence_verdict(silent, gained, self._hang_s, self._busy_s)
            if not verdict:
                if reported != self._last_beat:
                    reported = self._last_beat
                    self.silent_busy += 1
                    log.warning("engine process %d sent no heartbeat for %.0f s but is computing (%.1f CPU s in "
                                "the last %.0f s): a long step on a loaded machine, waiting up to %.0f s",
                                self.pid, silent, gained or 0.0, self._hang_s, self._busy_s)
                continue
            log.error("engine process %d sent no heartbeat for %.0f s (%s): killing it", self.pid, silent,
                      "computing, past the busy limit" if verdict == "busy" else "not computing")
            self._ended(None, hung=True, why=verdict)
            with contextlib.suppress(OSError):
                self._process.kill()
            return

    def _ended(self, _code: int | None, *, hung: bool = False, why: str = "hung") -> None:
        """The process is gone (or hung): fail what was in flight, once, with what happened."""
        if self._closing:
            return
        code = None if hung else self._process.wait()
        with self._lock:
            if self.crash_reason is not None:
                return
            self.crash_reason = _describe_exit(code, why)
            running = [f"{h.request.session_id or 'request'} #{h.request_id}" for h in self._inflight.values()]
        self.blocks.clear()
        what = f" while running {', '.join(running)}" if running else ""
        log.error("engine process %d %s%s", self.pid, self.crash_reason, what)
        self._fail_all(EngineCrashed(f"the engine process {self.crash_reason}{what}; the next turn restarts it",
                                     exit_code=code, running=running))

    def _fail_all(self, error: ContenoxError) -> None:
        with self._lock:
            handles = list(self._inflight.values())
            self._inflight.clear()
        for handle in handles:
            handle.fail(error)


class EngineLike(Protocol):
    """What the node drives: the same surface in-process (:class:`Engine`), in a child process
    (:class:`RemoteEngine`), or over a serving engine's API (:class:`ServedEngine`)."""

    model: InstalledModel
    profile: Profile
    options: Any
    """The engine's options (:class:`EngineOptions`, or a serving engine's :class:`ServedOptions`)."""
    tokenizer: Tokenizer
    blocks: BlockModel
    """The node's model of the prefix cache's blocks (what a request will find cached)."""
    device: str
    crash_reason: str | None
    """Why the engine ended while in use or refuses every request (None while it serves)."""

    @property
    def alive(self) -> bool: ...

    @property
    def pid(self) -> int: ...

    def submit(self, request: GenerateRequest, forward: Forward | None = None) -> RequestHandle: ...

    def generate(self, request: GenerateRequest, timeout: float | None = None) -> FinalEvent: ...

    async def warm(self, session_id: str, token_ids: Sequence[int]) -> FinalEvent: ...

    def predict_cached(self, token_ids: Sequence[int]) -> int: ...

    def stats(self) -> EngineStats: ...

    def close(self) -> None: ...


def start_engine(model: InstalledModel, options: EngineOptions, *, process: bool) -> EngineLike:
    """The engine for ``model``: in a child process (``process``), else on a thread of this one."""
    if process:
        return RemoteEngine.start(model, options)
    return Engine.start(model, options)

