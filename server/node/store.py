"""What the node persists per workspace, so a restarted node resumes its sessions.

``$CONTENOX_HOME/state/workspaces/<key>/`` (``paths.workspace_dir``, the workspace's one folder):
``workspace.json`` (root, session id, pins) and ``prefix.json`` (the stable prefix to re-warm), each written
atomically, beside the planner's journal ``turns.jsonl`` (the turns themselves: questions, answers, manifests; the
only transcript), the workspace's ``index/`` and the verification's ``scratch/``. Homes written before this layout
kept the first two under ``state/node/workspaces/<key>/``: :func:`migrate_legacy` moves them once.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import msgspec

from contenox.node.persist import read_json, write_atomic

__all__ = ["SavedPrefix", "WorkspaceRecord", "WorkspaceStore", "migrate_legacy"]

log = logging.getLogger(__name__)

_RECORD = "workspace.json"
_PREFIX = "prefix.json"


class WorkspaceRecord(msgspec.Struct, frozen=True, kw_only=True):
    root: str
    key: str
    session_id: str
    pins: tuple[str, ...] = ()
    created: float = 0.0
    last_used: float = 0.0
    """(The turn count and the last explain are the journal's: ``planner.Journal``; older records' copies of
    them are read and dropped.)"""


class SavedPrefix(msgspec.Struct, frozen=True, kw_only=True):
    """Token ids to re-warm after a restart, and the model they are ids of (ids of another tokenizer are
    out of range or mean other text: such a prefix is ignored, never sent)."""

    model: str
    model_digest: str
    tokenizer_digest: str
    ids: list[int]


class WorkspaceStore:
    """The node's records, one per workspace folder under ``base`` (``paths.workspaces_dir``)."""

    def __init__(self, base: Path) -> None:
        self.base = base

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

    def save_prefix(self, key: str, prefix: SavedPrefix) -> None:
        """The stable leading token ids of the last turn, re-warmed when a node restarts."""
        write_atomic(self._dir(key) / _PREFIX, msgspec.json.encode(prefix))

    def load_prefix(self, key: str, model: str, model_digest: str, tokenizer_digest: str) -> list[int]:
        """The saved ids if they were made for this model and tokenizer; else [] (logged)."""
        saved = read_json(self._dir(key) / _PREFIX, SavedPrefix)
        if saved is None:
            return []
        if (saved.model, saved.model_digest, saved.tokenizer_digest) != (model, model_digest, tokenizer_digest):
            log.info("not re-warming %s: its saved prefix is for %s, the engine runs %s", key, saved.model, model)
            return []
        return saved.ids



def migrate_legacy(legacy: Path, base: Path) -> list[str]:
    """Move the records an earlier layout kept in ``legacy`` (``state/node/workspaces``) into each workspace's one
    folder under ``base``, then remove ``legacy`` (and its parent when empty). A file already in the new folder
    wins (it was written later); temp files of interrupted writes are dropped. Returns the keys moved."""
    if not legacy.is_dir():
        return []
    moved = []
    for old in sorted(child for child in legacy.iterdir() if child.is_dir()):
        target = base / old.name
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name in (_RECORD, _PREFIX):
            if (old / name).is_file() and not (target / name).exists():
                os.replace(old / name, target / name)
        moved.append(old.name)
        shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(legacy, ignore_errors=True)
    try:
        legacy.parent.rmdir()  # state/node: nothing else was kept there
    except OSError:
        pass
    if moved:
        log.info("moved %d workspace records from %s into their workspace folders under %s", len(moved), legacy,
                 base)
    return moved
