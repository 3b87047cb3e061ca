"""Facts about other processes that several layers need (the daemon's lock holder, a writer's temp file)."""

from __future__ import annotations

import os

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts: it exists, we may not signal it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
