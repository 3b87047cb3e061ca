"""Segment text -> token ids, computed once per distinct text and reused by byte hash.

The planner tokenizes each segment on its own and joins the ids; an unchanged segment costs a dict
lookup, not a tokenizer call. Long texts are encoded in pieces split where the model's
pre-tokenizer cannot merge across the cut (a newline preceded and followed by non-whitespace), so
the joined ids equal the ids of the whole text and no tokenizer length limit truncates them.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

__all__ = ["TokenCache", "TokenEntry", "TokenizerLike", "byte_hash", "token_hash"]


class TokenizerLike(Protocol):
    """What the planner needs of :class:`contenox.runtime_ov.Tokenizer`."""

    chat_template: str

    def encode(self, text: str) -> list[int]: ...

    def apply_chat_template(self, messages: Sequence[dict[str, str]], *,
                            add_generation_prompt: bool = True,
                            tools: Sequence[dict[str, Any]] | None = None) -> str: ...


def byte_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def token_hash(ids: Sequence[int]) -> str:
    return hashlib.sha256(array("q", ids).tobytes()).hexdigest()


class TokenEntry(msgspec.Struct, frozen=True):
    ids: tuple[int, ...]
    token_hash: str
    byte_hash: str


class TokenCache:
    """Token ids, token hash and byte hash of texts, keyed by the text itself; bounded LRU.

    Keying by the ``str`` (whose hash Python computes once per object, then compares by memcmp on
    a hit) keeps a lookup of an unchanged 200 kB segment far below a millisecond; the sha256 byte
    hash is computed once, on the miss.
    """

    def __init__(self, tokenizer: TokenizerLike, max_entries: int = 4096, max_tokens: int = 1_000_000) -> None:
        self._tok = tokenizer
        self._max = max_entries
        self._max_tokens = max_tokens
        """The ids held in all (a big segment's ids weigh ~36 bytes each as a tuple of ints): the node's memory
        stays bounded however many distinct texts a long session tokenizes."""
        self._tokens = 0
        self._entries: OrderedDict[str, TokenEntry] = OrderedDict()
        self.encoded_chars = 0
        """Characters actually sent to the tokenizer (a cache miss counter for tests and benches)."""

    def lookup(self, text: str) -> TokenEntry:
        hit = self._entries.get(text)
        if hit is not None:
            self._entries.move_to_end(text)
            return hit
        ids = tuple(self._encode(text))
        entry = TokenEntry(ids, token_hash(ids), byte_hash(text))
        self._entries[text] = entry
        self._tokens += len(ids)
        while len(self._entries) > 1 and (len(self._entries) > self._max or self._tokens > self._max_tokens):
            _, dropped = self._entries.popitem(last=False)
            self._tokens -= len(dropped.ids)
        return entry

    @property
    def held_tokens(self) -> int:
        """Token ids held (what the ``max_tokens`` bound counts)."""
        return self._tokens

    def ids(self, text: str) -> tuple[int, ...]:
        return self.lookup(text).ids

    def count(self, text: str) -> int:
        return len(self.lookup(text).ids)

    def _encode(self, text: str) -> list[int]:
        self.encoded_chars += len(text)
        return self._tok.encode(text)
