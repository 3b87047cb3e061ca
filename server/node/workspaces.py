"""One workspace as the node holds it: its record, index, planner and write lock."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.errors import InvalidRequest, PathOutsideWorkspace
from contenox.node.asked import AskedLog
from contenox.node.store import WorkspaceRecord, WorkspaceStore
from contenox.planner.journal import Journal
from contenox.planner.map_base import MapBase
from contenox.planner.turn import unpinnable

if TYPE_CHECKING:
    from contenox.node.completions import CompletionState
    from contenox.planner import Explain, Planner
    from contenox.workspace import ChangeEvent, Workspace

__all__ = ["WorkspaceState"]


class WorkspaceState:
    """Mutable per-workspace state; every mutation is persisted through the store at once."""

    def __init__(self, root: Path, record: WorkspaceRecord, store: WorkspaceStore, folder: Path) -> None:
        self.root = root
        self.record = record
        self.store = store
        self.folder = folder
        """The workspace's planner state (``paths.workspace_dir``): its journal, index, scratch copy."""
        self.journal = Journal(folder)
        """The turns, as the planner recorded them: the one home of the count and the last explain."""
        self.asked = AskedLog(folder)
        """The questions without an answer in the journal (stopped, failed, or cut off), for every client."""
        self.lock = asyncio.Lock()
        """Held for a whole turn: two clients' turns on one workspace never interleave (serialized)."""
        self.workspace: Workspace | None = None
        self.planner: Planner | None = None
        self.overlays: dict[str, dict[str, str]] = {}
        """Unsaved editor buffers: path -> owner (an editor connection) -> text, the latest set last. Two windows
        with the same file each keep theirs; the file reads as the latest until its owner closes or saves it."""
        self.map_base = MapBase()
        """The workspace's base repo map (shared by its threads), rebuilt deliberately."""
        self.busy_client: str | None = None
        self.completions: CompletionState | None = None
        """Inline completions' context block, recent places and results (made by the first completion)."""
        self.pending_changes: list[ChangeEvent] = []
        """What the index's refreshes reported changed since the last turn (an anticipation refreshes too),
        until a turn's plan names them; each change once, the latest last."""

    def set_overlay(self, rel: str, owner: str, text: str | None) -> str | None:
        """``owner``'s buffer of ``rel`` (None: closed or saved); what the file now reads as (None: the disk)."""
        owners = self.overlays.setdefault(rel, {})
        owners.pop(owner, None)
        if text is not None:
            owners[owner] = text
        if not owners:
            del self.overlays[rel]
            return None
        return next(reversed(owners.values()))

    def overlay_texts(self) -> dict[str, str]:
        """What each overlaid file reads as (the latest owner's buffer)."""
        return {rel: next(reversed(owners.values())) for rel, owners in self.overlays.items()}

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

    def pin(self, path: str, max_bytes: int) -> tuple[str, ...]:
        """Pin a file into every turn; refused with the reason unless it is a UTF-8 text file of at most
        ``max_bytes`` (a binary, huge or special file would fail every later turn)."""
        from contenox.planner.inputs import join_pin, split_pin

        file, lines, outline = split_pin(path)
        rel = self.relative(file)
        why = unpinnable(self.root / rel, max_bytes)
        if why:
            raise InvalidRequest(f"cannot pin {path}: {why}", path=path, reason=why)
        spec = join_pin(rel, lines, outline)
        if spec not in self.record.pins:
            self.update(pins=(*self.record.pins, spec))
        return self.record.pins

    def unpin(self, path: str) -> tuple[str, ...]:
        """Unpin ``path:START-END`` / ``path:outline`` exactly, or every pin of a plain ``path``."""
        from contenox.planner.inputs import join_pin, split_pin

        file, lines, outline = split_pin(path)
        rel = self.relative(file)
        if lines or outline:
            kept = tuple(p for p in self.record.pins if p != join_pin(rel, lines, outline))
        else:
            kept = tuple(p for p in self.record.pins if split_pin(p)[0] != rel)
        if kept != self.record.pins:
            self.update(pins=kept)
        return self.record.pins

    def record_turn(self) -> None:
        """A turn finished (the planner's journal holds it, numbered, and its explain): the workspace was used."""
        self.update(last_used=time.time())

    @property
    def turns(self) -> int:
        """The workspace's turn count: the journal's (the loaded planner's, else the journal file's)."""
        return self.planner.turns if self.planner is not None else self.journal.count()

    def last_explain(self) -> Explain | None:
        """The last turn's explain, from the journal (persisted across restarts)."""
        if self.planner is not None:
            return self.planner.last_explain()
        last = self.journal.last()
        return last.explain if last is not None else None

    def summary(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "key": self.key,
            "session_id": self.session_id,
            "turns": self.turns,
            "pins": list(self.record.pins),
            "last_used": self.record.last_used,
            "indexed": self.workspace is not None,
            "busy": self.busy_client,
        }
