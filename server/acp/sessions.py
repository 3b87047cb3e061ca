"""ACP sessions on disk: which workspace a session's thread belongs to, for ``session/load``.

``$CONTENOX_HOME/state/acp/sessions/<session id>.json`` is written atomically at ``session/new`` and around each
prompt. The session's turns are the node's: the planner's journal (thread ``acp-<id>``), the only transcript, and
the workspace's open-questions log for the prompts without an answer there, as for every client. The record keeps
the workspace, the title and when it was last used (an earlier version kept its unanswered prompts here too:
read and shown, never written).
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import msgspec

from contenox.errors import InvalidRequest
from contenox.node.persist import read_json, write_atomic

__all__ = ["LegacyUnanswered", "SessionRecord", "SessionStore", "title_of"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class LegacyUnanswered(msgspec.Struct, frozen=True, kw_only=True):
    """A prompt without an answer as an earlier version recorded it in the session (now the node's
    open-questions log holds them for every client): still shown by ``session/load`` where it was asked."""

    prompt: str
    after: int
    """How many of the thread's answered exchanges came before it."""
    why: str = ""
    """Empty while the turn runs; a record loaded with an empty reason was cut off by the node going away."""


class SessionRecord(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    created: float
    unanswered: tuple[LegacyUnanswered, ...] = ()
    """Only in records an earlier version wrote (read, never written)."""
    title: str = ""
    """From the session's first prompt (``session/list``, ``session_info_update``)."""
    updated: float = 0.0
    """When its last prompt ended (0: never prompted)."""


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

    def all(self, cwd: str | None = None) -> list[SessionRecord]:
        """Every session on disk (of ``cwd`` only, when given), most recently used first; unreadable files are
        skipped (logged by :func:`read_json`)."""
        if not self.base.is_dir():
            return []
        found = [r for path in self.base.glob("*.json") if (r := read_json(path, SessionRecord)) is not None]
        if cwd is not None:
            found = [r for r in found if r.cwd == cwd]
        return sorted(found, key=lambda r: max(r.updated, r.created), reverse=True)

    def save(self, record: SessionRecord) -> None:
        write_atomic(self._path(record.session_id), msgspec.json.encode(record))


def title_of(prompt: str) -> str:
    """A session's title: the first line of its first prompt, at most 60 characters."""
    line = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:59].rstrip() + "…"
