"""A model's tool-call certification (``contenox certify``), kept beside its weights and profile.

Written by :mod:`contenox.eval.certify`; read by the node to decide whether turns may advertise tools (and to
say why not) and by ``contenox model list``. A certification made for other weights is ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

__all__ = ["CERTIFICATION_FILE", "Certification", "read_certification"]

CERTIFICATION_FILE = "contenox-certification.json"


class Certification(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    model_digest: str
    date: str
    cases: int
    tool_cases: int
    valid_calls: int
    valid_call_rate: float
    false_calls: int
    false_call_rate: float
    schema_errors: int
    """Calls rejected (malformed), all told."""
    certified: bool
    """Safe, and reach (the valid-call rate) at least its minimum: tools are on by default."""
    thresholds: dict[str, float]
    by_kind: dict[str, list[int]]
    """kind -> [passed, cases]."""
    seconds: float
    examples: list[dict[str, Any]] = []
    """Up to 12 failed cases with the answer's first 300 characters, to see how the model fails."""
    malformed_calls: int = 0
    """Cases whose answer began a call that did not parse."""
    malformed_call_rate: float = 0.0
    safe: bool = False
    """False calls and malformed calls within their maxima (the safety bar; reach is the valid-call rate)."""
    answers: list[dict[str, Any]] = []
    """Every case's answer (its first 1200 characters), the calls read and why any were rejected."""
    tool_check: bool = False
    """Each case was first put to the tool check, as a tool-enabled turn is (a no: answered in text)."""
    require_call: bool = False
    """A yes of the check made the answer a call (``[tools] require_call``), as a turn's first step does."""
    held_out: dict[str, Any] = {}
    """The same figures over prompts written after the tool check was tuned on the suite (not in the rates
    above): ``valid_calls``/``tool_cases``, ``false_calls``/``plain_cases``, ``malformed_calls``."""


def read_certification(model_dir: Path, model_digest: str) -> Certification | None:
    """The model's certification, if one was made for these weights."""
    path = model_dir / CERTIFICATION_FILE
    try:
        result = msgspec.json.decode(path.read_bytes(), type=Certification)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return result if result.model_digest == model_digest else None
