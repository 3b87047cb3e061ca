"""One streamed completion of a :class:`~contenox.runtime_ov.served.ServedEngine`: the request sent, retried
with backoff while the server answers 429/503 and no token has come, the chunks turned into the handle's token
events, and the final event with its metrics (the server's cached-token count where it reported one)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

import httpx
import msgspec
from httpx_sse import aconnect_sse

from contenox.errors import ServingError
from contenox.runtime_ov._openai_wire import (
    RETRY_STATUSES,
    backoff_s,
    cache_evidence,
    completion_body,
    decode_chunk,
    error_from_status,
    error_in_stream,
    routing_headers,
)
from contenox.runtime_ov.metrics import RequestMetrics, peak_rss_bytes
from contenox.runtime_ov.requests import FinalEvent, RequestHandle, TokenEvent

if TYPE_CHECKING:
    from contenox.runtime_ov.served import ServedEngine

__all__ = ["Stream"]

log = logging.getLogger(__name__)


class Stream:
    """One streamed completion: retries before the first token, the events, the final and its metrics."""

    def __init__(self, engine: ServedEngine, handle: RequestHandle, predicted: int) -> None:
        self.engine = engine
        self.handle = handle
        self.predicted = predicted
        self.started = time.perf_counter()
        self.first_at: float | None = None
        self.parts: list[str] = []
        self.ids: list[int] = []
        self.ids_complete = True
        self.finish_reason: str | None = None
        self.server_cached: int | None = None
        self.completion_tokens: int | None = None

    async def run(self) -> FinalEvent:
        engine, request = self.engine, self.handle.request
        options = engine.options
        engine._note_unsupported(request)
        body = completion_body(options, request, engine._prompt(request.token_ids), engine._stops(request))
        headers = routing_headers(options, request)
        url = options.url.rstrip("/") + "/completions"
        attempt = 0
        while True:
            try:
                async with aconnect_sse(engine._client, "POST", url, json=body, headers=headers) as source:
                    response = source.response
                    if response.status_code != 200:
                        content = await response.aread()
                        if response.status_code in RETRY_STATUSES and attempt < options.retries:
                            delay = backoff_s(options, attempt, response.headers.get("retry-after"))
                            attempt += 1
                            log.warning("serving engine %s answered %d: retry %d of %d in %.1f s", engine.server,
                                        response.status_code, attempt, options.retries, delay)
                            await asyncio.sleep(delay)
                            continue
                        raise error_from_status(engine.server, response.status_code, response.reason_phrase, content,
                                                attempts=attempt + 1)
                    async for event in source.aiter_sse():
                        if event.data.strip() == "[DONE]":
                            break
                        if event.data.strip():
                            self._chunk(event.data)
                return self.final(self.finish_reason or "stop")
            except httpx.TimeoutException as exc:
                raise ServingError(f"serving engine {engine.server} sent nothing for {options.timeout_s:g} s "
                                   f"(engine.timeout_s)", server=engine.server, status=None) from exc
            except httpx.HTTPError as exc:
                raise ServingError(f"serving engine {engine.server} cannot be reached: {exc}", server=engine.server,
                                   status=None) from exc

    def _chunk(self, data: str) -> None:
        engine = self.engine
        try:
            chunk = decode_chunk(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ServingError(f"serving engine {engine.server} sent a chunk that is not a completion: {exc}",
                               server=engine.server, status=200) from exc
        if chunk.error is not None:
            raise error_in_stream(engine.server, chunk.error)
        evidence = cache_evidence(chunk, len(self.handle.request.token_ids))
        if evidence is not None:
            self.server_cached = evidence
        if chunk.usage is not None and chunk.usage.completion_tokens is not None:
            self.completion_tokens = chunk.usage.completion_tokens
        for choice in chunk.choices:
            if choice.finish_reason:
                self.finish_reason = "length" if choice.finish_reason == "length" else "stop"
            if not choice.text and not choice.token_ids:
                continue
            if self.first_at is None:
                self.first_at = time.perf_counter()
            if choice.token_ids is not None:
                ids = list(choice.token_ids)
            else:
                self.ids_complete = False
                ids = engine.tokenizer.encode(choice.text)
            self.parts.append(choice.text)
            self.ids.extend(ids)
            self.handle.emit(TokenEvent(token_ids=ids, text=choice.text))

    def final(self, finish_reason: str) -> FinalEvent:
        engine, request = self.engine, self.handle.request
        text = "".join(self.parts)
        ids = self.ids if self.ids_complete else engine.tokenizer.encode(text)
        now = time.perf_counter()
        total_ms = (now - self.started) * 1000
        ttft_ms = ((self.first_at or now) - self.started) * 1000
        prompt = len(request.token_ids)
        cached = self.server_cached if self.server_cached is not None else self.predicted
        generated = self.completion_tokens if self.completion_tokens is not None else len(ids)
        decode_s = (now - self.first_at) if self.first_at is not None else 0.0
        metrics = RequestMetrics(
            prompt_tokens=prompt, predicted_cached_tokens=self.predicted, measured_recomputed_tokens=prompt - cached,
            prefill_steps=0, chunk_tokens=engine.options.chunk_tokens, ttft_ms=ttft_ms,
            prefill_tps=(prompt - cached) / (ttft_ms / 1000) if ttft_ms > 0 else 0.0,
            decode_tps=generated / decode_s if decode_s > 0 else 0.0, generated_tokens=generated, total_ms=total_ms,
            cache_used_tokens=engine.blocks.used_tokens, cache_capacity_tokens=engine.blocks.capacity_tokens,
            peak_rss_bytes=peak_rss_bytes(),
            cache_evidence="server" if self.server_cached is not None else "predicted",
            server_cached_tokens=self.server_cached)
        return FinalEvent(text=text, token_ids=list(ids), finish_reason=finish_reason, metrics=metrics)
