"""A model's tool-call certification (``contenox certify``), kept beside its weights and profile.

Written by :mod:`contenox.certify` (`contenox certify`); read by the node to decide whether turns may advertise tools (and to
say why not) and by ``contenox model list``. A certification made for other weights is ignored.

A catalog model's weights are the same bytes on every machine (sha256-checked on pull), so the certification
made on the reference machine ships with contenox (``reference_certifications.json``, answers left out: they are
in ``bench/results``) and holds on a fresh install until ``contenox certify`` runs there; one made on this
machine comes first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

__all__ = ["CERTIFICATION_FILE", "REFERENCE_FILE", "Certification", "read_certification", "reference_records"]

CERTIFICATION_FILE = "contenox-certification.json"
REFERENCE_FILE = Path(__file__).with_name("reference_certifications.json")
"""The certifications made on the reference machine for catalog models, shipped with contenox."""


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
    policy_digest: str = ""
    """What the model was shown and constrained with (:func:`contenox.node.agent.tool_policy_digest`); a
    certification under other prompts or grammars no longer holds (empty: made before it was recorded)."""
    suite_cases: int = 0
    """The suite's size (``cases`` is how many ran: fewer when ``stopped``)."""
    stopped: str = ""
    """Why the suite stopped before its end (the model could no longer be certified), or '' when every case ran."""
    reference: bool = False
    """Made on the reference machine and shipped with contenox (not run on this machine)."""


class _References(msgspec.Struct, frozen=True, kw_only=True):
    records: list[Certification] = []


def reference_records(path: Path = REFERENCE_FILE) -> list[Certification]:
    """The shipped certifications (none when the file is missing or unreadable)."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=_References).records
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return []


def read_certification(model_dir: Path, model_digest: str, *, references: Path = REFERENCE_FILE,
                       ) -> Certification | None:
    """The model's certification, if one was made for these weights: this machine's, else the reference
    machine's shipped one (``reference`` set)."""
    path = model_dir / CERTIFICATION_FILE
    try:
        result = msgspec.json.decode(path.read_bytes(), type=Certification)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        result = None
    if result is not None and result.model_digest == model_digest:
        return result
    shipped = [r for r in reference_records(references) if r.model_digest == model_digest]
    return msgspec.structs.replace(shipped[-1], reference=True) if shipped else None
