"""ACP sessions on disk: which workspace a thread belongs to and its transcript, for ``session/load``.

``$CONTENOX_HOME/state/acp/sessions/<session id>.json``, rewritten atomically after every turn.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from pathlib import Path
from typing import Literal

import msgspec

from contenox.errors import InvalidRequest
from contenox.node.persist import read_json, write_atomic

__all__ = ["Message", "SessionRecord", "SessionStore"]

log = logging.getLogger(__name__)
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class Message(msgspec.Struct, frozen=True, kw_only=True):
    role: Literal["user", "agent"]
    text: str


class SessionRecord(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    created: float
    messages: tuple[Message, ...] = ()


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

    def append(self, record: SessionRecord, *messages: Message) -> SessionRecord:
        updated = msgspec.structs.replace(record, messages=(*record.messages, *messages))
        self.save(updated)
        return updated

    def save(self, record: SessionRecord) -> None:
        write_atomic(self._path(record.session_id), msgspec.json.encode(record))
