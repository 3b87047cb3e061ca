"""The one command runner: a check command in a scratch copy, time-limited, in its own process group, its
output captured and capped. Verification, the eval and the tool loop's checks run commands through it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["CheckRun", "run_check"]

log = logging.getLogger(__name__)

Outcome = Literal["passed", "failed", "timeout", "not_found", "error"]


class CheckRun(msgspec.Struct, frozen=True, kw_only=True):
    command: str
    outcome: Outcome
    exit_code: int | None
    output: str
    """stdout and stderr as they came, cut in the middle past the limit (the cut is named)."""
    seconds: float
    truncated: bool = False

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def tail(self, chars: int = 1500) -> str:
        return self.output if len(self.output) <= chars else "…" + self.output[-chars:]

    def describe(self) -> str:
        what = {"passed": "passed", "failed": f"failed (exit {self.exit_code})",
                "timeout": "timed out", "not_found": "command not found", "error": "could not run"}[self.outcome]
        return f"{what} in {self.seconds:.1f} s"


class _Capped:
    """Keeps the first and last ``limit / 2`` characters of a stream and counts what fell between."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head, text = self.head + text[:take], text[take:]
        if not text:
            return
        joined = self.tail + text
        if len(joined) > self.half:
            self.dropped += len(joined) - self.half
            joined = joined[-self.half:]
        self.tail = joined

    def text(self) -> str:
        if self.dropped:
            return f"{self.head}\n[… {self.dropped:,} characters of output cut …]\n{self.tail}"
        return self.head + self.tail


def run_check(command: str, cwd: Path, *, env: Mapping[str, str] | None = None, timeout_s: float = 120.0,
              max_output_chars: int = 20_000, stop: threading.Event | None = None,
              limit: str = "verify.timeout_s", hang_s: float = 0.0, quiet_s: float = 0.0,
              hang_limit: str = "") -> CheckRun:
    """Run ``command`` (a shell line) in ``cwd`` with ``env`` (the whole environment), stdin closed. Past
    ``timeout_s``, or once ``stop`` is set (the turn was cancelled), the process group is killed (TERM, then
    KILL) and the outcome is ``timeout`` (``error`` when stopped); ``limit`` names what set the time in the
    output. With ``hang_s``, the run is also stopped as hung (``timeout``, ``hang_limit`` named) once it has run
    that long and printed nothing for ``quiet_s`` (0: at ``hang_s`` whatever it prints): a suite still printing
    its progress runs on to ``timeout_s``, a loop that never ends is stopped soon."""
    started = time.monotonic()
    capped = _Capped(max_output_chars)
    last_output = [started]
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, env=dict(env) if env is not None else None,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as exc:
        return CheckRun(command=command, outcome="error", exit_code=None, output=str(exc),
                        seconds=time.monotonic() - started)
    assert proc.stdout is not None
    stream = proc.stdout

    def pump() -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            last_output[0] = time.monotonic()
            capped.add(chunk.decode("utf-8", errors="replace"))

    reader = threading.Thread(target=pump, name="contenox-check-output", daemon=True)
    reader.start()
    timed_out = stopped = hung = False
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if stop is not None and stop.is_set():
                stopped = True
            elif 0 < hang_s <= now - started and now - last_output[0] >= quiet_s:
                hung = True
            elif now < deadline:
                continue
            else:
                timed_out = True
            _kill_group(proc)
            break
    reader.join(timeout=5.0)
    stream.close()
    seconds = time.monotonic() - started
    code = proc.returncode
    if stopped:
        capped.add("\n[stopped: the turn was cancelled]")
        outcome: Outcome = "error"
    elif timed_out:
        capped.add(f"\n[stopped after {timeout_s:g} s: {limit}]")
        outcome = "timeout"
    elif hung:
        capped.add(f"\n[stopped after {seconds:.0f} s: {hang_limit or 'hung'}]")
        outcome = "timeout"
    elif code == 0:
        outcome = "passed"
    elif code == 127:
        outcome = "not_found"
    else:
        outcome = "failed"
    return CheckRun(command=command, outcome=outcome, exit_code=code, output=capped.text(), seconds=seconds,
                    truncated=capped.dropped > 0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
    log.warning("check command %s did not end after SIGKILL", proc.pid)
