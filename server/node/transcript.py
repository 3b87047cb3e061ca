"""What the node persists per workspace, so a restarted node resumes its sessions.

``$CONTENOX_HOME/state/node/workspaces/<key>/``: ``workspace.json`` (root, session id, pins, the last
explain, the stable prefix to re-warm) written atomically, and ``transcript.jsonl`` appended one
exchange per line and fsynced. A torn last line (the node was killed mid-write) is skipped on load.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import msgspec

from contenox.node.persist import read_json, write_atomic

__all__ = ["Exchange", "WorkspaceRecord", "WorkspaceStore"]

log = logging.getLogger(__name__)

_RECORD = "workspace.json"
_TRANSCRIPT = "transcript.jsonl"
_PREFIX = "prefix.json"


class Exchange(msgspec.Struct, frozen=True, kw_only=True):
    turn: int
    user: str
    answer: str
    finish_reason: str
    client_id: str = ""
    thread: str = "main"
    at: float = 0.0


class WorkspaceRecord(msgspec.Struct, frozen=True, kw_only=True):
    root: str
    key: str
    session_id: str
    pins: tuple[str, ...] = ()
    turns: int = 0
    created: float = 0.0
    last_used: float = 0.0
    last_explain: dict[str, Any] | None = None


class WorkspaceStore:
    def __init__(self, base: Path) -> None:
        self.base = base / "workspaces"

    def _dir(self, key: str) -> Path:
        return self.base / key

    def new_record(self, root: Path, key: str) -> WorkspaceRecord:
        now = time.time()
        return WorkspaceRecord(root=str(root), key=key, session_id=f"ws-{key}", created=now, last_used=now)

    def load(self, key: str) -> WorkspaceRecord | None:
        return read_json(self._dir(key) / _RECORD, WorkspaceRecord)

    def load_all(self) -> list[WorkspaceRecord]:
        """Every persisted workspace, most recently used first."""
        if not self.base.is_dir():
            return []
        found = [r for child in self.base.iterdir() if child.is_dir() and (r := self.load(child.name))]
        return sorted(found, key=lambda r: r.last_used, reverse=True)

    def save(self, record: WorkspaceRecord) -> None:
        write_atomic(self._dir(record.key) / _RECORD, msgspec.json.encode(record))

    def history(self, key: str) -> list[Exchange]:
        path = self._dir(key) / _TRANSCRIPT
        if not path.is_file():
            return []
        exchanges: list[Exchange] = []
        decoder = msgspec.json.Decoder(Exchange)
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if not line.strip():
                continue
            try:
                exchanges.append(decoder.decode(line))
            except (msgspec.DecodeError, msgspec.ValidationError):
                log.warning("%s:%d: skipping a torn or invalid line", path, number)
        return exchanges

    def append(self, key: str, exchange: Exchange) -> None:
        directory = self._dir(key)
        directory.mkdir(parents=True, exist_ok=True)
        with (directory / _TRANSCRIPT).open("ab") as fh:
            fh.write(msgspec.json.encode(exchange) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())

    def save_prefix(self, key: str, token_ids: list[int]) -> None:
        """The stable leading token ids of the last turn, re-warmed when a node restarts."""
        write_atomic(self._dir(key) / _PREFIX, msgspec.json.encode(token_ids))

    def load_prefix(self, key: str) -> list[int]:
        return read_json(self._dir(key) / _PREFIX, list[int]) or []

