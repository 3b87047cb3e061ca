"""ACP sessions on disk: which workspace a session's thread belongs to, for ``session/load``.

``$CONTENOX_HOME/state/acp/sessions/<session id>.json`` is written once, atomically, at
``session/new``. The session's turns are the planner's journal (thread ``acp-<id>``), the only transcript.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import msgspec

from contenox.errors import InvalidRequest
from contenox.node.persist import read_json, write_atomic

__all__ = ["SessionRecord", "SessionStore"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class SessionRecord(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    created: float


class SessionStore:
    def __init__(self, base: Path) -> None:
        self.base = base

    def _path(self, session_id: str) -> Path:
        if not _SESSION_ID.match(session_id):
            raise InvalidRequest(f"invalid session id {session_id!r}", session_id=session_id)
        return self.base / f"{session_id}.json"

    def create(self, cwd: str) -> SessionRecord:
        record = SessionRecord(session_id=f"acp-{uuid.uuid4().hex[:16]}", cwd=cwd, created=time.time())
        self.save(record)
        return record

    def load(self, session_id: str) -> SessionRecord | None:
        return read_json(self._path(session_id), SessionRecord)

    def save(self, record: SessionRecord) -> None:
        write_atomic(self._path(record.session_id), msgspec.json.encode(record))
