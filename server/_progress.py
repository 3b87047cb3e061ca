"""A rich progress bar on stderr that implements the store's Progress protocol."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

__all__ = ["RichProgress"]


class RichProgress:
    """One bar per step (download, extract, verify, requantise); quiet when stderr is not a terminal."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True)
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def start(self, label: str, total: int | None) -> None:
        self.finish()
        if not self._console.is_terminal:
            self._console.print(f"• {label}", highlight=False)
            return
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                             TransferSpeedColumn(), TimeRemainingColumn(), console=self._console, transient=False)
        self._bar.start()
        self._task = self._bar.add_task(label, total=total)

    def advance(self, amount: int) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, amount)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        self._bar = None
        self._task = None
