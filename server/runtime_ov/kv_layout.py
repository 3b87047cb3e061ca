"""The model's KV geometry (layers, KV heads, head size) and the cache capacity it implies.

Read from GGUF metadata (the fast header reader) or an IR directory's ``config.json``; used to turn the
configured cache size in GB into a number of 32-token blocks, which the engine passes to the
pipeline as ``num_kv_blocks`` so the block model's capacity is exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from contenox.errors import ContenoxError

__all__ = ["KvLayout", "read_kv_layout"]

# Per-(layer, KV head, token) overhead of u8 KV on CPU (scale/zero-point), measured on SmolLM2:
# 13,680 bytes/token = 30 layers * 3 heads * 2 (K, V) * (64 + 12).
_U8_OVERHEAD = 12


class KvLayout(msgspec.Struct, frozen=True, kw_only=True):
    layers: int
    kv_heads: int
    head_dim: int
    context_length: int | None = None

    def bytes_per_token(self, precision: str = "auto") -> int:
        """Estimated KV bytes per token (CPU default: u8 for head_dim >= 64, else f16)."""
        if precision == "auto":
            precision = "u8" if self.head_dim >= 64 else "f16"
        per_head = self.head_dim + _U8_OVERHEAD if precision == "u8" else 2 * self.head_dim
        return 2 * self.layers * self.kv_heads * per_head

    def blocks_for(self, cache_size_gb: float, precision: str = "auto", block_size: int = 32) -> int:
        block_bytes = self.bytes_per_token(precision) * block_size
        return max(1, int(cache_size_gb * (1 << 30)) // block_bytes)


def _gguf_layout(path: Path) -> KvLayout:
    from contenox.runtime_ov.gguf_header import gguf_metadata

    fields = gguf_metadata(path)

    def value(suffix: str) -> int | None:
        for name, found in fields.items():
            if name.endswith(suffix) and isinstance(found, int | float) and not isinstance(found, bool):
                return int(found)
        return None

    layers = value(".block_count")
    heads = value(".attention.head_count")
    embedding = value(".embedding_length")
    if layers is None or heads is None or embedding is None:
        raise ValueError(f"{path}: GGUF metadata lacks block_count/head_count/embedding_length")
    kv_heads = value(".attention.head_count_kv") or heads
    head_dim = value(".attention.key_length") or embedding // heads
    return KvLayout(layers=layers, kv_heads=kv_heads, head_dim=head_dim, context_length=value(".context_length"))


def _ir_layout(directory: Path) -> KvLayout:
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    heads = int(config["num_attention_heads"])
    return KvLayout(
        layers=int(config["num_hidden_layers"]),
        kv_heads=int(config.get("num_key_value_heads") or heads),
        head_dim=int(config.get("head_dim") or int(config["hidden_size"]) // heads),
        context_length=config.get("max_position_embeddings"),
    )


def read_kv_layout(weights: Path) -> KvLayout | None:
    """The KV layout of a GGUF file or IR directory; None when it cannot be read."""
    try:
        return _ir_layout(weights) if weights.is_dir() else _gguf_layout(weights)
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError, ContenoxError):
        return None
