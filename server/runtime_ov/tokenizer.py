"""The model's tokenizer, as the planner sees it: text -> ids, ids -> text, the chat template.

Wraps ``openvino_genai.Tokenizer`` (reads GGUF files and IR directories). Encoding never adds
special tokens: the planner tokenizes each segment on its own and joins the ids.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contenox.errors import ModelNotFound, ProfileMismatch

__all__ = ["Tokenizer", "load_tokenizer"]

log = logging.getLogger(__name__)


class Tokenizer:
    """A loaded tokenizer; thread-safe for encode/decode."""

    def __init__(self, native: Any, path: Path) -> None:
        self._tok = native
        self.path = path
        self.chat_template: str = str(native.chat_template or "")
        self.bos_token_id: int = int(native.get_bos_token_id())
        self.eos_token_id: int = int(native.get_eos_token_id())

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens added."""
        if not text:
            return []
        result = self._tok.encode(text, add_special_tokens=False)
        return [int(i) for i in result.input_ids.data[0]]

    def decode(self, ids: Sequence[int]) -> str:
        if not ids:
            return ""
        return str(self._tok.decode(list(ids), skip_special_tokens=True))

    def decode_raw(self, ids: Sequence[int]) -> str:
        """Decode keeping special tokens (for debugging and template checks)."""
        if not ids:
            return ""
        return str(self._tok.decode(list(ids), skip_special_tokens=False))

    def apply_chat_template(self, messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
        """Render the model's chat template for ``messages`` (role/content dicts)."""
        import openvino_genai as ov_genai

        history = ov_genai.ChatHistory()
        for message in messages:
            history.append(dict(message))
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
