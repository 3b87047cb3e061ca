"""Tier 0: the plain LLMPipeline one-shot answer on the real SmolLM2."""

from __future__ import annotations

import pytest

from contenox.errors import InvalidRequest, OverContext
from contenox.runtime_ov import InstalledModel, load_tokenizer
from contenox.runtime_ov.oneshot import _prompt_ids, answer

MESSAGES = [{"role": "system", "content": "You are a helpful coding assistant."},
            {"role": "user", "content": "Write a Python function that reverses a string."}]


def test_answer_from_messages(default_model: InstalledModel) -> None:
    tokenizer = load_tokenizer(default_model.weights)
    result = answer(default_model, MESSAGES, 24, tokenizer=tokenizer)
    assert result.prompt_tokens == len(tokenizer.encode(tokenizer.apply_chat_template(MESSAGES)))
    assert 0 < len(result.token_ids) <= 24
    assert result.text.strip() and result.text == tokenizer.decode(result.token_ids)
    assert result.finish_reason in ("stop", "length") and result.device == "CPU"


def test_messages_and_token_ids_give_the_same_prompt(default_model: InstalledModel) -> None:
    tokenizer = load_tokenizer(default_model.weights)
    ids = tokenizer.encode(tokenizer.apply_chat_template(MESSAGES))
    assert _prompt_ids(tokenizer, MESSAGES) == ids
    assert _prompt_ids(tokenizer, ids) == ids


def test_over_context_and_bad_prompts(default_model: InstalledModel) -> None:
    limit = default_model.profile.max_tested_context
    with pytest.raises(OverContext, match="by 10 tokens"):
        answer(default_model, [5] * (limit - 90), 100)
    with pytest.raises(InvalidRequest):
        answer(default_model, [], 10)
    with pytest.raises(InvalidRequest):
        answer(default_model, [1, {"role": "user", "content": "x"}], 10)  # type: ignore[list-item]
