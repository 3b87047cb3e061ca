"""The real SmolLM2 tokenizer: no special tokens, long texts encoded in safe pieces, never truncated."""

from __future__ import annotations

from contenox.runtime_ov.tokenizer import Tokenizer, cut_points


def _code(functions: int) -> str:
    out = [f"def function_{i}(value):\n    if value > {i}:\n        return value * {i}  # note\n\n"
           for i in range(functions)]
    return "".join(out) + "CONSTANT = 1\n"


def test_encode_adds_no_special_tokens(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("hello world")
    assert tokenizer.bos_token_id not in ids and tokenizer.decode_raw(ids) == "hello world"
    assert tokenizer.encode("") == []


def test_pieces_give_the_ids_of_one_native_call(tokenizer: Tokenizer) -> None:
    text = _code(220)  # ~18k chars: cut into pieces, yet under the native 8192-id limit as a whole
    assert len(cut_points(text, 6000)) >= 2
    assert tokenizer.encode(text) == tokenizer._encode_piece(text)


def test_texts_beyond_the_native_limit_are_not_truncated(tokenizer: Tokenizer) -> None:
    text = _code(2000)
    ids = tokenizer.encode(text)
    assert len(ids) > 8192
    assert tokenizer.decode_raw(ids) == text


def test_chat_template_renders_the_system_and_user_turns(tokenizer: Tokenizer) -> None:
    rendered = tokenizer.apply_chat_template([{"role": "system", "content": "SYS-A"},
                                              {"role": "user", "content": "USER-I"}])
    assert rendered == "<|im_start|>system\nSYS-A<|im_end|>\n<|im_start|>user\nUSER-I<|im_end|>\n<|im_start|>assistant\n"
