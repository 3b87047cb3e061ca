"""A GGUF model is converted to OpenVINO IR once and loads from it (GenAI rebuilds the graph from a GGUF on every
load: seconds per start); the IR answers as the GGUF does, and is checked like the weights it came from. The real
test model, copied so each test converts, damages or sweeps its own."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import msgspec
import pytest

import contenox.runtime_ov.converted as converted_module
from contenox.errors import ChecksumMismatch
from contenox.runtime_ov.converted import RECORD, converted, ir_path
from contenox.runtime_ov.engine import Engine
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.reference import BarePipeline
from contenox.runtime_ov.requests import GenerateRequest
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import load_tokenizer
from support.weights import copy_model, flip_keeping_mtime

pytestmark = pytest.mark.slow  # each test loads the real model (and most convert it: ~5 s)

OPTIONS = EngineOptions(cache_size_gb=0.1, chunk_tokens=32, max_new_tokens=12)
CODE = (Path(__file__).resolve().parents[2] / "server" / "runtime_ov" / "converted.py").read_text(encoding="utf-8")


def test_a_gguf_model_is_converted_once_and_answers_from_its_ir_as_from_the_gguf(
        default_model: InstalledModel, tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model", ir=False)
    stale = Path(model.path) / "ir-0123456789abcdef"  # an IR of bytes pulled before
    stale.mkdir()
    killed, running = Path(model.path) / ".convert-killed", Path(model.path) / ".convert-running"
    killed.mkdir()
    running.mkdir()
    os.utime(killed, (time.time() - 7200, time.time() - 7200))  # a conversion killed two hours ago
    with Engine.start(model, OPTIONS) as engine:
        ir = ir_path(model)
        assert ir is not None and engine.loaded == ir and (ir / RECORD).is_file()
        assert not stale.exists() and not killed.exists() and running.exists()
        assert engine.weights_check is not None and engine.weights_check.wait(120) and engine.alive
        prompt = engine.tokenizer.encode(engine.tokenizer.apply_chat_template(
            [{"role": "user", "content": "Write a function that reverses a list."}]))
        answer = engine.generate(GenerateRequest(session_id="s", token_ids=prompt), timeout=120).token_ids
    bare = BarePipeline(model.weights, prefix_caching=False, chunk_tokens=32, cache_size_gb=0.1,
                        repetition_penalty=OPTIONS.repetition_penalty)
    assert answer == bare.run(prompt, OPTIONS.max_new_tokens, eos_token_id=engine.tokenizer.eos_token_id).output_ids
    gguf, from_ir = load_tokenizer(model.weights), load_tokenizer(ir)
    assert from_ir.encode(CODE) == gguf.encode(CODE) and from_ir.chat_template == gguf.chat_template
    assert (from_ir.bos_token_id, from_ir.eos_token_id) == (gguf.bos_token_id, gguf.eos_token_id)

    recorded = (ir / RECORD).stat().st_mtime_ns
    with Engine.start(model, OPTIONS) as again:  # the next load reads the IR: nothing converted
        assert again.loaded == ir
    assert (ir / RECORD).stat().st_mtime_ns == recorded


def test_a_gguf_whose_bytes_changed_is_refused_before_it_is_converted(default_model: InstalledModel,
                                                                      tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model", ir=False)
    flip_keeping_mtime(model.weights)
    with pytest.raises(ChecksumMismatch, match="contenox model pull smollm2-135m --force"):
        Engine.start(model, OPTIONS)
    assert not list(Path(model.path).glob("ir-*")) and not list(Path(model.path).glob(".convert-*"))


def test_an_ir_whose_bytes_changed_is_refused_after_the_load_removed_and_converted_again(
        default_model: InstalledModel, tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model")
    ir = ir_path(model)
    assert ir is not None and (ir / RECORD).is_file()
    flip_keeping_mtime(ir / "openvino_model.bin")
    engine = Engine.start(model, OPTIONS)
    try:
        assert engine.loaded == ir and engine.weights_check is not None and engine.weights_check.wait(120)
        assert not engine.alive and isinstance(engine.refused, ChecksumMismatch)
        assert "openvino_model.bin" in engine.refused.message and "converts them again" in engine.refused.message
        with pytest.raises(ChecksumMismatch, match="converted weights"):
            engine.submit(GenerateRequest(session_id="s", token_ids=[1, 2, 3]))
    finally:
        engine.close()
    assert not ir.exists()
    with Engine.start(model, OPTIONS) as engine:  # converted again from the GGUF, which is intact
        assert engine.loaded == ir and (ir / RECORD).is_file()
        assert engine.weights_check is not None and engine.weights_check.wait(120) and engine.alive
        assert engine.generate(GenerateRequest(session_id="s", token_ids=[1, 2, 3]), timeout=120).token_ids


def test_a_store_that_cannot_take_the_ir_loads_the_gguf_and_says_why(
        default_model: InstalledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    model = copy_model(default_model, tmp_path / "model", ir=False)

    def full(*_: object, **__: object) -> str:
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(converted_module.tempfile, "mkdtemp", full)
    with caplog.at_level(logging.WARNING, logger="contenox.runtime_ov.converted"):
        assert converted(model) == model.weights
    assert "loads from its GGUF (slower)" in caplog.text and "No space left on device" in caplog.text
    assert converted(model, create=False) == model.weights


def test_a_record_that_does_not_decode_fails_the_check(default_model: InstalledModel, tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model")
    ir = ir_path(model)
    assert ir is not None
    (ir / RECORD).write_bytes(msgspec.json.encode({"files": 3}))
    with pytest.raises(ChecksumMismatch, match=RECORD):
        converted_module.check_converted(model, ir)
    assert not ir.exists()
