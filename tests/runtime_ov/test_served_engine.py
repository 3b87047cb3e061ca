"""The engine surface over an OpenAI-compatible serving engine, against a stand-in server on 127.0.0.1 that
streams the real shapes (text_completion chunks, the usage chunk, llama.cpp's timings), with SmolLM2's real
tokenizer on both sides (the server "serves" the same model) unless a test makes them differ."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import EngineConfig
from contenox.errors import ConfigError, EngineBusy, ServingError, TokenizerMismatch
from contenox.runtime_ov import (
    FinalEvent,
    GenerateRequest,
    InstalledModel,
    Sampling,
    ServedEngine,
    ServedOptions,
    TokenEvent,
    Tokenizer,
)
from contenox.runtime_ov._openai_wire import cache_key, prefix_hash
from support.openai_standin import OpenAIStandin, Reply

PROMPT = "<|im_start|>user\nWhat does add do?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture
def standin(tokenizer: Tokenizer) -> Iterator[OpenAIStandin]:
    with OpenAIStandin(tokenize=tokenizer.encode) as server:
        yield server


def _start(model: InstalledModel, tokenizer: Tokenizer, server: OpenAIStandin, **fields: object) -> ServedEngine:
    return ServedEngine.start(model, ServedOptions(url=server.url, model="smollm2", backoff_s=0.01,
                                                   **fields), tokenizer=tokenizer)  # type: ignore[arg-type]


def _request(tokenizer: Tokenizer, text: str = PROMPT, **fields: object) -> GenerateRequest:
    return GenerateRequest(session_id="ws-abc", token_ids=tokenizer.encode(text), **fields)  # type: ignore[arg-type]


async def test_a_request_streams_its_tokens_and_the_server_cached_count_is_measured(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    standin.replies.append(Reply(pieces=("The", " sum", " of a and b."), cached_tokens=12))
    with _start(default_model, tokenizer, standin, api_key="sk-secret-123") as engine:
        assert engine.tokenizer_check.startswith("matches (/tokenize")
        request = _request(tokenizer, max_new_tokens=40, stop_token_ids=(tokenizer.eos_token_id,), stable_tokens=5)
        handle = engine.submit(request)
        events = [event async for event in handle]
    texts = [e.text for e in events if isinstance(e, TokenEvent)]
    assert texts == ["The", " sum", " of a and b."]
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.finish_reason == "stop"
    assert final.text == "The sum of a and b." and final.token_ids == tokenizer.encode(final.text)
    metrics = final.metrics
    assert metrics.cache_evidence == "server" and metrics.server_cached_tokens == 12
    assert metrics.prompt_tokens == len(request.token_ids)
    assert metrics.measured_recomputed_tokens == len(request.token_ids) - 12
    assert metrics.generated_tokens == 3  # the server's usage.completion_tokens
    [sent] = standin.completions()
    body = sent.body
    assert body["prompt"] == PROMPT  # the ids decoded with their special tokens: the template as written
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 40 and body["temperature"] == 0.0 and body["model"] == "smollm2"
    assert body["stop"] == [tokenizer.decode_raw([tokenizer.eos_token_id])]
    assert body["prompt_cache_key"] == cache_key("ws-abc") and "ws-abc" not in body["prompt_cache_key"]
    assert sent.headers["x-session-id"] == cache_key("ws-abc")
    assert sent.headers["x-contenox-prefix-hash"] == prefix_hash(request.token_ids[:5])
    assert sent.headers["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in caplog.text and "sk-secret-123" not in repr(engine.options)


async def test_stop_tokens_go_as_the_fewest_stop_strings_that_stop_at_each_of_them(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    """A fill that ends at its line stops at any of a few hundred tokens with a line break: the server is sent
    ``"\\n"`` for them all (it stops at a stop string anywhere in the text), each other stop once."""
    standin.replies.append(Reply(pieces=("x = 1",)))
    eos = tokenizer.decode_raw([tokenizer.eos_token_id])
    with _start(default_model, tokenizer, standin) as engine:
        stops = (tokenizer.eos_token_id, *tokenizer.newline_ids(), tokenizer.eos_token_id)
        await engine.submit(_request(tokenizer, max_new_tokens=8, stop_token_ids=stops)).result()
    [sent] = standin.completions()
    assert sent.body["stop"] == [eos, "\n"]


async def test_llama_cpp_timings_are_evidence_and_a_server_without_any_leaves_the_prediction(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies += [Reply(style="llama", cached_tokens=7), Reply(style="none")]
    with _start(default_model, tokenizer, standin) as engine:
        first = await engine.submit(_request(tokenizer, PROMPT * 4)).result()
        assert first.metrics.cache_evidence == "server" and first.metrics.server_cached_tokens == 7
        # the block model committed the first prompt: the second is predicted cached up to its last whole block
        request = _request(tokenizer, PROMPT * 4)
        predicted = engine.predict_cached(request.token_ids)
        second = await engine.submit(request).result()
    assert predicted > 0
    assert second.metrics.cache_evidence == "predicted" and second.metrics.server_cached_tokens is None
    assert second.metrics.predicted_cached_tokens == predicted
    assert second.metrics.measured_recomputed_tokens == len(request.token_ids) - predicted


async def test_token_prompts_send_the_ids_and_take_the_server_ids(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies.append(Reply(pieces=("ab", "c"), ids=((10, 11), (12,)), finish_reason="length"))
    with _start(default_model, tokenizer, standin, token_prompt=True) as engine:
        request = _request(tokenizer, sampling=Sampling(temperature=0.7, top_p=0.9, seed=3), grammar="root ::= \"x\"")
        final = await engine.submit(request).result()
        assert engine.unsupported  # a grammar and no grammar_field: not sent, and said
    assert final.token_ids == [10, 11, 12] and final.text == "abc" and final.finish_reason == "length"
    body = standin.completions()[0].body
    assert body["prompt"] == request.token_ids and body["return_token_ids"] is True
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 3)
    assert "grammar" not in body


async def test_a_grammar_goes_in_the_configured_field(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    with _start(default_model, tokenizer, standin, grammar_field="grammar") as engine:
        await engine.submit(_request(tokenizer, grammar='root ::= "yes"')).result()
        assert not engine.unsupported
    assert standin.completions()[0].body["grammar"] == 'root ::= "yes"'


async def test_cancel_closes_the_stream_and_ends_the_request_cancelled(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies.append(Reply(pieces=tuple(f" w{i}" for i in range(200)), delay_s=0.02))
    with _start(default_model, tokenizer, standin) as engine:
        handle = engine.submit(_request(tokenizer))
        seen = []
        async for event in handle:
            if isinstance(event, TokenEvent):
                seen.append(event.text)
                if len(seen) == 2:
                    handle.cancel()
            elif isinstance(event, FinalEvent):
                final = event
        assert final.finish_reason == "cancelled" and final.text.startswith(" w0 w1")
        assert len(final.text.split()) < 200
        assert await asyncio.to_thread(standin.disconnected.wait, 5.0)  # the server saw the client go
        assert engine.stats().queue_depth == 0 and not engine.stats().running


async def test_429_and_503_are_retried_with_backoff_before_any_token(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies += [Reply(status=429, retry_after="0"), Reply(status=503), Reply(pieces=("ok",))]
    with _start(default_model, tokenizer, standin) as engine:
        final = await engine.submit(_request(tokenizer)).result()
    assert final.text == "ok" and len(standin.completions()) == 3


async def test_retries_run_out_with_an_error_naming_the_server_and_the_status(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies += [Reply(status=429, error="slow down"), Reply(status=429, error="slow down")]
    with _start(default_model, tokenizer, standin, retries=1) as engine:
        with pytest.raises(ServingError) as caught:
            await engine.submit(_request(tokenizer)).result()
    error = caught.value
    assert error.details["status"] == 429 and error.details["server"] == standin.url
    assert f"serving engine {standin.url} answered 429" in error.message and "slow down" in error.message
    assert "after 2 attempts" in error.message


async def test_a_500_fails_at_once_and_so_does_an_error_mid_stream(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies += [Reply(status=500, error="CUDA out of memory"), Reply(error_mid_stream=True, error="boom")]
    with _start(default_model, tokenizer, standin) as engine:
        with pytest.raises(ServingError) as first:
            await engine.submit(_request(tokenizer)).result()
        assert first.value.details["status"] == 500 and "CUDA out of memory" in first.value.message
        assert len(standin.completions()) == 1  # not retried
        with pytest.raises(ServingError, match="mid-stream: boom"):
            await engine.submit(_request(tokenizer)).result()
        assert engine.alive  # a failed request leaves the engine usable
        assert (await engine.submit(_request(tokenizer)).result()).text == "Hello world."


def test_a_blocking_generate_works_outside_an_event_loop(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    with _start(default_model, tokenizer, standin) as engine:
        assert engine.generate(_request(tokenizer), timeout=30).text == "Hello world."


def test_a_server_with_another_tokenizer_is_refused_at_start(
        default_model: InstalledModel, tokenizer: Tokenizer) -> None:
    with OpenAIStandin(tokenize=lambda text: [t + 1 for t in tokenizer.encode(text)]) as server:
        with pytest.raises(TokenizerMismatch, match="tokenizes differently from smollm2-135m") as caught:
            _start(default_model, tokenizer, server)
    assert caught.value.details["server"] == server.url
    # no /tokenize (OVMS): the usage of a 1-token completion of the probe is counted instead
    with OpenAIStandin(tokenize=None, prompt_tokens=lambda prompt: len(tokenizer.encode(prompt)) + 5) as server:
        with pytest.raises(TokenizerMismatch, match="counts a probe as"):
            _start(default_model, tokenizer, server)
    with OpenAIStandin(tokenize=None, prompt_tokens=lambda prompt: len(tokenizer.encode(prompt))) as server:
        with _start(default_model, tokenizer, server) as engine:
            assert engine.tokenizer_check.startswith("matches (usage.prompt_tokens")


def test_an_unreachable_server_is_a_serving_error_naming_it(default_model: InstalledModel,
                                                           tokenizer: Tokenizer) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ServingError, match=re.escape(f"serving engine {url} cannot be reached")):
        ServedEngine.start(default_model, ServedOptions(url=url, model="m"), tokenizer=tokenizer)


def test_options_from_config_read_the_key_and_name_a_missing_url(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"engine\.url is empty"):
        ServedOptions.from_config(EngineConfig(backend="openai"), "smollm2-135m")
    monkeypatch.setenv("TEAM_LLM_KEY", "sk-from-env")
    options = ServedOptions.from_config(EngineConfig(backend="openai", url="https://llm.team:8443/v1",
                                                     api_key_env="TEAM_LLM_KEY", retries=5), "smollm2-135m")
    assert options.api_key == "sk-from-env" and options.model == "smollm2-135m" and options.retries == 5
    assert "sk-from-env" not in repr(options)
    (tmp_path / "key").write_text("sk-from-file\n")
    options = ServedOptions.from_config(EngineConfig(url="http://h/v1", model="qwen", api_key_file=str(tmp_path / "key")),
                                        "x")
    assert options.api_key == "sk-from-file" and options.model == "qwen"


async def test_candidates_of_one_group_are_separate_streams_and_a_warm_up_is_one_token(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    with _start(default_model, tokenizer, standin) as engine:
        handles = [engine.submit(_request(tokenizer, group="g1", sampling=Sampling(seed=seed) if seed else None))
                   for seed in range(3)]
        finals = await asyncio.gather(*(h.result() for h in handles))
        warm = await engine.warm("ws-abc", tokenizer.encode(PROMPT))
    assert [f.text for f in finals] == ["Hello world."] * 3 and warm.finish_reason == "stop"
    bodies = [r.body for r in standin.completions()]
    assert sorted(b.get("seed", -1) for b in bodies[:3]) == [-1, 1, 2] and bodies[3]["max_tokens"] == 1


async def test_a_silent_server_times_out_and_closing_ends_what_runs(
        default_model: InstalledModel, tokenizer: Tokenizer, standin: OpenAIStandin) -> None:
    standin.replies += [Reply(pieces=("late",), delay_s=1.5),
                        Reply(pieces=tuple(f" w{i}" for i in range(200)), delay_s=0.02)]
    engine = _start(default_model, tokenizer, standin, timeout_s=0.3)
    with pytest.raises(ServingError, match=r"sent nothing for 0\.3 s \(engine\.timeout_s\)"):
        await engine.submit(_request(tokenizer)).result()
    handle = engine.submit(_request(tokenizer))
    async for event in handle:
        if isinstance(event, TokenEvent):
            break
    await asyncio.to_thread(engine.close)
    final = await handle.result()
    assert final.finish_reason == "cancelled" and not engine.alive
    with pytest.raises(EngineBusy, match="closed"):
        engine.submit(_request(tokenizer))
