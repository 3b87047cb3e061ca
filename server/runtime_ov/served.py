"""The engine surface over a serving engine the team runs (vLLM, OpenVINO Model Server, llama.cpp's server).

``ServedEngine`` answers what the node asks of :class:`~contenox.runtime_ov.engine.Engine` (submit, cancel,
warm, predict_cached, stats, the tokenizer and profile it plans with) by streaming ``POST {url}/completions``
over httpx. The node still plans by tokens with the catalog model's local tokenizer; at start a probe is
counted both ways and a server that tokenizes differently is refused (:class:`TokenizerMismatch`).

The prompt goes as the planner's ids decoded to text (special tokens kept, so the chat template's markers
reach the server as written) or, with ``token_prompt``, as the ids themselves. Each request runs as a task on
one event loop thread this engine owns; ``cancel`` cancels the task, which closes the stream (the server
drops a request whose client went away). 429/503 before any token are retried with backoff; every other
failure is a :class:`ServingError` naming the server and the status. Candidates of one group are separate
streamed requests: the server batches them and computes their shared prompt once.

Cache evidence: the server's own count (``usage.prompt_tokens_details.cached_tokens``, llama.cpp's
``timings.cache_n``) goes into the request's metrics as measured (``cache_evidence = "server"``); a server
that reports none leaves the block model's prediction (``"predicted"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import threading
from collections.abc import Awaitable
from typing import TypeVar

import httpx
import msgspec

from contenox.errors import ContenoxError, EngineBusy, OverBatch, ServingError, TokenizerMismatch
from contenox.runtime_ov._forwarding import ForwardingEngine
from contenox.runtime_ov._openai_wire import ServedOptions, error_from_status, server_label, tokenize_url
from contenox.runtime_ov._served_stream import Stream
from contenox.runtime_ov.block_model import BlockModel
from contenox.runtime_ov.converted import converted
from contenox.runtime_ov.engine import check_fits
from contenox.runtime_ov.requests import (
    Forward,
    GenerateRequest,
    RequestHandle,
)
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer

__all__ = ["PROBE", "ServedEngine", "ServedOptions"]

log = logging.getLogger(__name__)

T = TypeVar("T")

PROBE = ("def tokenizer_probe(values: list[int]) -> dict[str, int]:\n"
         "    \"\"\"Count the ünïcödé, CJK 日本語 and emoji 🚀 pieces.\"\"\"\n"
         "\treturn {str(v): v ** 2 for v in values if v % 3 != 0}  # 0x1F680\n")
"""Counted by the local tokenizer and the server's: code, indentation, a tab, non-ASCII, an emoji."""
_START_TIMEOUT_S = 60.0
_BYTES_PER_TOKEN = 64 * 1024
"""Sizes the block model of the server's cache from ``cache_size_gb`` (the server's own layout is unknown)."""


class ServedEngine(ForwardingEngine):
    """A model served by an OpenAI-compatible server. Create with :meth:`start`; ``close()`` when done."""

    def __init__(self, model: InstalledModel, options: ServedOptions, tokenizer: Tokenizer) -> None:
        self.model = model
        self.profile = model.profile
        self.options = options
        self.tokenizer = tokenizer
        self.vocab_size: int | None = None
        self.server = server_label(options.url)
        self.device = self.server
        self.kv_bytes_per_token = 0
        """Unknown: the server holds the KV cache."""
        block = model.profile.cache_block_size
        tokens = max(int(options.cache_size_gb * (1 << 30)) // _BYTES_PER_TOKEN, model.profile.max_tested_context)
        self.num_kv_blocks = max(1, -(-tokens // block))
        self.blocks = BlockModel(self.num_kv_blocks, block)
        self.crash_reason: str | None = None
        self.refused: ContenoxError | None = None
        self.tokenizer_check = "not run"
        """How the tokenizer was checked against the server's at start (ids, a count, or why it could not be)."""
        self.unsupported: set[str] = set()
        """Request features this server was not sent (a grammar without ``grammar_field``, tool-call tags)."""
        self._ids = itertools.count(1)
        self._runs = itertools.count()
        self._lock = threading.Lock()
        self._inflight: dict[int, RequestHandle] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        """The running request tasks (touched on the loop thread only)."""
        self._sessions: set[str] = set()
        self._done = 0
        self._closing = False
        headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"contenox-served-{model.name}",
                                        daemon=True)
        self._thread.start()
        timeout = httpx.Timeout(options.timeout_s, connect=options.connect_timeout_s)
        self._client: httpx.AsyncClient = self._call(self._make_client(headers, timeout), 10.0)

    async def _make_client(self, headers: dict[str, str], timeout: httpx.Timeout) -> httpx.AsyncClient:
        return httpx.AsyncClient(headers=headers, timeout=timeout, follow_redirects=False, trust_env=False,
                                 limits=httpx.Limits(max_connections=None, max_keepalive_connections=16))

    def _call(self, coroutine: Awaitable[T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)  # type: ignore[arg-type]

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def start(cls, model: InstalledModel, options: ServedOptions, *,
              tokenizer: Tokenizer | None = None) -> ServedEngine:
        """Connect to the serving engine and check that it tokenizes as ``model`` does (TokenizerMismatch,
        ServingError when it cannot be reached or refuses). ``tokenizer``: ``model``'s, already loaded."""
        engine = cls(model, options, tokenizer or load_tokenizer(converted(model, create=False)))
        try:
            engine.tokenizer_check = engine._call(engine._check_tokenizer(), _START_TIMEOUT_S)
        except BaseException:
            engine.close()
            raise
        log.info("serving engine %s (model %s) for %s: tokenizer %s", engine.server, options.model, model.name,
                 engine.tokenizer_check)
        return engine

    @property
    def alive(self) -> bool:
        return not self._closing and self._thread.is_alive()

    @property
    def pid(self) -> int:
        """The process the requests are made from (the model runs in the serving engine)."""
        return os.getpid()

    def close(self) -> None:
        """Cancel what runs (closing its streams), then the connections and the loop thread."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            inflight = list(self._inflight.values())
        for handle in inflight:
            handle.cancel()
        with contextlib.suppress(Exception):  # each running stream ends cancelled before its connection closes
            self._call(self._drain(), 10.0)
        with contextlib.suppress(Exception):
            self._call(self._client.aclose(), 10.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10.0)
        if not self._thread.is_alive():
            self._loop.close()
        for handle in inflight:
            if not handle.done:
                handle.fail(EngineBusy("the engine is shutting down"))

    def __enter__(self) -> ServedEngine:
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
        predicted = self.blocks.predict(request.token_ids)
        with self._lock:
            if self._closing:
                raise EngineBusy("the engine is closed")
            if len(self._inflight) >= self.options.max_queued:
                raise OverBatch(f"{len(self._inflight)} requests already in flight (max_queued "
                                f"{self.options.max_queued})", queued=len(self._inflight))
            handle = RequestHandle(request, next(self._ids), loop, self._cancel, forward)
            self._inflight[handle.request_id] = handle
            asyncio.run_coroutine_threadsafe(self._run(handle, predicted), self._loop)
        return handle

    def _cancel(self, handle: RequestHandle) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs any more
            self._loop.call_soon_threadsafe(self._cancel_task, handle.request_id)

    def _cancel_task(self, request_id: int) -> None:
        """On the loop: cancel the request's task, which closes its stream (not started yet: it checks the
        handle's flag first)."""
        task = self._tasks.get(request_id)
        if task is not None:
            task.cancel()


    async def _drain(self) -> None:
        """On the loop: wait (up to 5 s) for the cancelled requests' tasks to end with their final. Without it,
        closing the connections could come first and the stream ended as failed ("shutting down"), not
        cancelled: 1 of 3 runs of the close test."""
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)

    # -- one request, on the loop thread -------------------------------------------------------
    async def _run(self, handle: RequestHandle, predicted: int) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks[handle.request_id] = task
        handle.started(next(self._runs))
        stream = Stream(self, handle, predicted)
        try:
            if handle.cancel_requested:
                raise asyncio.CancelledError
            final = await stream.run()
        except asyncio.CancelledError:
            final = stream.final("cancelled")
        except ContenoxError as exc:
            self._finished(handle)
            handle.fail(exc)
            return
        except Exception as exc:  # pragma: no cover - a bug here must still end the request
            log.exception("serving engine request %d failed", handle.request_id)
            self._finished(handle)
            handle.fail(ServingError(f"serving engine {self.server}: {exc}", server=self.server, status=None))
            return
        finally:
            self._tasks.pop(handle.request_id, None)
        if stream.first_at is not None:
            self.blocks.commit(handle.request.token_ids + final.token_ids[:-1])
        self._finished(handle)
        handle.finish(final)

    def _finished(self, handle: RequestHandle) -> None:
        with self._lock:
            self._inflight.pop(handle.request_id, None)
            self._done += 1
            if handle.request.session_id:
                self._sessions.add(handle.request.session_id)

    def _prompt(self, ids: list[int]) -> str | list[int]:
        return list(ids) if self.options.token_prompt else self.tokenizer.decode_raw(ids)

    def _stops(self, request: GenerateRequest) -> list[str]:
        """The stop tokens as the stop strings a server takes: once each, and none that holds another (a server
        stops at a stop string anywhere in the text, so ``"\\n"`` stands for every token with a line break)."""
        texts = list(dict.fromkeys(t for t in (self.tokenizer.decode_raw([i]) for i in request.stop_token_ids) if t))
        kept: list[str] = []  # shortest first, so each text is held against the few kept (not all two thousand)
        for text in sorted(texts, key=len):
            if not any(k in text for k in kept):
                kept.append(text)
        return [t for t in texts if t in kept]

    def _note_unsupported(self, request: GenerateRequest) -> None:
        missing = []
        if request.grammar and not self.options.grammar_field:
            missing.append("grammar (set engine.grammar_field: llama.cpp 'grammar', vLLM 'guided_grammar')")
        if request.tool_calls is not None and request.grammar == "":
            missing.append("tool-call tags (answers are not constrained; the node still parses the calls)")
        for what in missing:
            if what not in self.unsupported:
                self.unsupported.add(what)
                log.warning("serving engine %s: not sent: %s", self.server, what)

    # -- the tokenizer check ---------------------------------------------------------------------
    async def _check_tokenizer(self) -> str:
        local = self.tokenizer.encode(PROBE)
        bos = self.tokenizer.bos_token_id
        try:
            response = await self._client.post(tokenize_url(self.options.url), json={
                "model": self.options.model, "prompt": PROBE, "content": PROBE,
                "add_special": False, "add_special_tokens": False})
            tokens = msgspec.json.decode(response.content).get("tokens") if response.status_code == 200 else None
        except (httpx.HTTPError, msgspec.DecodeError, AttributeError):
            tokens = None
        if isinstance(tokens, list) and tokens:
            ids = [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]
            if ids[:1] == [bos] and ids[1:] == local:
                ids = ids[1:]
            if ids != local:
                at = next((i for i, (a, b) in enumerate(zip(ids, local, strict=False)) if a != b),
                          min(len(ids), len(local)))
                raise TokenizerMismatch(
                    f"serving engine {self.server} tokenizes differently from {self.model.name}: a probe is "
                    f"{len(ids)} tokens there, {len(local)} here, first differing at token {at}; set [model] "
                    f"default to the catalog model the server serves", server=self.server, model=self.model.name,
                    server_tokens=len(ids), local_tokens=len(local))
            return f"matches (/tokenize: {len(local)} ids equal)"
        count = await self._probe_count()
        if count is None:
            log.warning("serving engine %s: cannot check its tokenizer (no /tokenize, no usage); planning with %s's",
                        self.server, self.model.name)
            return "unchecked (the server reports no token counts)"
        if count not in (len(local), len(local) + 1):
            raise TokenizerMismatch(
                f"serving engine {self.server} counts a probe as {count} tokens, {self.model.name} as {len(local)}: "
                f"another tokenizer; set [model] default to the catalog model the server serves",
                server=self.server, model=self.model.name, server_tokens=count, local_tokens=len(local))
        return f"matches (usage.prompt_tokens {count} for {len(local)} local)"

    async def _probe_count(self) -> int | None:
        url = self.options.url.rstrip("/") + "/completions"
        try:
            response = await self._client.post(url, json={"model": self.options.model, "prompt": PROBE,
                                                           "max_tokens": 1, "temperature": 0.0})
        except httpx.HTTPError as exc:
            raise ServingError(f"serving engine {self.server} cannot be reached: {exc}", server=self.server,
                               status=None) from exc
        if response.status_code != 200:
            raise error_from_status(self.server, response.status_code, response.reason_phrase, response.content)
        try:
            usage = msgspec.json.decode(response.content).get("usage") or {}
            count = usage.get("prompt_tokens")
        except (msgspec.DecodeError, AttributeError):
            return None
        return int(count) if isinstance(count, int) else None
