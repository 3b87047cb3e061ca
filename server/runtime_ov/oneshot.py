"""Tier 0: a one-shot answer from a plain ``LLMPipeline`` (the baseline and the fallback).

No engine thread, no prefix cache kept between calls, no session: load, answer, release. The
CLI uses it when no node is running (``contenox ask --oneshot``) and the benchmarks use it as the
baseline.

    from contenox.runtime_ov.oneshot import answer
    result = answer(model, [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}], 256)
    result.text, result.token_ids, result.finish_reason, result.prompt_tokens
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from contenox.errors import InvalidRequest, OverContext
from contenox.runtime_ov._ov_errors import translate_ov_error
from contenox.runtime_ov._runner import choose_device
from contenox.runtime_ov.gguf_header import check_weights
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer

__all__ = ["OneShotAnswer", "answer"]

log = logging.getLogger(__name__)


class OneShotAnswer(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    token_ids: list[int]
    finish_reason: str
    """"stop" (EOS) or "length" (max_new_tokens reached)."""
    prompt_tokens: int
    load_ms: float
    generate_ms: float
    device: str


def _prompt_ids(tokenizer: Tokenizer, prompt: Sequence[int] | Sequence[Mapping[str, str]]) -> list[int]:
    items = list(prompt)
    if not items:
        raise InvalidRequest("the prompt is empty")
    if all(isinstance(item, Mapping) for item in items):
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in items]  # type: ignore[index]
        return tokenizer.encode(tokenizer.apply_chat_template(messages, add_generation_prompt=True))
    if all(isinstance(item, int) for item in items):
        return [int(t) for t in items]  # type: ignore[call-overload]
    raise InvalidRequest("prompt must be token ids or role/content messages, not a mix")


def answer(model: InstalledModel, prompt: Sequence[int] | Sequence[Mapping[str, str]],
           max_new_tokens: int = 256, *, device: str = "", tokenizer: Tokenizer | None = None) -> OneShotAnswer:
    """Greedy answer to ``prompt`` (token ids, or chat messages rendered with the model's template).

    Raises OverContext when prompt + max_new_tokens exceeds the profile's tested context, and the
    translated OpenVINO error when loading or generating fails.
    """
    import numpy as np
    import openvino as ov
    import openvino_genai as ov_genai

    check_weights(model.weights)
    tokenizer = tokenizer or load_tokenizer(model.weights)
    ids = _prompt_ids(tokenizer, prompt)
    limit = model.profile.max_tested_context
    need = len(ids) + max_new_tokens
    if need > limit:
        raise OverContext(f"prompt of {len(ids)} tokens + {max_new_tokens} new tokens exceeds the tested "
                          f"context of {model.profile.id} ({limit}) by {need - limit} tokens",
                          over_by=need - limit, limit=limit)
    started = time.perf_counter()
    try:
        chosen = choose_device(list(model.profile.device_preference), device, list(ov.Core().available_devices))
        pipe: Any = ov_genai.LLMPipeline(str(model.weights), chosen)
        loaded = time.perf_counter()
        config = ov_genai.GenerationConfig()
        config.max_new_tokens = max_new_tokens
        config.do_sample = False
        if tokenizer.eos_token_id >= 0:
            config.eos_token_id = tokenizer.eos_token_id
            config.stop_token_ids = {tokenizer.eos_token_id}
        result = pipe.generate(ov.Tensor(np.array([ids], dtype=np.int64)), config)
    except (RuntimeError, IndexError) as exc:
        raise translate_ov_error(exc, doing=f"one-shot answer with {model.name}") from exc
    done = time.perf_counter()
    tokens = [int(t) for t in result.tokens[0]]
    reason = "stop" if (tokens and tokens[-1] == tokenizer.eos_token_id) or len(tokens) < max_new_tokens else "length"
    return OneShotAnswer(text=tokenizer.decode(tokens), token_ids=tokens, finish_reason=reason,
                         prompt_tokens=len(ids), load_ms=(loaded - started) * 1000.0,
                         generate_ms=(done - loaded) * 1000.0, device=chosen)
