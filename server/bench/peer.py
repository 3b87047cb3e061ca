"""The peer side by side: llama.cpp (through llama-cpp-python) on the same GGUF and the same ids.

llama.cpp keeps the previous prompt's KV and reuses its longest common prefix, so a warm run is the
base prompt followed by the same prompt with a new tail. TTFT is the first streamed token.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from contenox.bench.report import PeerSection
from contenox.bench.stats import Spread, output_hash, spread

__all__ = ["run_peer"]


def _absent(reason: str, version: str = "") -> PeerSection:
    return PeerSection(name="llama.cpp (llama-cpp-python)", version=version, available=False, reason=reason,
                       prompt_tokens=0, suffix_tokens=0, cold_ttft_ms=None, warm_ttft_ms=None, decode_tps=None,
                       ours_cold_ttft_ms=None, ours_warm_ttft_ms=None, ours_decode_tps=None, peer_output_hash="",
                       ours_output_hash="")


def _stream(llm: Any, ids: list[int], max_new: int) -> tuple[float, float, list[int]]:
    """(ttft_ms, decode tok/s, generated ids) of one greedy generation."""
    started = time.perf_counter()
    first = 0.0
    out: list[int] = []
    # reset=True is the longest-common-prefix path: it keeps the matching KV and evaluates the rest
    gen = llm.generate(ids, temp=0.0, top_k=1, reset=True)
    for token in gen:
        if not out:
            first = time.perf_counter()
        out.append(int(token))
        if len(out) >= max_new or token == llm.token_eos():
            break
    ended = time.perf_counter()
    decode = (len(out) - 1) / (ended - first) if len(out) > 1 and ended > first else 0.0
    return (first - started) * 1000.0, decode, out


def run_peer(weights: Path, *, cold_ids: list[int], warm_pairs: list[tuple[list[int], list[int]]], max_new: int,
             ours_cold: Spread, ours_warm: Spread, ours_decode: Spread, ours_hash: str, threads: int = 0,
             repeats: int = 3) -> PeerSection:
    """Cold: ``cold_ids`` from an empty cache; warm: each pair's base then the base + new tail."""
    try:
        import llama_cpp  # type: ignore[import-not-found]
    except ImportError as exc:
        return _absent(f"llama-cpp-python is not installed ({exc}); `pip install llama-cpp-python==0.3.36` "
                       "builds llama.cpp from source (about 6 minutes on 2 cores)")
    version = str(getattr(llama_cpp, "__version__", ""))
    n_ctx = max(len(cold_ids), *(len(b) for _, b in warm_pairs)) + max_new + 64
    try:
        llm: Any = llama_cpp.Llama(model_path=str(weights), n_ctx=n_ctx, n_batch=512, n_threads=threads or os.cpu_count(),
                              verbose=False, seed=0)
    except Exception as exc:  # the peer is optional: say why it is missing
        return _absent(f"llama.cpp could not load {weights.name}: {exc}", version)
    llm.reset()
    _stream(llm, cold_ids[:64], 2)  # warm-up: the first evaluation allocates llama.cpp's compute graph
    cold, decode = [], []
    peer_hash = ""
    for _ in range(max(1, repeats)):
        llm.reset()
        ttft, tps, out = _stream(llm, cold_ids, max_new)
        cold.append(ttft)
        decode.append(tps)
        peer_hash = output_hash(out)
    warm = []
    suffix = 0
    llm.reset()
    previous: list[int] = []
    for base, full in warm_pairs:
        if not previous:
            _stream(llm, base, 1)  # the cached prompt; llama.cpp keeps only the last prompt's KV
            previous = base
        ttft, _tps, _out = _stream(llm, full, max_new)
        warm.append(ttft)
        common = next((i for i, (a, b) in enumerate(zip(previous, full, strict=False)) if a != b),
                      min(len(previous), len(full)))
        suffix = len(full) - common
        previous = full
    del llm
    return PeerSection(name="llama.cpp (llama-cpp-python)", version=version, available=True,
                       reason="same GGUF file, same token ids, greedy; warm = longest-common-prefix reuse",
                       prompt_tokens=len(cold_ids), suffix_tokens=suffix, cold_ttft_ms=spread(cold),
                       warm_ttft_ms=spread(warm) if warm else None, decode_tps=spread(decode),
                       ours_cold_ttft_ms=ours_cold, ours_warm_ttft_ms=ours_warm, ours_decode_tps=ours_decode,
                       peer_output_hash=peer_hash, ours_output_hash=ours_hash)
