"""What verification did in a turn, as clients and the eval read it."""

from __future__ import annotations

import re
from typing import Literal

import msgspec

__all__ = ["CandidateResult", "Verification", "changed_lines", "failing_tests"]

CandidateOutcome = Literal["passed", "failed", "timeout", "not_found", "error", "no_edit", "does_not_apply"]

_FAILED = re.compile(r"\b(\d+) (?:failed|failing|errors?)\b")


class CandidateResult(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """1-based, in the order drawn (1: the greedy answer)."""
    round: int
    """0: drawn from the turn's prompt; n: from the n-th repair step."""
    sampled: bool
    constrained: bool
    outcome: CandidateOutcome
    files: tuple[str, ...] = ()
    diff: str = ""
    """The candidate's change as the node resolved it (empty: no edit)."""
    answer: str = ""
    """The candidate's answer as the model wrote it (its first 3000 characters)."""
    changed_lines: int = 0
    failing: int | None = None
    """Failing tests the check's output counts (None: it does not say)."""
    exit_code: int | None = None
    output_tail: str = ""
    check_s: float = 0.0
    decode_s: float = 0.0
    tokens: int = 0
    recomputed_tokens: int = 0
    """Prompt tokens the engine computed for this candidate (the shared prompt is prefilled once)."""
    arm: str = ""
    """The prompt it was drawn from: ``turn`` (the turn's), ``focused`` (one localized function and the failing
    output, the Agentless split) or ``repair`` (the turn's, with a failed candidate and its output appended)."""


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    status: Literal["passed", "failed", "skipped"]
    """passed: the offered answer's edit passed the check; failed: no candidate passed; skipped: not run."""
    reason: str = ""
    """Why it was skipped, in words (no check command, not allowed, no change asked)."""
    baseline: str = ""
    """The check's outcome on the workspace before any change (``passed``: it can only show that a change broke
    nothing, not that it does what was asked)."""
    command: str = ""
    command_source: str = ""
    """terminal | workspace | config | detected."""
    command_detail: str = ""
    candidates: tuple[CandidateResult, ...] = ()
    chosen: int | None = None
    """The offered candidate's ``index``."""
    rounds: int = 0
    places: tuple[str, ...] = ()
    """The functions the focused round rewrote, in order (``name (path:start-end)``), and how they were found."""
    prefill_tokens: int = 0
    """Prompt tokens computed for the turn's own answer (the one prefill)."""
    decode_s: float = 0.0
    """Wall time spent decoding: the turn's answer, then each round of candidates (decoded side by side; the
    first round overlaps the check of the turn's answer)."""
    apply_s: float = 0.0
    check_s: float = 0.0
    wall_s: float = 0.0

    @property
    def passed_count(self) -> int:
        return sum(1 for c in self.candidates if c.outcome == "passed")

    def summary(self) -> str:
        if self.status == "skipped":
            return f"not verified: {self.reason}"
        if self.baseline == "passed":
            head = (f"checked: `{self.command}` still passes with the change (it passed before it too: nothing "
                    "broke, but the check cannot tell whether the change does what was asked)"
                    if self.status == "passed" else
                    f"not verified: the change breaks `{self.command}`, which passed before it "
                    f"({len(self.candidates)} candidate(s) tried)")
        else:
            head = (f"verified: `{self.command}` passed ({self.passed_count} of {len(self.candidates)} candidates)"
                    if self.status == "passed" else
                    f"not verified: `{self.command}` failed for all {len(self.candidates)} candidates")
        return (f"{head}; {self.rounds} repair round(s); decode {self.decode_s:.1f} s, apply {self.apply_s:.1f} s, "
                f"check {self.check_s:.1f} s")


def changed_lines(diff: str) -> int:
    return sum(1 for line in diff.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---")))


def failing_tests(output: str) -> int | None:
    counts = [int(m.group(1)) for m in _FAILED.finditer(output)]
    return sum(counts[-1:]) if counts else None
