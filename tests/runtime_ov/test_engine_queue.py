"""The engine's queue without a pipeline: priorities, the queue limit, close (no model inference)."""

from __future__ import annotations

import pytest

from contenox.errors import EngineBusy, OverBatch
from contenox.runtime_ov import (
    Engine,
    EngineOptions,
    GenerateRequest,
    InstalledModel,
    Priority,
    Tokenizer,
)


@pytest.fixture
def idle_engine(default_model: InstalledModel, tokenizer: Tokenizer) -> Engine:
    """An engine whose thread was never started: requests stay queued."""
    return Engine(default_model, EngineOptions(cache_size_gb=0.05, max_queued=3), tokenizer)


def _request(priority: Priority, tag: int) -> GenerateRequest:
    return GenerateRequest(session_id=f"s{tag}", token_ids=[1, 2, tag], max_new_tokens=4, priority=priority)


def test_interactive_requests_are_taken_first_then_in_order(idle_engine: Engine) -> None:
    background = idle_engine.submit(_request(Priority.BACKGROUND, 1))
    first = idle_engine.submit(_request(Priority.INTERACTIVE, 2))
    second = idle_engine.submit(_request(Priority.INTERACTIVE, 3))
    assert idle_engine.stats().queue_depth == 3
    taken = [idle_engine._next() for _ in range(3)]
    assert taken == [first, second, background]
    assert [h.run_index for h in taken if h is not None] == [0, 1, 2]


def test_a_full_queue_is_over_batch(idle_engine: Engine) -> None:
    for tag in range(3):
        idle_engine.submit(_request(Priority.BACKGROUND, tag))
    with pytest.raises(OverBatch, match="already queued"):
        idle_engine.submit(_request(Priority.INTERACTIVE, 9))


def test_close_fails_queued_requests_and_refuses_new_ones(idle_engine: Engine) -> None:
    queued = idle_engine.submit(_request(Priority.INTERACTIVE, 1))
    idle_engine.close()
    with pytest.raises(EngineBusy):
        queued.wait(timeout=5)
    with pytest.raises(EngineBusy):
        idle_engine.submit(_request(Priority.INTERACTIVE, 2))


def test_cancel_of_a_queued_request_removes_it(idle_engine: Engine) -> None:
    handle = idle_engine.submit(_request(Priority.INTERACTIVE, 1))
    handle.cancel()
    final = handle.wait(timeout=5)
    assert final.finish_reason == "cancelled" and final.metrics.prefill_steps == 0
    assert idle_engine.stats().queue_depth == 0
