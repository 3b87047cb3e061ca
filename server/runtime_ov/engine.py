"""The long-lived engine: one ContinuousBatchingPipeline driven by one dedicated thread.

Nothing but the engine thread touches the pipeline. Callers submit token ids with a priority;
the thread takes the most urgent request, drives ``add_request``/``step()`` itself and delivers
token events to the caller's event loop. Requests run one at a time, most urgent first. Measured
on 2 shared cores with SmolLM2 (two 1000-token prompts, 32 new tokens each, chunk 256): batched,
both finish at 5.3-6.1 s; serialized, the first finishes at 3.4-3.7 s and the second at 7.0 s.
Serializing lets the interactive turn finish first, and with one request in flight the number of
steps before the first token measures the recomputed prompt tokens (``ceil(recomputed / chunk)``).
The exception is an inline completion (``Priority.COMPLETION``): it pauses a request still in prefill and
shares the steps of one that is decoding (see ``_serve``).
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import (
    ContenoxError,
    EngineBusy,
    EngineError,
    InvalidRequest,
    OverBatch,
    OverContext,
    ProfileMismatch,
)
from contenox.runtime_ov._ov_errors import translate_ov_error
from contenox.runtime_ov._runner import Live, RequestRunner, load_pipeline
from contenox.runtime_ov.block_model import BlockModel
from contenox.runtime_ov.converted import check_converted, converted
from contenox.runtime_ov.gguf_header import check_weights, gguf_metadata
from contenox.runtime_ov.kv_layout import read_kv_layout
from contenox.runtime_ov.metrics import EngineStats, RequestMetrics, peak_rss_bytes
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.profile import Profile
from contenox.runtime_ov.requests import FinalEvent, Forward, GenerateRequest, Priority, RequestHandle
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer
from contenox.runtime_ov.verify import BackgroundCheck, check_recorded

__all__ = ["Engine", "check_fits", "vocab_size"]

log = logging.getLogger(__name__)

_DEFAULT_BYTES_PER_TOKEN = 64 * 1024


def vocab_size(weights: Path) -> int | None:
    """The model's vocabulary size: the GGUF token list, or an IR directory's config.json (None: unknown)."""
    try:
        if weights.is_file():
            tokens = gguf_metadata(weights).get("tokenizer.ggml.tokens")
            return len(tokens) if isinstance(tokens, list) else None
        config = weights / "config.json"
        if config.is_file():
            size = msgspec.json.decode(config.read_bytes()).get("vocab_size")
            return int(size) if isinstance(size, int) else None
    except (OSError, ValueError, msgspec.DecodeError, ProfileMismatch):
        return None
    return None


def check_fits(ids: Sequence[int], max_new: int, *, profile: Profile, vocab_size: int | None,
               blocks: BlockModel) -> None:
    """Refuse what the pipeline must not see: no tokens, ids outside the vocabulary, a prompt beyond the
    tested context (OverContext) or beyond the KV cache (OverBatch)."""
    if not ids:
        raise InvalidRequest("the prompt has no tokens")
    if vocab_size is not None and (min(ids) < 0 or max(ids) >= vocab_size):
        bad = next(i for i in ids if i < 0 or i >= vocab_size)
        raise InvalidRequest(f"token id {bad} is outside the vocabulary of {profile.id} "
                             f"({vocab_size} tokens): ids made by another tokenizer?",
                             token_id=bad, vocab_size=vocab_size)
    limit = profile.max_tested_context
    need = len(ids) + max_new
    if need > limit:
        raise OverContext(
            f"prompt of {len(ids)} tokens + {max_new} new tokens = {need} exceeds the tested context "
            f"of {profile.id} ({limit}) by {need - limit} tokens",
            prompt_tokens=len(ids), max_new_tokens=max_new, limit=limit, over_by=need - limit)
    capacity = blocks.capacity_tokens
    if need > capacity:
        raise OverBatch(f"prompt + new tokens ({need}) exceed the KV cache of {capacity} tokens; "
                        "raise engine.cache_size_gb", need=need, capacity=capacity)


class Engine:
    """One loaded model. Create with :meth:`start`; ``close()`` when done."""

    def __init__(self, model: InstalledModel, options: EngineOptions, tokenizer: Tokenizer) -> None:
        self.model = model
        self.profile: Profile = model.profile
        self.options = options
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size(model.weights)
        """Token ids at or above this are refused before they reach the pipeline (None: unknown)."""
        layout = read_kv_layout(model.weights)
        self.kv_bytes_per_token = (layout.bytes_per_token(model.profile.kv_precision) if layout
                                   else _DEFAULT_BYTES_PER_TOKEN)
        block = model.profile.cache_block_size
        self.num_kv_blocks = max(1, int(options.cache_size_gb * (1 << 30)) // (self.kv_bytes_per_token * block))
        self.blocks = BlockModel(self.num_kv_blocks, block)
        self.device = ""
        self.loaded = model.weights
        """What the pipeline and tokenizer read: the IR converted from a GGUF model (:mod:`.converted`), else its
        weights."""
        self._queue: list[tuple[int, int, RequestHandle]] = []
        self._seq = itertools.count()
        self._ids = itertools.count(1)
        self._started = itertools.count()
        self._cond = threading.Condition()
        self._closing = False
        self._running: list[RequestHandle] = []
        self._session_ids: set[str] = set()
        """Distinct session ids of finished requests (EngineStats.sessions)."""
        self._done = 0
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self.refused: ContenoxError | None = None
        """Why this engine refuses every request now (its weights failed the background check), else None."""
        self.crash_reason: str | None = None
        """The same, in words, for the node's restart log (the name RemoteEngine uses)."""
        self.weights_check: BackgroundCheck | None = None
        """The full hash of the weights that runs after the load (None: not started)."""
        self._on_refused: Callable[[ContenoxError], None] | None = None
        self._thread = threading.Thread(target=self._main, name=f"contenox-engine-{model.name}", daemon=True)

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def start(cls, model: InstalledModel, options: EngineOptions | None = None, *,
              on_refused: Callable[[ContenoxError], None] | None = None) -> Engine:
        """Load ``model`` on a new engine thread; returns once the pipeline is ready.

        Weights whose recorded check failed are refused here (ChecksumMismatch); the full hash runs in the
        background once the model is loaded, and when it fails the engine refuses every request from then on
        (``refused``, ``alive`` false) and calls ``on_refused`` (on the check's thread).
        """
        options = options or EngineOptions()
        check_weights(model.weights)
        check_recorded(model)
        loaded = converted(model)
        engine = cls(model, options, load_tokenizer(loaded))
        engine.loaded = loaded
        engine._on_refused = on_refused
        engine._thread.start()
        engine._ready.wait()
        if engine._start_error is not None:
            engine._thread.join()
            error = engine._start_error
            if isinstance(error, ContenoxError):
                raise error
            raise translate_ov_error(error, doing=f"loading model {model.name}") from error
        log.info("engine for %s on %s: %d KV blocks (%d tokens), chunk %d", model.name, engine.device,
                 engine.num_kv_blocks, engine.blocks.capacity_tokens, options.chunk_tokens)
        engine.weights_check = BackgroundCheck(model, engine._refuse,
                                               also=functools.partial(check_converted, model, loaded)).start()
        return engine

    @property
    def alive(self) -> bool:
        """False once closed or refused: the node starts a new engine on its next turn."""
        return self.refused is None and not self._closing

    @property
    def pid(self) -> int:
        """The process the model runs in: this one."""
        return os.getpid()

    def _refuse(self, error: ContenoxError) -> None:
        """The weights failed their check: fail what is queued, stop what runs (ending with ``error``), and
        refuse what comes."""
        with self._cond:
            self.refused, self.crash_reason = error, error.message
            queued = [handle for _, _, handle in self._queue]
            self._queue.clear()
            running = list(self._running)
        for handle in queued:
            handle.fail(error)
        for handle in running:
            handle.cancel()  # the engine thread ends it; _finished turns its end into ``error``
        if self._on_refused is not None:
            self._on_refused(error)

    def close(self) -> None:
        """Cancel queued and running requests and stop the engine thread."""
        if self.weights_check is not None:
            self.weights_check.stop()
        with self._cond:
            self._closing = True
            queued = [handle for _, _, handle in self._queue]
            self._queue.clear()
            running = list(self._running)
            self._cond.notify_all()
        for handle in queued:
            handle.fail(EngineBusy("the engine is shutting down"))
        for handle in running:
            handle.cancel()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- requests ----------------------------------------------------------------------------
    def submit(self, request: GenerateRequest, forward: Forward | None = None) -> RequestHandle:
        """Queue ``request``; events stream through the returned handle.

        Raises OverContext (prompt + max_new_tokens beyond the profile's tested context),
        OverBatch (the queue is full, or the request cannot fit the KV cache), EngineBusy (closed).
        """
        max_new = request.max_new_tokens or self.options.max_new_tokens
        self._check_fits(request.token_ids, max_new)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._cond:
            if self.refused is not None:
                raise type(self.refused)(self.refused.message, **self.refused.details)
            if self._closing:
                raise EngineBusy("the engine is closed")
            if len(self._queue) >= self.options.max_queued:
                raise OverBatch(f"{len(self._queue)} requests already queued (max_queued "
                                f"{self.options.max_queued})", queued=len(self._queue))
            handle = RequestHandle(request, next(self._ids), loop, self._cancel_queued, forward)
            handle.queue_seq = next(self._seq)
            heapq.heappush(self._queue, (int(request.priority), handle.queue_seq, handle))
            self._cond.notify_all()
        return handle

    def _check_fits(self, ids: Sequence[int], max_new: int) -> None:
        check_fits(ids, max_new, profile=self.profile, vocab_size=self.vocab_size, blocks=self.blocks)

    def generate(self, request: GenerateRequest, timeout: float | None = None) -> FinalEvent:
        """Blocking submit-and-wait, for callers without an event loop (bench, scripts)."""
        return self.submit(request).wait(timeout)

    async def warm(self, session_id: str, token_ids: Sequence[int]) -> FinalEvent:
        """A background 1-token request that re-touches the blocks of ``token_ids``."""
        ids = list(token_ids)
        return await self.submit(GenerateRequest(session_id=session_id, token_ids=ids, max_new_tokens=1,
                                                 priority=Priority.BACKGROUND)).result()

    def predict_cached(self, token_ids: Sequence[int]) -> int:
        """Prompt tokens the prefix cache would serve if ``token_ids`` ran now (block model)."""
        return self.blocks.predict(token_ids)

    def stats(self) -> EngineStats:
        with self._cond:
            depth = len(self._queue)
            running = bool(self._running)
            sessions = len(self._session_ids)
        return EngineStats(model=self.model.name, device=self.device,
                           cache_capacity_tokens=self.blocks.capacity_tokens,
                           cache_used_tokens=self.blocks.used_tokens, kv_bytes_per_token=self.kv_bytes_per_token,
                           chunk_tokens=self.options.chunk_tokens, queue_depth=depth, running=running,
                           requests_done=self._done, sessions=sessions)

    # -- engine thread -----------------------------------------------------------------------
    def _cancel_queued(self, handle: RequestHandle) -> None:
        """A request cancelled before it started ends now, without waiting for its turn."""
        with self._cond:
            entries = [entry for entry in self._queue if entry[2] is handle]
            if not entries:
                return  # running (the engine thread sees the flag) or already done
            self._queue.remove(entries[0])
            heapq.heapify(self._queue)
        prompt = len(handle.request.token_ids)
        handle.finish(FinalEvent(text="", token_ids=[], finish_reason="cancelled", metrics=RequestMetrics(
            prompt_tokens=prompt, predicted_cached_tokens=self.blocks.predict(handle.request.token_ids),
            measured_recomputed_tokens=0, prefill_steps=0, chunk_tokens=self.options.chunk_tokens, ttft_ms=0.0,
            prefill_tps=0.0, decode_tps=0.0, generated_tokens=0, total_ms=0.0,
            cache_used_tokens=self.blocks.used_tokens, cache_capacity_tokens=self.blocks.capacity_tokens,
            peak_rss_bytes=peak_rss_bytes())))

    def _next(self) -> RequestHandle | None:
        with self._cond:
            while not self._queue and not self._closing:
                self._cond.wait()
            if self._closing:
                return None
            _, _, handle = heapq.heappop(self._queue)
            self._running.append(handle)
        handle.started(next(self._started))
        return handle

    def _urgent(self, lives: list[Live]) -> RequestHandle | None:
        """A queued request more urgent than every running one (an inline completion during a turn)."""
        with self._cond:
            if not self._queue or self._closing or len(lives) >= self.options.max_num_seqs:
                return None
            priority, _, handle = self._queue[0]
            group = handle.request.group
            joins = bool(group) and all(live.handle.request.group == group for live in lives)
            if not joins and any(priority >= int(live.handle.request.priority) for live in lives):
                return None
            heapq.heappop(self._queue)
            self._running.append(handle)
        handle.started(next(self._started))
        return handle

    def _requeue(self, handle: RequestHandle) -> None:
        with self._cond:
            self._running.remove(handle)
            heapq.heappush(self._queue, (int(handle.request.priority), handle.queue_seq, handle))
            self._cond.notify_all()

    def _serve(self, runner: RequestRunner, first: RequestHandle) -> None:
        """Run ``first`` to its end, letting more urgent requests in on the way: a request still in prefill is
        paused for them (queued again, its computed prefix cached); one that is decoding shares the steps."""
        lives: list[Live] = []
        pending: list[RequestHandle] = [first]
        try:
            while pending or lives:
                for handle in pending:
                    started = runner.start(handle, batched=bool(lives))
                    if isinstance(started, Live):
                        lives.append(started)
                    else:
                        self._finished(handle, started, None)
                pending = []
                if not lives:
                    break
                urgent = self._urgent(lives)
                if urgent is not None and urgent.request.group and all(
                        live.handle.request.group == urgent.request.group for live in lives):
                    pending.append(urgent)  # a candidate of the same prompt: decode side by side
                    continue
                if urgent is not None:
                    for live in [live for live in lives if live.in_prefill]:
                        runner.pause(live, lives)
                        self._requeue(live.handle)
                    pending.append(urgent)
                    continue
                for live, final in runner.step(lives):
                    self._finished(live.handle, final, None)
        except ContenoxError as exc:
            self._fail_all(runner, lives, pending, exc)
        except (RuntimeError, IndexError) as exc:
            self._fail_all(runner, lives, pending, translate_ov_error(exc, doing="a request"))
        except Exception as exc:  # keep the engine alive; the callers get the error
            log.exception("engine request failed")
            self._fail_all(runner, lives, pending, EngineError(f"request failed: {exc!r}"))

    def _fail_all(self, runner: RequestRunner, lives: list[Live], pending: list[RequestHandle],
                  error: ContenoxError) -> None:
        runner.recover()
        for handle in [live.handle for live in lives] + pending:
            self._finished(handle, None, error)

    def _finished(self, handle: RequestHandle, final: FinalEvent | None, error: ContenoxError | None) -> None:
        with self._cond:
            if final is not None and handle.request.session_id:
                self._session_ids.add(handle.request.session_id)
            if handle in self._running:
                self._running.remove(handle)
            self._done += 1
            if self.refused is not None:  # the weights failed their check: no answer from them stands
                final, error = None, self.refused
        if final is not None:
            handle.finish(final)
        else:
            handle.fail(error or EngineError(f"request {handle.request_id} failed"))

    def _main(self) -> None:
        try:
            pipe, self.device = load_pipeline(self.model, self.loaded, self.options, self.num_kv_blocks)
            runner = RequestRunner(pipe, self)
        except BaseException as exc:  # reported to Engine.start on the caller's thread
            self._start_error = exc
            self._ready.set()
            return
        self._ready.set()
        while (handle := self._next()) is not None:
            self._serve(runner, handle)
        del runner, pipe

    def _measured_kv(self, native_metrics: Any) -> None:
        """Replace the estimated KV bytes/token by the pipeline's figure once it allocated the cache."""
        allocated = int(getattr(native_metrics, "kv_cache_size_in_bytes", 0) or 0)
        if allocated:
            self.kv_bytes_per_token = allocated // (self.num_kv_blocks * self.blocks.block_size)
