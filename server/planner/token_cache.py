"""Segment text -> token ids, computed once per distinct text and reused by byte hash.

The planner tokenizes each segment on its own and joins the ids; an unchanged segment costs a dict
lookup, not a tokenizer call. Long texts are encoded in pieces split where the model's
pre-tokenizer cannot merge across the cut (a newline preceded and followed by non-whitespace), so
the joined ids equal the ids of the whole text and no tokenizer length limit truncates them.
"""

from __future__ import annotations

import hashlib
import logging
import re
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import msgspec

__all__ = ["TokenCache", "TokenEntry", "TokenizerLike", "byte_hash", "token_hash"]

log = logging.getLogger(__name__)

_PIECE_CHARS = 6000
"""Encode texts longer than this in pieces (the GGUF tokenizer truncates one call at 8192 ids)."""
_SAFE_CUT = re.compile(r"(?<=\S\n)(?=\S)")
_WORD_CUT = re.compile(r"(?<=\S)(?= \w)")


class TokenizerLike(Protocol):
    """What the planner needs of :class:`contenox.runtime_ov.Tokenizer`."""

    chat_template: str

    def encode(self, text: str) -> list[int]: ...

    def apply_chat_template(self, messages: Sequence[dict[str, str]], *,
                            add_generation_prompt: bool = True) -> str: ...


def byte_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def token_hash(ids: Sequence[int]) -> str:
    return hashlib.sha256(array("q", ids).tobytes()).hexdigest()


def _cut_points(text: str, limit: int) -> list[int]:
    """Offsets that split ``text`` into pieces of at most ~``limit`` chars at safe places."""
    cuts: list[int] = []
    start = 0
    while len(text) - start > limit:
        window_end = start + limit
        best = -1
        for pattern in (_SAFE_CUT, _WORD_CUT):
            for match in pattern.finditer(text, start + 1, window_end):
                best = match.start()
            if best > start:
                break
        if best <= start:
            best = window_end
            log.warning("planner: no safe tokenizer cut in %d chars; cutting at offset %d", limit, best)
        cuts.append(best)
        start = best
    return cuts


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

    def __init__(self, tokenizer: TokenizerLike, max_entries: int = 4096) -> None:
        self._tok = tokenizer
        self._max = max_entries
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
        if len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return entry

    def ids(self, text: str) -> tuple[int, ...]:
        return self.lookup(text).ids

    def count(self, text: str) -> int:
        return len(self.lookup(text).ids)

    def _encode(self, text: str) -> list[int]:
        self.encoded_chars += len(text)
        if len(text) <= _PIECE_CHARS:
            return self._encode_piece(text)
        ids: list[int] = []
        start = 0
        for cut in [*_cut_points(text, _PIECE_CHARS), len(text)]:
            ids.extend(self._encode_piece(text[start:cut]))
            start = cut
        return ids

    def _encode_piece(self, text: str) -> list[int]:
        ids = self._tok.encode(text)
        if len(ids) >= 8192 and len(text) > 1:  # a tokenizer limit may have truncated it: halve and retry
            cut = _cut_points(text, len(text) // 2)
            mid = cut[0] if cut else len(text) // 2
            return self._encode_piece(text[:mid]) + self._encode_piece(text[mid:])
        return ids
