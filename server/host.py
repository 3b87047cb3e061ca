"""What the machine a measurement ran on can do: the facts a benchmark or eval report records beside its figures.

OpenVINO's CPU plugin picks its kernels by instruction set: the same 2-core machine prefilled the 0.5B at ~600
tokens/s with AVX-512 BF16 and ~150 tokens/s with AVX2 alone (2026-12-04), so a timing is read with the CPU's
features beside it, never without.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["CPU_FEATURES", "cpu", "host_facts"]

CPU_FEATURES = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_bf16", "amx_int8")
"""The /proc/cpuinfo flags OpenVINO's CPU kernels depend on (what the report records of them)."""


def _cpuinfo(text: str) -> tuple[str, list[str]]:
    name, flags = "", set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and not name:
            name = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return name, [f for f in CPU_FEATURES if f in flags]


def cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, list[str]]:
    """(the CPU's model name, which of :data:`CPU_FEATURES` it has)."""
    try:
        name, features = _cpuinfo(cpuinfo.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        name, features = "", []
    return name or platform.processor() or platform.machine(), features


def host_facts(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, object]:
    """cpus, cpu (model name), cpu_features (of :data:`CPU_FEATURES`), platform, python and the load average."""
    name, features = cpu(cpuinfo)
    return {"cpus": os.cpu_count(), "cpu": name, "cpu_features": features, "platform": platform.platform(),
            "python": platform.python_version(), "load_avg": [round(x, 2) for x in os.getloadavg()]}
