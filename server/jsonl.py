"""Append-only JSON-lines files (the planner's journal, the node's open questions): one line per record."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["append_line"]


def append_line(path: Path, line: bytes) -> None:
    """Append one line to a private JSON-lines file (created 0600 with its folder); after a line a crash tore,
    ours starts on a fresh line, so the torn one is the only one lost."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = line + b"\n"
    try:
        if path.stat().st_size:
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    data = b"\n" + data
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
