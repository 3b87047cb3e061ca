"""Token ids by byte hash: reused when unchanged, long texts encoded in pieces with the same ids."""

from __future__ import annotations

from contenox.planner.token_cache import TokenCache, _cut_points, byte_hash, token_hash


def _code(lines: int) -> str:
    out = []
    for i in range(lines):
        out.append(f"def function_{i}(value):\n    if value > {i}:\n        return value * {i}  # note\n\n")
    return "".join(out) + "CONSTANT = 1\n"


def test_pieces_encode_to_the_ids_of_the_whole_text(tokenizer):
    text = _code(220)  # ~18k chars: three pieces, still under the tokenizer's 8192-id limit as a whole
    assert len(_cut_points(text, 6000)) >= 2
    cache = TokenCache(tokenizer)
    assert list(cache.ids(text)) == tokenizer.encode(text)


def test_texts_beyond_the_tokenizer_limit_are_not_truncated(tokenizer):
    text = _code(2000)
    cache = TokenCache(tokenizer)
    ids = cache.ids(text)
    assert len(ids) > 8192
    assert tokenizer.decode(list(ids)) == text


def test_unchanged_text_is_not_tokenized_again(tokenizer):
    cache = TokenCache(tokenizer)
    first = cache.lookup("hello world")
    chars = cache.encoded_chars
    assert cache.lookup("hello " + "world") == first  # an equal string, not the same object
    assert cache.encoded_chars == chars
    assert first.token_hash == token_hash(first.ids)
    assert first.byte_hash == byte_hash("hello world")


def test_cache_is_bounded(tokenizer):
    cache = TokenCache(tokenizer, max_entries=2)
    for word in ("a", "b", "c"):
        cache.ids(word)
    chars = cache.encoded_chars
    cache.ids("a")  # evicted: encoded again
    assert cache.encoded_chars == chars + 1
