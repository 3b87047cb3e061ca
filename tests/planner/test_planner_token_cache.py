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


def test_cache_is_bounded_by_the_ids_it_holds(tokenizer):
    """Issue #16 (node RSS): 4096 entries of big segments held far more than their count suggests."""
    texts = [f"def function_{n}(x):\n    return x * {n} + {n * 7}\n" * 8 for n in range(20)]
    sizes = [len(tokenizer.encode(t)) for t in texts]
    cache = TokenCache(tokenizer, max_tokens=sum(sizes[:5]))
    for text in texts:
        cache.ids(text)
    assert cache.held_tokens <= sum(sizes[:5])
    kept = len(cache._entries)
    assert 0 < kept < 20 and cache.held_tokens == sum(sizes[-kept:])  # the newest texts, oldest evicted first
    chars = cache.encoded_chars
    cache.ids(texts[-1])  # the newest stayed
    assert cache.encoded_chars == chars
    cache.ids(texts[0])  # the oldest went
    assert cache.encoded_chars == chars + len(texts[0])
    huge = TokenCache(tokenizer, max_tokens=1)
    assert huge.ids(texts[0]) == tuple(tokenizer.encode(texts[0]))  # an entry over the bound is still served
    assert huge.held_tokens == sizes[0]
