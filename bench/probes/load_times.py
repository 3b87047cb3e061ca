"""Probe: how long an engine takes to start from a model's GGUF and from the IR converted once from it.

OpenVINO GenAI builds the model's graph from a GGUF file on every load; ``contenox.runtime_ov.converted`` converts a
GGUF model once to OpenVINO IR and loads that. Per model: the conversion (once), then ``--repeats`` engine starts
each way (``Engine.start`` to ready: tokenizer, pipeline, KV blocks; the load from the GGUF is the engine as it was
before the conversion, the converter turned off for it), the first answer token of a short prompt after each start,
and the disk the IR takes beside the GGUF. Each model is copied (its files linked) into a scratch store, so the
conversion is measured from nothing and the installed model is not touched.

From the repository root, with the models in ``.cache/test-home/models``: ``.venv/bin/python
bench/probes/load_times.py qwen2.5-coder-0.5b qwen2.5-coder-1.5b --out bench/results/X.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

import contenox.runtime_ov.engine as engine_module
from contenox.runtime_ov import EngineOptions, GenerateRequest
from contenox.runtime_ov.converted import convert, ir_path
from contenox.runtime_ov.engine import Engine
from contenox.runtime_ov.store import InstalledModel, ModelStore


def _start(model: InstalledModel, options: EngineOptions) -> tuple[float, float, str]:
    """Seconds to a ready engine, seconds to the first token of a short prompt after it, what it loaded."""
    started = time.perf_counter()
    with Engine.start(model, options) as engine:
        ready = time.perf_counter() - started
        ids = engine.tokenizer.encode(engine.tokenizer.apply_chat_template([{"role": "user", "content": "Hi."}]))
        first = time.perf_counter()
        engine.generate(GenerateRequest(session_id="probe", token_ids=ids, max_new_tokens=1), timeout=600)
        if engine.weights_check is not None:
            engine.weights_check.stop()
        return ready, time.perf_counter() - first, str(engine.loaded)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def probe(installed: InstalledModel, repeats: int, scratch: Path) -> dict[str, Any]:
    copy = scratch / installed.name
    copy.mkdir()
    for item in Path(installed.path).iterdir():
        if not item.name.startswith(("ir-", ".")):
            (copy / item.name).symlink_to(item)
    model = msgspec.structs.replace(installed, path=str(copy))
    options = EngineOptions(cache_size_gb=0.5)
    started = time.perf_counter()
    ir = convert(model)
    convert_s = time.perf_counter() - started
    assert ir == ir_path(model)
    runs: dict[str, list[tuple[float, float, str]]] = {"gguf": [], "ir": []}
    original = engine_module.converted
    for _ in range(repeats):
        engine_module.converted = lambda m, create=True: m.weights  # type: ignore[assignment]  # the load as before
        try:
            runs["gguf"].append(_start(model, options))
        finally:
            engine_module.converted = original
        runs["ir"].append(_start(model, options))
    out: dict[str, Any] = {"model": installed.name, "gguf_bytes": _size(installed.weights), "ir_bytes": _size(ir),
                           "convert_s": round(convert_s, 2), "repeats": repeats}
    for way, rows in runs.items():
        out[way] = {"loaded": rows[0][2], "start_s": [round(r[0], 2) for r in rows],
                    "first_token_s": [round(r[1], 2) for r in rows],
                    "median_start_s": round(statistics.median(r[0] for r in rows), 2)}
    out["start_ratio_gguf_over_ir"] = round(out["gguf"]["median_start_s"] / out["ir"]["median_start_s"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--models-dir", type=Path, default=Path(".cache/test-home/models"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    store = ModelStore(args.models_dir.resolve())
    rows = []
    with tempfile.TemporaryDirectory(prefix="contenox-load-times-") as scratch:
        for name in args.models:
            rows.append(probe(store.ensure(name), args.repeats, Path(scratch)))
            print(json.dumps(rows[-1]), flush=True)
    report = {"probe": "load_times", "date": time.strftime("%Y-%m-%d"), "machine": _machine(), "models": rows}
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _machine() -> str:
    import os
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
