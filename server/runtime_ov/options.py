"""Engine options: cache size, prefill chunk, batch and device, from the typed config.

Every field the config also has takes its default from :class:`~contenox.config.EngineConfig`, so an
engine started without options decodes like the node's (one set of defaults, kept in ``config.py``).
"""

from __future__ import annotations

import msgspec

from contenox.config import EngineConfig

__all__ = ["EngineOptions"]

_CONFIG = EngineConfig()


class EngineOptions(msgspec.Struct, frozen=True, kw_only=True):
    cache_size_gb: float = _CONFIG.cache_size_gb
    """KV cache kept by the engine (turned into a whole number of 32-token blocks)."""
    chunk_tokens: int = _CONFIG.chunk_tokens
    """Split-fuse prefill chunk (``max_num_batched_tokens``); cancellation granularity in prefill."""
    max_num_seqs: int = _CONFIG.max_num_seqs
    max_new_tokens: int = _CONFIG.max_new_tokens
    """Default for requests that ask for 0 new tokens."""
    repetition_penalty: float = _CONFIG.repetition_penalty
    threads: int = _CONFIG.threads
    """Inference threads; 0 lets OpenVINO decide."""
    device: str = ""
    """Empty: the first of the profile's device_preference that OpenVINO reports, else CPU."""
    max_queued: int = 64
    """Requests waiting beyond this are refused with OverBatch."""

    @classmethod
    def from_config(cls, engine: EngineConfig, *, device: str = "") -> EngineOptions:
        return cls(cache_size_gb=engine.cache_size_gb, chunk_tokens=engine.chunk_tokens,
                   max_num_seqs=engine.max_num_seqs, max_new_tokens=engine.max_new_tokens,
                   repetition_penalty=engine.repetition_penalty,
                   threads=engine.threads, device=device)
