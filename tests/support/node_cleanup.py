"""Test cleanup shared by the end-to-end suites: make sure a node process is gone."""

from __future__ import annotations

import os
import signal
import time


def terminate_pid(pid: int, timeout_s: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it outlives ``timeout_s``; returns once the process is gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
