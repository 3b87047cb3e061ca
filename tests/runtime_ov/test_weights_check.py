"""Weights OpenVINO would crash on are refused first with a structured error (a truncated GGUF made
OpenVINO's reader segfault the whole process: found by the benchmark's profile_mismatch case); weights whose
bytes changed since install are refused by the check that runs after every load."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

from contenox.errors import ChecksumMismatch, ProfileMismatch
from contenox.runtime_ov.engine import Engine
from contenox.runtime_ov.gguf_header import check_weights
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.reference import BarePipeline
from contenox.runtime_ov.remote import RemoteEngine
from contenox.runtime_ov.requests import GenerateRequest
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.verify import check_recorded, verify_weights
from support.weights import copy_model, flip_keeping_mtime


def _truncated_copy(model: InstalledModel, tmp_path: Path, keep: float) -> InstalledModel:
    target = tmp_path / "broken"
    target.mkdir()
    weights = target / model.profile.weights
    with model.weights.open("rb") as src, weights.open("wb") as dst:
        dst.write(src.read(int(model.weights.stat().st_size * keep)))
    return msgspec.structs.replace(model, path=str(target))


def test_the_real_model_passes(default_model: InstalledModel) -> None:
    check_weights(default_model.weights)


def test_truncated_weights_are_refused_before_openvino_opens_them(default_model: InstalledModel,
                                                                   tmp_path: Path) -> None:
    broken = _truncated_copy(default_model, tmp_path, keep=0.6)
    with pytest.raises(ProfileMismatch, match="truncated") as info:
        check_weights(broken.weights)
    assert info.value.details["needed"] > info.value.details["size"]
    with pytest.raises(ProfileMismatch, match="truncated"):
        Engine.start(broken)
    with pytest.raises(ProfileMismatch, match="truncated"):  # the bench's bare references check too
        BarePipeline(broken.weights, prefix_caching=False, chunk_tokens=64, cache_size_gb=1.0)


def test_a_cut_header_and_an_incomplete_ir_are_refused(default_model: InstalledModel, tmp_path: Path) -> None:
    with pytest.raises(ProfileMismatch, match="not a readable GGUF"):
        check_weights(_truncated_copy(default_model, tmp_path, keep=0.001).weights)
    ir = tmp_path / "ir"
    ir.mkdir()
    (ir / "openvino_model.xml").write_text("<net/>")
    with pytest.raises(ProfileMismatch, match=r"openvino_model\.bin"):
        check_weights(ir)


def _wait_refused(engine: RemoteEngine, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while engine.alive and time.monotonic() < deadline:
        time.sleep(0.05)


def test_flipped_weights_load_then_the_background_check_refuses_them(default_model: InstalledModel,
                                                                     tmp_path: Path) -> None:
    """Regression (issue 28, defect 3): weights flipped with their mtime put back loaded and answered. The load
    does not wait for a full hash; the hash after it refuses the model, by name, and every later load too."""
    model = copy_model(default_model, tmp_path / "model")
    assert verify_weights(model)  # verified once, as after a pull
    flip_keeping_mtime(model.weights)
    options = EngineOptions(cache_size_gb=0.1, chunk_tokens=32, max_new_tokens=4)
    engine = Engine.start(model, options)
    try:
        assert engine.weights_check is not None and engine.weights_check.wait(120)
        assert not engine.alive and isinstance(engine.refused, ChecksumMismatch)
        with pytest.raises(ChecksumMismatch, match="contenox model pull smollm2-135m --force"):
            engine.submit(GenerateRequest(session_id="s", token_ids=[1, 2, 3]))
    finally:
        engine.close()
    with pytest.raises(ChecksumMismatch, match="smollm2-135m"):  # the next load: refused before OpenVINO runs
        Engine.start(model, options)


def test_an_intact_model_passes_the_background_check_and_answers(default_model: InstalledModel,
                                                                 tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model")
    with Engine.start(model, EngineOptions(cache_size_gb=0.1, chunk_tokens=32, max_new_tokens=4)) as engine:
        assert engine.weights_check is not None and engine.weights_check.wait(120)
        assert engine.alive and engine.refused is None
        ids = engine.tokenizer.encode("def add(a, b):")
        assert engine.generate(GenerateRequest(session_id="s", token_ids=ids), timeout=120).token_ids
    assert check_recorded(model) is True  # recorded for the next load


def test_the_engine_process_reports_flipped_weights_and_the_next_start_is_refused(
        default_model: InstalledModel, tmp_path: Path) -> None:
    """The node's engine runs in its own process: it must hear of the failed check (not alive, so its next turn
    restarts the engine, and that start is refused with the named error)."""
    model = copy_model(default_model, tmp_path / "models" / default_model.name)
    flip_keeping_mtime(model.weights)  # never verified, as after a timestamp-preserving copy
    options = EngineOptions(cache_size_gb=0.1, chunk_tokens=32, max_new_tokens=4)
    engine = RemoteEngine.start(model, options)
    try:
        _wait_refused(engine)
        assert not engine.alive and engine.crash_reason and "smollm2-135m" in engine.crash_reason
        with pytest.raises(ChecksumMismatch, match="contenox model pull smollm2-135m --force"):
            engine.submit(GenerateRequest(session_id="s", token_ids=[1, 2, 3]))
    finally:
        engine.close()
    with pytest.raises(ChecksumMismatch, match="smollm2-135m"):
        RemoteEngine.start(model, options)
