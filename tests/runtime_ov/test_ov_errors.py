"""OpenVINO's exceptions become Contenox errors at the boundary (real exceptions where cheap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.errors import (
    ContenoxError,
    EngineBusy,
    EngineError,
    IncompatibleSnapshot,
    InvalidRequest,
    ModelNotFound,
    OverBatch,
    OverContext,
    ProfileMismatch,
)
from contenox.runtime_ov._ov_errors import translate_ov_error


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except Exception as exc:
        return exc
    raise AssertionError("expected OpenVINO to raise")


def test_missing_gguf_is_model_not_found() -> None:
    import openvino_genai as ov_genai

    exc = _raised(lambda: ov_genai.ContinuousBatchingPipeline("/nonexistent/model.gguf",
                                                              ov_genai.SchedulerConfig(), "CPU", {}))
    error = translate_ov_error(exc, doing="loading model x")
    assert isinstance(error, ModelNotFound)
    assert error.message.startswith("loading model x: model files not found")
    assert "nonexistent/model.gguf" in error.message


def test_corrupt_gguf_is_profile_mismatch(tmp_path: Path) -> None:
    import openvino_genai as ov_genai

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 100)
    exc = _raised(lambda: ov_genai.ContinuousBatchingPipeline(str(bad), ov_genai.SchedulerConfig(), "CPU", {}))
    assert isinstance(translate_ov_error(exc, doing="loading"), ProfileMismatch)


def test_gguf_through_the_core_reader_is_profile_mismatch(default_model: object) -> None:
    import openvino as ov

    weights = default_model.weights  # type: ignore[attr-defined]
    exc = _raised(lambda: ov.Core().read_model(str(weights)))
    assert isinstance(translate_ov_error(exc, doing="reading"), ProfileMismatch)


# Messages as OpenVINO GenAI 2026.4.1 words them (captured from real runs).
_CHECK = "Check '{}' failed at src/cpp/src/{}:\n{}\n"


@pytest.mark.parametrize(("message", "expected"), [
    (_CHECK.format("prompt_len > 0", "sequence_group.hpp:483", "Prompt length cannot be 0"), InvalidRequest),
    (_CHECK.format("!m_is_running", "pipeline.cpp:12", "Pipeline is already in running state"), EngineBusy),
    ("Exception from src/plugins/intel_cpu: Not enough memory to allocate 1073741824 bytes", OverBatch),
    ("input_ids length 9000 exceeds max_position_embeddings 8192", OverContext),
    ("Exception from src/inference/src/cpp/variable_state.cpp:31: set_state: Shape mismatch", IncompatibleSnapshot),
    (_CHECK.format("x", "gguf_utils/gguf.cpp:1", "[load_gguf] gguf_tensor_to_f16 failed"), ProfileMismatch),
    ("something entirely new", EngineError),
])
def test_message_mapping(message: str, expected: type[ContenoxError]) -> None:
    error = translate_ov_error(RuntimeError(message), doing="step")
    assert type(error) is expected
    assert error.message.startswith("step: ")
    assert error.details["openvino_message"] == message


def test_informative_line_is_kept_not_the_check_location() -> None:
    message = _CHECK.format("prompt_len > 0", "sequence_group.hpp:483", "Prompt length cannot be 0")
    assert translate_ov_error(RuntimeError(message), doing="x").message == (
        "x: the prompt is empty (Prompt length cannot be 0)")


def test_contenox_errors_pass_through() -> None:
    original = OverContext("too long")
    assert translate_ov_error(original, doing="x") is original
