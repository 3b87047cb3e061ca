"""The ``Progress`` protocol of long store steps (download, join, verify, requantise), and a null one.

Its own module so that ``sources`` (which calls ``requantize``) and ``requantize`` both depend on it
instead of on each other.
"""

from __future__ import annotations

import logging
from typing import Protocol

__all__ = ["NullProgress", "Progress"]

log = logging.getLogger(__name__)


class Progress(Protocol):
    """Progress of one long step (download, join, verify, requantise)."""

    def start(self, label: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Logs each step's label at INFO and draws nothing."""

    def start(self, label: str, total: int | None) -> None:
        log.info("%s", label)

    def advance(self, amount: int) -> None:
        pass

    def finish(self) -> None:
        pass
