"""Failure probes that may take the process down, run in a child process (``python -m``).

A crash (a signal) is itself the finding: the parent records it instead of dying with it.
Usage: ``python -m contenox.bench.probe profile_mismatch MODELS_DIR NAME``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import ContenoxError

__all__ = ["run_probe"]


def run_probe(args: list[str], timeout: float = 300.0) -> tuple[dict[str, Any] | None, str, float]:
    """(error dict or None, outcome, ms) of ``probe args`` in a child process."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "contenox.bench.probe", *args], capture_output=True,
                          timeout=timeout, check=False)
    ms = (time.perf_counter() - started) * 1000.0
    line = proc.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
    if proc.returncode < 0:
        return ({"kind": "crash", "signal": -proc.returncode,
                 "message": f"the probe process died with signal {-proc.returncode}",
                 "stderr_tail": proc.stderr.decode(errors="replace")[-600:]},
                f"process killed by signal {-proc.returncode}", ms)
    try:
        result = msgspec.json.decode(line[0].encode())
    except msgspec.DecodeError:
        return ({"kind": "unparsed", "returncode": proc.returncode, "stdout": line[0][:300],
                 "stderr_tail": proc.stderr.decode(errors="replace")[-600:]}, "probe printed no result", ms)
    return result.get("error"), str(result.get("outcome", "")), ms


def _profile_mismatch(models_dir: str, name: str) -> dict[str, Any]:
    from contenox.runtime_ov import Engine, EngineOptions, ModelStore

    try:
        model = ModelStore(Path(models_dir)).get(name)
        Engine.start(model, EngineOptions(cache_size_gb=0.1)).close()
    except ContenoxError as exc:
        return {"error": exc.to_dict() | {"type": type(exc).__name__}, "outcome": "raised"}
    except Exception as exc:
        return {"error": {"kind": "untranslated", "type": type(exc).__name__, "message": str(exc)[:500]},
                "outcome": "raised an error that is not a ContenoxError"}
    return {"error": None, "outcome": "loaded without error"}


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "profile_mismatch":
        result = _profile_mismatch(argv[1], argv[2])
    else:
        result = {"error": {"kind": "usage", "message": f"unknown probe {argv!r}"}, "outcome": "usage"}
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
