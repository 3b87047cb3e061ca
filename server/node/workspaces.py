"""One workspace as the node holds it: its record, index, planner and write lock."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.errors import InvalidRequest, PathOutsideWorkspace
from contenox.node.store import WorkspaceRecord, WorkspaceStore
from contenox.planner.map_base import MapBase

if TYPE_CHECKING:
    from contenox.planner import Explain, Planner
    from contenox.workspace import Workspace

__all__ = ["WorkspaceState"]


class WorkspaceState:
    """Mutable per-workspace state; every mutation is persisted through the store at once."""

    def __init__(self, root: Path, record: WorkspaceRecord, store: WorkspaceStore) -> None:
        self.root = root
        self.record = record
        self.store = store
        self.lock = asyncio.Lock()
        """Held for a whole turn: two clients' turns on one workspace never interleave (serialized)."""
        self.workspace: Workspace | None = None
        self.planner: Planner | None = None
        self.overlays: dict[str, str | None] = {}
        self.map_base = MapBase()
        """The workspace's base repo map (shared by its threads), rebuilt deliberately."""
        self.busy_client: str | None = None

    @property
    def key(self) -> str:
        return self.record.key

    @property
    def session_id(self) -> str:
        return self.record.session_id

    def relative(self, path: str) -> str:
        """``path`` (absolute, or relative to the root) as a root-relative POSIX path inside the root."""
        if not path or "\x00" in path:
            raise InvalidRequest(f"invalid path {path!r}")
        candidate = Path(path)
        full = (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        try:
            return full.relative_to(self.root).as_posix()
        except ValueError as exc:
            raise PathOutsideWorkspace(f"{path} is outside the workspace {self.root}", path=path,
                                       root=str(self.root)) from exc

    def update(self, **changes: Any) -> None:
        self.record = msgspec.structs.replace(self.record, **changes)
        self.store.save(self.record)

    def pin(self, path: str) -> tuple[str, ...]:
        rel = self.relative(path)
        if not (self.root / rel).is_file():
            raise InvalidRequest(f"cannot pin {path}: not a file in {self.root}", path=path)
        if rel not in self.record.pins:
            self.update(pins=(*self.record.pins, rel))
        return self.record.pins

    def unpin(self, path: str) -> tuple[str, ...]:
        rel = self.relative(path)
        if rel in self.record.pins:
            self.update(pins=tuple(p for p in self.record.pins if p != rel))
        return self.record.pins

    def record_turn(self, explain: Explain) -> None:
        """A turn finished: count it and keep its explain (the planner's journal holds the turn itself)."""
        self.update(turns=self.record.turns + 1, last_used=time.time(), last_explain=explain)

    def summary(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "key": self.key,
            "session_id": self.session_id,
            "turns": self.record.turns,
            "pins": list(self.record.pins),
            "last_used": self.record.last_used,
            "indexed": self.workspace is not None,
            "busy": self.busy_client,
        }
