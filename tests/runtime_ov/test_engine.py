"""The engine on the real SmolLM2-135M: streaming, determinism, cancellation, prefix reuse, interleaved sessions.

One engine for the module (loading the model takes seconds), on a thread and then in its own process. Prompts are distinct per test so
that what one test left in the cache does not decide another; the chunk is small (64 tokens)
so prefill spans many steps.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator

import numpy as np
import pytest

from contenox.config import EngineConfig
from contenox.errors import EngineBusy, InvalidRequest, ModelNotFound, OverBatch, OverContext
from contenox.runtime_ov import (
    Engine,
    EngineLike,
    EngineOptions,
    FinalEvent,
    GenerateRequest,
    InstalledModel,
    PrefillEvent,
    Priority,
    TokenEvent,
    start_engine,
)
from contenox.runtime_ov._runner import choose_device

CHUNK = 64


@pytest.fixture(scope="module", params=["thread", "process"])
def engine(default_model: InstalledModel, request: pytest.FixtureRequest) -> Iterator[EngineLike]:
    """Every engine test runs twice: the engine on a thread of this process, and in its own process."""
    eng = start_engine(default_model, EngineOptions(cache_size_gb=0.1, chunk_tokens=CHUNK, max_new_tokens=64),
                       process=request.param == "process")
    yield eng
    eng.close()


def chat(engine: EngineLike, user: str, system: str = "You are a helpful coding assistant.") -> list[int]:
    text = engine.tokenizer.apply_chat_template([{"role": "system", "content": system},
                                                 {"role": "user", "content": user}])
    return engine.tokenizer.encode(text)


def filler(engine: EngineLike, seed: int, tokens: int) -> list[int]:
    """A unique prompt of exactly ``tokens`` ids made of real words."""
    words = ["alpha", "beta", "gamma", "delta", "kernel", "socket", "buffer", "vector", "matrix", "thread"]
    rng = np.random.default_rng(seed)
    text = " ".join(words[i] for i in rng.integers(0, len(words), size=tokens * 2))
    ids = engine.tokenizer.encode(f"Document {seed}: {text}")
    assert len(ids) >= tokens
    return ids[:tokens]


async def collect(engine: EngineLike, request: GenerateRequest) -> tuple[list[TokenEvent], FinalEvent]:
    tokens: list[TokenEvent] = []
    final: FinalEvent | None = None
    async for event in engine.submit(request):
        if isinstance(event, TokenEvent):
            tokens.append(event)
        elif isinstance(event, FinalEvent):
            final = event
    assert final is not None
    return tokens, final


def test_options_from_config() -> None:
    options = EngineOptions.from_config(EngineConfig(cache_size_gb=0.5, chunk_tokens=128), device="CPU")
    assert (options.cache_size_gb, options.chunk_tokens, options.device) == (0.5, 128, "CPU")


@pytest.mark.slow
def test_engine_reports_its_model_and_cache(engine: EngineLike, default_model: InstalledModel) -> None:
    stats = engine.stats()
    assert stats.model == default_model.name and stats.device == "CPU"
    assert engine.profile == default_model.profile
    assert stats.chunk_tokens == CHUNK
    # 0.1 GB of SmolLM2's ~13.7 kB/token u8 KV: a few thousand tokens, whole 32-token blocks
    assert 4000 < stats.cache_capacity_tokens < 10_000 and stats.cache_capacity_tokens % 32 == 0
    assert engine.tokenizer.decode(engine.tokenizer.encode("def f(x):")) == "def f(x):"


@pytest.mark.slow
def test_token_ids_outside_the_vocabulary_are_refused_before_the_pipeline(engine: EngineLike) -> None:
    assert engine.vocab_size == 49152  # SmolLM2's GGUF token list
    with pytest.raises(InvalidRequest, match="token id 151643 is outside the vocabulary of smollm2-135m"):
        engine.submit(GenerateRequest(session_id="s", token_ids=[1, 151643, 2], max_new_tokens=4))
    with pytest.raises(InvalidRequest):
        engine.submit(GenerateRequest(session_id="s", token_ids=[-1], max_new_tokens=4))
    final = engine.generate(GenerateRequest(session_id="s", token_ids=chat(engine, "Say hi."), max_new_tokens=4))
    assert final.finish_reason in ("stop", "length")  # the engine is still usable


@pytest.mark.slow
async def test_streaming_equals_final_text(engine: EngineLike) -> None:
    prompt = chat(engine, "Write a Python function that returns the sum of a list.")
    tokens, final = await collect(engine, GenerateRequest(session_id="stream", token_ids=prompt,
                                                          max_new_tokens=40))
    assert final.finish_reason in ("stop", "length")
    assert final.text.strip()
    assert "".join(ev.text for ev in tokens) == final.text
    assert [t for ev in tokens for t in ev.token_ids] == final.token_ids
    m = final.metrics
    assert m.prompt_tokens == len(prompt) and m.generated_tokens == len(final.token_ids)
    assert m.prefill_steps == math.ceil((len(prompt) - m.predicted_cached_tokens) / CHUNK)
    assert m.ttft_ms > 0 and m.total_ms >= m.ttft_ms and m.peak_rss_bytes > 0


async def test_prefill_progress_is_reported_step_by_step_only_when_asked(engine: EngineLike) -> None:
    base = filler(engine, 23, 200)
    await engine.submit(GenerateRequest(session_id="progress", token_ids=base, max_new_tokens=1)).result()
    prompt = base + filler(engine, 24, 300)  # 192 tokens cached, 308 to compute: 5 steps, the last answers
    events = [event async for event in engine.submit(GenerateRequest(
        session_id="progress", token_ids=prompt, max_new_tokens=2, report_prefill=True))]
    progress = [(e.computed, e.total) for e in events if isinstance(e, PrefillEvent)]
    assert progress == [(192 + CHUNK * step, 500) for step in range(1, 5)]
    first_token = next(i for i, e in enumerate(events) if isinstance(e, TokenEvent))
    assert all(not isinstance(e, PrefillEvent) for e in events[first_token:])  # none once it decodes
    quiet = [event async for event in engine.submit(GenerateRequest(
        session_id="progress", token_ids=filler(engine, 25, 300), max_new_tokens=2))]
    assert not any(isinstance(e, PrefillEvent) for e in quiet)


@pytest.mark.slow
async def test_greedy_determinism(engine: EngineLike) -> None:
    prompt = chat(engine, "Explain what a Python generator is, in two sentences, and show how `yield` "
                          "differs from `return` in a function that reads a large file line by line.")
    assert len(prompt) > 40
    request = GenerateRequest(session_id="det", token_ids=prompt, max_new_tokens=32)
    cold = (await engine.submit(request).result())
    warm1 = (await engine.submit(request).result())
    warm2 = (await engine.submit(request).result())
    assert cold.metrics.predicted_cached_tokens == 0
    assert warm1.metrics.predicted_cached_tokens > 0
    assert warm1.token_ids == warm2.token_ids
    assert cold.token_ids == warm1.token_ids  # measured on SmolLM2: warm equals cold here


@pytest.mark.slow
async def test_cancel_during_prefill_then_a_normal_request(engine: EngineLike) -> None:
    prompt = filler(engine, 11, 3000)  # 47 chunks of 64
    handle = engine.submit(GenerateRequest(session_id="cancel-p", token_ids=prompt, max_new_tokens=8))
    while handle.run_index is None:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    handle.cancel()
    final = await handle.result()
    assert final.finish_reason == "cancelled"
    assert final.token_ids == [] and final.text == ""
    assert final.metrics.prefill_steps < math.ceil(len(prompt) / CHUNK)
    # the chunks computed before the cancel stay cached
    assert engine.predict_cached(prompt) == pytest.approx(final.metrics.prefill_steps * CHUNK, abs=32)
    ok = await engine.submit(GenerateRequest(session_id="cancel-p", token_ids=chat(engine, "Say hi."),
                                             max_new_tokens=8)).result()
    assert ok.finish_reason in ("stop", "length") and ok.token_ids


@pytest.mark.slow
async def test_cancel_during_decode_then_a_normal_request(engine: EngineLike) -> None:
    prompt = engine.tokenizer.encode("hello world " * 40)
    # the answer's grammar is a literal longer than 60 tokens, so the request cannot stop before the cancel
    # (left free, the model mostly repeats the prompt, but on one CI machine it ended after five tokens)
    never_stops = 'root ::= "' + "hello world " * 40 + '"'
    handle = engine.submit(GenerateRequest(session_id="cancel-d", token_ids=prompt, max_new_tokens=60,
                                           grammar=never_stops))
    seen = 0
    final: FinalEvent | None = None
    async for event in handle:
        if isinstance(event, TokenEvent):
            seen += len(event.token_ids)
            if seen >= 3:
                handle.cancel()
        else:
            final = event
    assert final is not None and final.finish_reason == "cancelled"
    assert 3 <= final.metrics.generated_tokens < 60
    ok = await engine.submit(GenerateRequest(session_id="cancel-d", token_ids=chat(engine, "Say hi."),
                                             max_new_tokens=8)).result()
    assert ok.finish_reason in ("stop", "length") and ok.token_ids


@pytest.mark.slow
async def test_shared_prefix_recomputes_only_the_suffix(engine: EngineLike) -> None:
    base = filler(engine, 21, 500)
    first = await engine.submit(GenerateRequest(session_id="pfx", token_ids=base, max_new_tokens=2)).result()
    assert first.metrics.prefill_steps == math.ceil(500 / CHUNK)
    second_prompt = base + engine.tokenizer.encode(" And now a question about it?")
    predicted = engine.predict_cached(second_prompt)
    assert predicted == 480  # floor(500 / 32) * 32
    second = await engine.submit(GenerateRequest(session_id="pfx", token_ids=second_prompt,
                                                 max_new_tokens=2)).result()
    m = second.metrics
    assert m.predicted_cached_tokens == predicted
    expected_recomputed = len(second_prompt) - predicted
    assert m.prefill_steps == math.ceil(expected_recomputed / CHUNK) == 1
    assert abs(m.measured_recomputed_tokens - expected_recomputed) < CHUNK
    # an edit in the middle keeps the blocks before it
    edited = [*base[:250], base[250] + 1, *base[251:]]
    third = await engine.submit(GenerateRequest(session_id="pfx", token_ids=edited, max_new_tokens=2)).result()
    assert third.metrics.predicted_cached_tokens == 224
    assert third.metrics.prefill_steps == math.ceil((500 - 224) / CHUNK)


@pytest.mark.slow
async def test_interleaved_sessions_keep_their_prefixes(engine: EngineLike) -> None:
    prefixes = {f"ws-{i}": filler(engine, 100 + i, 300) for i in range(3)}
    for sid, ids in prefixes.items():
        await engine.submit(GenerateRequest(session_id=sid, token_ids=ids, max_new_tokens=2)).result()
    for n, (sid, ids) in enumerate(prefixes.items()):
        prompt = ids + engine.tokenizer.encode(f" Turn {n}: what changed?")
        assert engine.predict_cached(prompt) == 288
        final = await engine.submit(GenerateRequest(session_id=sid, token_ids=prompt, max_new_tokens=2)).result()
        assert final.metrics.predicted_cached_tokens == 288
        assert final.metrics.prefill_steps == 1  # only the suffix; cold it is ceil(300 / 64) = 5


@pytest.mark.slow
def test_default_scheduler_keeps_only_the_last_prompt(default_model: InstalledModel) -> None:
    """What LLMPipeline does without cache_size: A, B, then A + suffix is a full miss."""
    import openvino as ov
    import openvino_genai as ov_genai

    config = ov_genai.SchedulerConfig()
    config.enable_prefix_caching = True
    config.max_num_batched_tokens = CHUNK
    pipe = ov_genai.ContinuousBatchingPipeline(str(default_model.weights), config, "CPU", {})
    generation = ov_genai.GenerationConfig()
    generation.max_new_tokens = 2

    def steps(ids: list[int]) -> int:
        handle = pipe.add_request(0, ov.Tensor(np.array([ids], np.int64)), generation)
        count = 0
        while not handle.can_read():
            pipe.step()
            count += 1
        while pipe.has_non_finished_requests():
            pipe.step()
        return count

    a, b = list(range(1000, 1200)), list(range(3000, 3200))
    assert steps(a) == steps(b) == 4
    assert steps(a + [5] * 20) == 4  # a's blocks are gone: everything recomputed


@pytest.mark.slow
def test_block_model_follows_eviction(default_model: InstalledModel) -> None:
    """A 66-block cache under pressure: predicted recomputation matches the step count, chunk 32."""
    from contenox.runtime_ov.kv_layout import read_kv_layout

    layout = read_kv_layout(default_model.weights)
    assert layout is not None
    gb = (66 * layout.bytes_per_token() * 32 + 1024) / 2**30
    with Engine.start(default_model, EngineOptions(cache_size_gb=gb, chunk_tokens=32)) as small:
        assert small.num_kv_blocks == 66
        x, y = list(range(20_000, 21_280)), list(range(30_000, 30_800))
        cases = [
            ("x cold", x, 0),
            ("x head re-touched", [*x[:330], 7, 7, 7, 7, 7], 320),
            ("y cold", y, 0),
            ("x again: head kept, tail evicted", [*x, *[9] * 10], 320),
            ("y again: evicted head first, all lost", [*y, *[9] * 10], 0),
        ]
        for name, ids, cached in cases:
            predicted = small.predict_cached(ids)
            assert predicted == cached, name
            final = small.generate(GenerateRequest(session_id="evict", token_ids=ids, max_new_tokens=2))
            assert final.metrics.predicted_cached_tokens == predicted
            assert final.metrics.prefill_steps == math.ceil((len(ids) - predicted) / 32), name


@pytest.mark.slow
async def test_priority_interactive_before_background(engine: EngineLike) -> None:
    blocker = engine.submit(GenerateRequest(session_id="prio", token_ids=filler(engine, 31, 200),
                                            max_new_tokens=2))
    background = engine.submit(GenerateRequest(session_id="prio", token_ids=chat(engine, "bg"),
                                               max_new_tokens=2, priority=Priority.BACKGROUND))
    interactive = engine.submit(GenerateRequest(session_id="prio", token_ids=chat(engine, "fg"),
                                                max_new_tokens=2))
    await asyncio.gather(blocker.result(), background.result(), interactive.result())
    assert blocker.run_index is not None and interactive.run_index is not None
    assert background.run_index is not None
    assert blocker.run_index < interactive.run_index < background.run_index


@pytest.mark.slow
async def test_warm_retouches_a_prefix(engine: EngineLike) -> None:
    ids = filler(engine, 41, 300)
    final = await engine.warm("warm", ids)
    assert final.metrics.generated_tokens == 1
    assert engine.predict_cached([*ids, 5]) == 288


@pytest.mark.slow
async def test_cancel_while_queued_ends_at_once(engine: EngineLike) -> None:
    blocker = engine.submit(GenerateRequest(session_id="q", token_ids=filler(engine, 51, 300), max_new_tokens=8))
    queued = engine.submit(GenerateRequest(session_id="q", token_ids=chat(engine, "queued"), max_new_tokens=8))
    queued.cancel()
    final = await queued.result()
    assert final.finish_reason == "cancelled" and final.token_ids == []
    assert queued.run_index is None  # never reached the pipeline
    assert (await blocker.result()).finish_reason in ("stop", "length")


@pytest.mark.slow
async def test_a_completion_pauses_a_turn_in_prefill_which_resumes_from_its_cached_chunks(engine: EngineLike) -> None:
    prompt = filler(engine, 61, 2500)  # 40 chunks of 64
    turn = engine.submit(GenerateRequest(session_id="turn", token_ids=prompt, max_new_tokens=4))
    while turn.run_index is None:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.1)
    completion = engine.submit(GenerateRequest(session_id="fim", token_ids=chat(engine, "complete me"),
                                               max_new_tokens=4, priority=Priority.COMPLETION))
    done = await completion.result()
    assert not turn.done  # the completion did not wait for the 40-chunk prefill
    assert done.finish_reason in ("stop", "length") and done.token_ids
    final = await turn.result()
    assert final.finish_reason in ("stop", "length") and final.token_ids
    assert final.metrics.paused == 1
    # it resumed from the chunks computed before the pause: only the rest was prefilled again
    assert final.metrics.predicted_cached_tokens > 0
    assert final.metrics.prefill_steps < math.ceil(len(prompt) / CHUNK)


@pytest.mark.slow
async def test_a_completion_shares_the_steps_of_a_decoding_turn(engine: EngineLike) -> None:
    prompt = chat(engine, "Count from 1 to 200, one number per line.")
    turn = engine.submit(GenerateRequest(session_id="turn-d", token_ids=prompt, max_new_tokens=60))
    loop = asyncio.get_running_loop()
    turn_times: list[float] = []
    final: FinalEvent | None = None
    completion: asyncio.Task[FinalEvent] | None = None
    submitted = 0.0
    async for event in turn:
        if isinstance(event, TokenEvent) and event.token_ids:
            turn_times.append(loop.time())
            if len(turn_times) == 3:
                submitted = loop.time()
                completion = asyncio.ensure_future(engine.submit(GenerateRequest(
                    session_id="fim-d", token_ids=filler(engine, 62, 300), max_new_tokens=8,
                    priority=Priority.COMPLETION)).result())
        elif isinstance(event, FinalEvent):
            final = event
    assert final is not None and completion is not None
    done = await completion
    assert done.finish_reason in ("stop", "length") and done.token_ids
    assert final.metrics.batched and done.metrics.batched
    # the turn kept decoding while the completion ran: its tokens kept coming during the completion's prefill
    ended = submitted + (done.metrics.total_ms + done.metrics.queue_ms) / 1000.0
    inside = [t for t in turn_times if submitted < t <= ended]
    assert final.metrics.generated_tokens == 60 and len(inside) >= 3


def test_choose_device() -> None:
    assert choose_device(["GPU", "CPU"], "", ["CPU"]) == "CPU"
    assert choose_device(["GPU", "CPU"], "", ["CPU", "GPU.0"]) == "GPU"
    assert choose_device(["CPU"], "NPU", ["CPU", "NPU"]) == "NPU"
    assert choose_device(["NPU"], "GPU", ["CPU"]) == "CPU"


@pytest.mark.slow
def test_over_context_says_by_how_much(engine: EngineLike) -> None:
    limit = engine.profile.max_tested_context
    with pytest.raises(OverContext, match=r"by 100 tokens") as info:
        engine.submit(GenerateRequest(session_id="big", token_ids=[5] * (limit - 400), max_new_tokens=500))
    assert info.value.details["over_by"] == 100


@pytest.mark.slow
def test_request_larger_than_the_cache_is_over_batch(engine: EngineLike) -> None:
    capacity = engine.stats().cache_capacity_tokens
    with pytest.raises(OverBatch, match="KV cache"):
        engine.submit(GenerateRequest(session_id="big", token_ids=[5] * capacity, max_new_tokens=10))


@pytest.mark.slow
def test_empty_prompt_is_invalid(engine: EngineLike) -> None:
    with pytest.raises(InvalidRequest):
        engine.submit(GenerateRequest(session_id="x", token_ids=[]))


@pytest.mark.slow
def test_blocking_generate_outside_an_event_loop(engine: EngineLike) -> None:
    final = engine.generate(GenerateRequest(session_id="sync", token_ids=chat(engine, "Say hi."),
                                            max_new_tokens=4), timeout=120)
    assert final.finish_reason in ("stop", "length") and 0 < len(final.token_ids) <= 4


def test_start_with_missing_weights_is_model_not_found(default_model: InstalledModel, tmp_path: object) -> None:
    missing = InstalledModel(name="gone", path=str(tmp_path), profile=default_model.profile, size_bytes=0,
                             source="")
    with pytest.raises(ModelNotFound):
        Engine.start(missing, EngineOptions(cache_size_gb=0.01))


@pytest.mark.slow
def test_close_refuses_new_requests(engine: EngineLike) -> None:
    """Runs last in this module: the module's engine is closed afterwards anyway."""
    engine.close()
    with pytest.raises(EngineBusy):
        engine.submit(GenerateRequest(session_id="late", token_ids=[1, 2, 3], max_new_tokens=2))
    assert not engine.stats().running

