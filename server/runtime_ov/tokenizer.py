"""The model's tokenizer, as the planner sees it: text -> ids, ids -> text, the chat template.

Wraps ``openvino_genai.Tokenizer`` (reads GGUF files and IR directories). Encoding never adds
special tokens: the planner tokenizes each segment on its own and joins the ids.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contenox.errors import ModelNotFound, ProfileMismatch

__all__ = ["Tokenizer", "cut_points", "load_tokenizer"]

log = logging.getLogger(__name__)

_PIECE_CHARS = 6000
"""Texts longer than this are encoded in pieces: one native call stops at the model's context
length (8192 ids for the SmolLM2 GGUF) whatever ``max_length`` says."""
_NATIVE_LIMIT = 8192
_SAFE_CUT = re.compile(r"(?<=\S\n)(?=\S)")
"""After a newline that ends a non-blank line, before a non-space: no BPE pre-token spans it."""
_WORD_CUT = re.compile(r"(?<=\S)(?= \w)")
"""Before a space-prefixed word: pre-tokenizers start a new pre-token there."""


def cut_points(text: str, limit: int) -> list[int]:
    """Offsets that split ``text`` into pieces of at most ~``limit`` chars where the tokenizer
    cannot merge across the cut, so encoding the pieces and joining the ids equals one encode."""
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
            log.warning("tokenizer: no safe cut in %d chars; cutting at offset %d", limit, best)
        cuts.append(best)
        start = best
    return cuts


class Tokenizer:
    """A loaded tokenizer; thread-safe: its native calls take turns (two threads encoding at once with OpenVINO's
    tokenizer deadlocked the node: the tool check's two prompts, encoded side by side)."""

    def __init__(self, native: Any, path: Path) -> None:
        self._tok = native
        self._lock = threading.Lock()
        self.path = path
        self.chat_template: str = str(native.chat_template or "")
        self.bos_token_id: int = int(native.get_bos_token_id())
        self.eos_token_id: int = int(native.get_eos_token_id())
        self._newline_ids: tuple[int, ...] | None = None

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens added, however long the text."""
        if len(text) <= _PIECE_CHARS:
            return self._encode_piece(text)
        ids: list[int] = []
        start = 0
        for cut in [*cut_points(text, _PIECE_CHARS), len(text)]:
            ids.extend(self._encode_piece(text[start:cut]))
            start = cut
        return ids

    def _encode_piece(self, text: str) -> list[int]:
        if not text:
            return []
        with self._lock:  # the result's tensor may be the native tokenizer's own buffer: read it before another call
            result = self._tok.encode(text, add_special_tokens=False)
            ids = [int(i) for i in result.input_ids.data[0]]
        if len(ids) >= _NATIVE_LIMIT and len(text) > 1:  # the native call may have truncated: halve
            cuts = cut_points(text, len(text) // 2)
            mid = cuts[0] if cuts else len(text) // 2
            return self._encode_piece(text[:mid]) + self._encode_piece(text[mid:])
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        if not ids:
            return ""
        with self._lock:
            return str(self._tok.decode(list(ids), skip_special_tokens=True))

    def newline_ids(self) -> tuple[int, ...]:
        """The ids of every token whose text holds a line break (``"\\n"``, ``"):\\n"``, ``"\\n    "``): as stop
        tokens they end a generation at the end of its line, the token itself the last one drawn. Found once, from
        the vocabulary (its pieces as text, or byte-level ``Ċ``, SentencePiece ``<0x0A>``), each checked by
        decoding it; () when the tokenizer does not list its vocabulary."""
        if self._newline_ids is None:
            with self._lock:
                vocab = self._tok.get_vocab() if hasattr(self._tok, "get_vocab") else {}
                marked = sorted(int(i) for piece, i in vocab.items() if any(
                    mark in piece for mark in ((b"\n", b"<0x0A>", "\u010a".encode()) if isinstance(piece, bytes)
                                               else ("\n", "<0x0A>", "\u010a"))))
                self._newline_ids = tuple(i for i in marked
                                          if "\n" in str(self._tok.decode([i], skip_special_tokens=False)))
        return self._newline_ids

    def decode_raw(self, ids: Sequence[int]) -> str:
        """Decode keeping special tokens (for debugging and template checks)."""
        if not ids:
            return ""
        with self._lock:
            return str(self._tok.decode(list(ids), skip_special_tokens=False))

    def apply_chat_template(self, messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True,
                            tools: Sequence[dict[str, Any]] | None = None) -> str:
        """Render the model's chat template for ``messages`` (role/content dicts); ``tools``: function
        definitions rendered the way the template renders tools (Qwen2.5: in the system turn)."""
        import openvino_genai as ov_genai

        history = ov_genai.ChatHistory()
        for message in messages:
            history.append(dict(message))
        with self._lock:
            if tools:
                return str(self._tok.apply_chat_template(history, add_generation_prompt=add_generation_prompt,
                                                         tools=list(tools)))
            return str(self._tok.apply_chat_template(history, add_generation_prompt=add_generation_prompt))


def load_tokenizer(weights: Path) -> Tokenizer:
    """Load the tokenizer of a GGUF file or an OpenVINO IR directory."""
    if not weights.exists():
        raise ModelNotFound(f"model weights not found: {weights}", path=str(weights))
    import openvino_genai as ov_genai

    try:
        native = ov_genai.Tokenizer(str(weights))
    except RuntimeError as exc:
        raise ProfileMismatch(f"cannot load a tokenizer from {weights}: {exc}", path=str(weights)) from exc
    return Tokenizer(native, weights)
