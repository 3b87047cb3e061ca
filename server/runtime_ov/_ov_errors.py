"""Translate OpenVINO / OpenVINO GenAI exceptions into Contenox errors.

OpenVINO raises bare ``RuntimeError`` (and occasionally ``IndexError`` for malformed files) whose
text is a C++ check message. This module is the one place that reads those messages; every call
into openvino from the runtime goes through :func:`translate_ov_error` at the boundary.
"""

from __future__ import annotations

import re

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

__all__ = ["translate_ov_error"]

# (pattern on the OpenVINO message, error class, what the user is told) — first match wins.
_RULES: tuple[tuple[re.Pattern[str], type[ContenoxError], str], ...] = (
    (re.compile(r"Failed to open|does not exist|No such file|Could not find|cannot open", re.I),
     ModelNotFound, "model files not found"),
    (re.compile(r"already in running state|is busy|infer request is busy", re.I),
     EngineBusy, "the pipeline is already running a generation"),
    (re.compile(r"Prompt length cannot be 0", re.I),
     InvalidRequest, "the prompt is empty"),
    (re.compile(r"max_position_embeddings|exceeds the maximum context|context length|"
                r"prompt is too long|exceeds max", re.I),
     OverContext, "the prompt does not fit the model's context"),
    (re.compile(r"not enough (free )?(kv )?(cache )?blocks|out of memory|cannot allocate|"
                r"Not enough memory|std::bad_alloc|malloc", re.I),
     OverBatch, "the KV cache cannot hold the request"),
    (re.compile(r"variable|query_state|set_state|state shape|Shape mismatch|incompatible shape", re.I),
     IncompatibleSnapshot, "the KV state does not fit this model"),
    (re.compile(r"gguf|Unsupported (tensor|type|quantization)|Unable to read the model|"
                r"unordered_map::at|frontend|parse", re.I),
     ProfileMismatch, "the model file is not readable by OpenVINO"),
)


def _first_line(text: str) -> str:
    """The informative line of an OpenVINO check message (they start with a file location)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    informative = [line for line in lines if not line.startswith(("Check ", "Exception from "))]
    return (informative or lines or [text])[-1][:300]


def translate_ov_error(exc: BaseException, *, doing: str) -> ContenoxError:
    """The Contenox error for an OpenVINO exception raised while ``doing`` something.

    Use as ``raise translate_ov_error(exc, doing="loading model X") from exc``. A
    ``ContenoxError`` passes through unchanged.
    """
    if isinstance(exc, ContenoxError):
        return exc
    text = str(exc)
    for pattern, cls, summary in _RULES:
        if pattern.search(text):
            return cls(f"{doing}: {summary} ({_first_line(text)})", openvino_message=text[:2000])
    return EngineError(f"{doing}: OpenVINO failed ({_first_line(text)})", openvino_message=text[:2000])
