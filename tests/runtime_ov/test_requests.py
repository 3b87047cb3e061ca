"""RequestHandle: events cross from another thread into the caller's event loop, in order."""

from __future__ import annotations

import asyncio
import threading

import pytest

from contenox.errors import OverBatch
from contenox.runtime_ov import FinalEvent, GenerateRequest, RequestHandle, RequestMetrics, TokenEvent

METRICS = RequestMetrics(prompt_tokens=3, predicted_cached_tokens=0, measured_recomputed_tokens=3, prefill_steps=1,
                         chunk_tokens=64, ttft_ms=1.0, prefill_tps=1.0, decode_tps=1.0, generated_tokens=2,
                         total_ms=2.0, cache_used_tokens=0, cache_capacity_tokens=32, peak_rss_bytes=1)
REQUEST = GenerateRequest(session_id="s", token_ids=[1, 2, 3])


def _engine_thread(handle: RequestHandle, error: bool = False) -> threading.Thread:
    def run() -> None:
        handle.emit(TokenEvent(token_ids=[7], text="a"))
        handle.emit(TokenEvent(token_ids=[8], text="b"))
        if error:
            handle.fail(OverBatch("full"))
        else:
            handle.finish(FinalEvent(text="ab", token_ids=[7, 8], finish_reason="stop", metrics=METRICS))

    return threading.Thread(target=run)


async def test_events_stream_in_order_then_the_final() -> None:
    cancels: list[RequestHandle] = []
    handle = RequestHandle(REQUEST, 1, asyncio.get_running_loop(), cancels.append)
    _engine_thread(handle).start()
    events = [event async for event in handle]
    assert [type(e) for e in events] == [TokenEvent, TokenEvent, FinalEvent]
    assert (await handle.result()).text == "ab"
    handle.cancel()  # after the end: nothing to cancel
    assert cancels == []


async def test_an_error_ends_the_stream_and_result() -> None:
    handle = RequestHandle(REQUEST, 2, asyncio.get_running_loop(), lambda h: None)
    _engine_thread(handle, error=True).start()
    texts = []
    with pytest.raises(OverBatch):
        async for event in handle:
            texts.append(event.text)
    assert texts == ["a", "b"]
    with pytest.raises(OverBatch):
        await handle.result()


async def test_cancel_sets_the_flag_and_calls_back() -> None:
    cancels: list[RequestHandle] = []
    handle = RequestHandle(REQUEST, 3, asyncio.get_running_loop(), cancels.append)
    handle.cancel()
    assert handle.cancel_requested and cancels == [handle]


def test_blocking_wait_without_a_loop() -> None:
    handle = RequestHandle(REQUEST, 4, None, lambda h: None)
    thread = _engine_thread(handle)
    thread.start()
    assert handle.wait(timeout=10).token_ids == [7, 8]
    thread.join()
