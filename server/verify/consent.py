"""The user's word on running a check command in a workspace: asked once, remembered per workspace and
command, revocable (``contenox verify off``). Running the project's commands runs the user's code."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from pathlib import Path

import msgspec

__all__ = ["Consent", "ConsentStore"]

log = logging.getLogger(__name__)


class Consent(msgspec.Struct, frozen=True, kw_only=True):
    root: str
    command: str
    allowed: bool
    at: float


class _File(msgspec.Struct, kw_only=True):
    v: int = 1
    consents: list[Consent] = msgspec.field(default_factory=list)


class ConsentStore:
    """Consents in one JSON file (0600), read on each question so every node client sees the same answers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _load(self) -> _File:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=_File)
        except FileNotFoundError:
            return _File()
        except (OSError, msgspec.DecodeError) as exc:  # a broken file asks again, never allows
            log.warning("%s unreadable (%s): every check command will be asked about again", self.path, exc)
            return _File()

    def _save(self, data: _File) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".consent-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(msgspec.json.encode(data))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, root: str, command: str) -> bool | None:
        """True (allowed), False (declined), None (never asked)."""
        for consent in self._load().consents:
            if consent.root == root and consent.command == command:
                return consent.allowed
        return None

    def set(self, root: str, command: str, allowed: bool) -> None:
        with self._lock:
            data = self._load()
            data.consents = [c for c in data.consents if not (c.root == root and c.command == command)]
            data.consents.append(Consent(root=root, command=command, allowed=allowed, at=time.time()))
            self._save(data)

    def revoke(self, root: str) -> list[str]:
        """Forget every answer for ``root`` (the next verification asks again); the commands forgotten."""
        with self._lock:
            data = self._load()
            gone = [c.command for c in data.consents if c.root == root]
            data.consents = [c for c in data.consents if c.root != root]
            self._save(data)
            return gone

    def list(self, root: str) -> list[Consent]:
        return [c for c in self._load().consents if c.root == root]
