"""identity and residency: what ran where, and what the process held in memory."""

from __future__ import annotations

import datetime as dt
import os
import resource

import msgspec
import psutil

from contenox import __version__
from contenox.bench.report import Identity, Residency
from contenox.config import Config
from contenox.host import cpu
from contenox.runtime_ov import InstalledModel, ModelStore
from contenox.runtime_ov.metrics import peak_rss_bytes
from contenox.runtime_ov.reference import openvino_versions

__all__ = ["SwapCounter", "identity", "residency"]


def identity(config: Config, model: InstalledModel, *, mode: str, max_new: int, path: str) -> Identity:
    versions = openvino_versions()
    profile = model.profile
    cpu_name, cpu_features = cpu()
    return Identity(
        model=model.name, profile=msgspec.to_builtins(profile),
        digests={"model": profile.model_digest, "tokenizer": profile.tokenizer_digest,
                 "chat_template": profile.chat_template_digest},
        openvino_version=versions["openvino"], openvino_genai_version=versions["openvino_genai"],
        contenox_version=__version__, cpu=cpu_name, cores=os.cpu_count() or 0,
        threads=config.engine.threads, date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), mode=mode,
        chunk_tokens=config.engine.chunk_tokens, cache_size_gb=config.engine.cache_size_gb, max_new_tokens=max_new,
        repetition_penalty=config.engine.repetition_penalty,
        load_average=[round(x, 2) for x in os.getloadavg()], path=path,
        cpu_features=cpu_features)


class SwapCounter:
    """Major page faults of this process and system-wide swap traffic since construction."""

    def __init__(self) -> None:
        self._faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        swap = psutil.swap_memory()
        self._swap = int(swap.sin) + int(swap.sout)

    def events(self) -> int:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt - self._faults
        swap = psutil.swap_memory()
        return int(faults + (int(swap.sin) + int(swap.sout) - self._swap) // 4096)


def residency(store: ModelStore, loaded: list[str], *, load_ms: float, unload_ms: float,
              swaps: SwapCounter) -> Residency:
    installed = [m.name for m in store.list()]
    return Residency(resident_models=loaded, on_demand_models=[n for n in installed if n not in loaded],
                     load_ms=round(load_ms, 1), unload_ms=round(unload_ms, 1), host_memory_peak=peak_rss_bytes(),
                     swap_events=swaps.events())
