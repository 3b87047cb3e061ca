"""Token ids by byte hash: reused when unchanged, bounded."""

from __future__ import annotations

from contenox.planner.token_cache import TokenCache, byte_hash, token_hash


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
