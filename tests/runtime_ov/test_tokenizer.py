"""The real SmolLM2 tokenizer: no special tokens, long texts encoded in safe pieces, never truncated."""

from __future__ import annotations

from contenox.runtime_ov import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer, cut_points, load_tokenizer


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


def test_the_tokens_with_a_line_break_are_found_once_and_are_exactly_those(tokenizer: Tokenizer) -> None:
    ids = tokenizer.newline_ids()
    assert ids is tokenizer.newline_ids() and len(ids) > 10 and all("\n" in tokenizer.decode_raw([i]) for i in ids)
    text = _code(3) + "x = (1,\n     2)\r\n\n\n    y = 3\n"
    tokens = tokenizer.encode(text)
    assert {t for t in tokens if "\n" in tokenizer.decode_raw([t])} <= set(ids)
    assert not {t for t in tokens if "\n" not in tokenizer.decode_raw([t])} & set(ids)


def test_chat_template_renders_the_system_and_user_turns(tokenizer: Tokenizer) -> None:
    rendered = tokenizer.apply_chat_template([{"role": "system", "content": "SYS-A"},
                                              {"role": "user", "content": "USER-I"}])
    assert rendered == "<|im_start|>system\nSYS-A<|im_end|>\n<|im_start|>user\nUSER-I<|im_end|>\n<|im_start|>assistant\n"


def test_threads_encoding_at_once_on_a_cold_tokenizer_get_what_one_thread_gets(fim_model: InstalledModel) -> None:
    """The node encodes from several threads at once (the tool check's two prompts, a turn beside an
    anticipation), the first time right after loading: the native calls take turns, none deadlocks, each gets its
    own ids. (Without the turns, two of three cold starts of qwen2.5-coder-1.5b's tokenizer hung here; the 0.5B's
    did not in three: this guards the turns, the opt-in agent test drives the 1.5B.)"""
    import threading

    tokenizer = load_tokenizer(fim_model.weights)  # cold: nothing encoded yet
    texts = [f"Request: {word} the file src/app_{i}.py, then run the tests." * (1 + i % 5)
             for i, word in enumerate(["Show", "Read", "Open", "Search", "List", "Explain"] * 4)]
    got: dict[int, list[int]] = {}

    def work(i: int) -> None:
        for _ in range(10):
            got[i] = tokenizer.encode(texts[i])
            assert tokenizer.decode(got[i])

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck in the tokenizer"
    assert [got[i] for i in range(len(texts))] == [tokenizer.encode(t) for t in texts]
