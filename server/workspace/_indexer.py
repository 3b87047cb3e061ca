"""The index behind a workspace: the files, their content identity and tags, what was skipped, the git
state, and the refresh that turns changes on disk, in overlays and in git into change events.

The workspace holds its lock around every call here.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import stat
import threading
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from contenox.config import WorkspaceConfig
from contenox.errors import PathOutsideWorkspace, RepositoryError, WorkspaceError
from contenox.workspace._cache import TagCache
from contenox.workspace._files import FileSig, gitignore_matcher, scan, stat_file
from contenox.workspace._git import GitRepo, GitSnapshot, open_repo
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._languages import language_for
from contenox.workspace._model import (
    ChangeEvent,
    FileTags,
    IndexStatus,
    Segment,
    SkippedFile,
)
from contenox.workspace._state import INSTRUCTION_FILES, FileState, blob_id, is_binary, is_utf8, map_signature
from contenox.workspace._tags import extract_tags, extract_tags_job

__all__ = ["PARALLEL_MIN_FILES", "Indexer"]

log = logging.getLogger(__name__)

_Update = FileSig | SkippedFile | None
PARALLEL_MIN_FILES = 64
"""Below this many files per worker to tag, tagging stays in this process."""
TRIM_AFTER_FILES = 256


def _release_freed_memory() -> None:
    """Give the heap freed by a big (cold) index back to the OS: parse trees and file bytes are transient."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class Indexer:
    """Files, tags, symbol graph and git state of one root, refreshed incrementally."""

    def __init__(self, root: Path, config: WorkspaceConfig, cache_dir: Path | None) -> None:
        self.root = root
        self.config = config
        self._cache = TagCache(cache_dir)
        self._git: GitRepo | None = open_repo(root)
        self._ignored = self._git.ignored if self._git else gitignore_matcher(root)
        self._files: dict[str, FileState] = {}
        self._skipped: dict[str, SkippedFile] = {}
        self._index = SymbolIndex()
        self._overlays: dict[str, bytes] = {}
        self._dirty: set[str] = set()
        self._snapshot: GitSnapshot | None = None
        self._errors: dict[str, str] = {}
        self._diff: str | None = None
        self._lock = threading.RLock()
        self._rendered: tuple[tuple[object, ...], str] | None = None
        self._ranks_key: tuple[object, ...] | None = None
        self._ranks: object = None

    def relpath(self, path: str | Path) -> str:
        """``path`` (absolute or relative to the root) as a normalized relative POSIX path inside the
        root; raises PathOutsideWorkspace otherwise (symlinks resolved)."""
        raw = Path(path)
        absolute = Path(os.path.abspath(raw if raw.is_absolute() else self.root / raw))
        if not absolute.is_relative_to(self.root):  # the root reached through a symlinked parent
            absolute = Path(os.path.realpath(absolute.parent)) / absolute.name
        rel = absolute.relative_to(self.root).as_posix() if absolute.is_relative_to(self.root) else None
        if rel is None or rel == ".":
            raise PathOutsideWorkspace(f"{path} is outside the workspace {self.root}", path=str(path))
        resolved = (self.root / rel).resolve()
        if not resolved.is_relative_to(self.root):
            raise PathOutsideWorkspace(f"{path} resolves to {resolved}, outside the workspace {self.root}",
                                       path=str(path))
        return rel

    def _bytes(self, rel: str) -> bytes:
        overlay = self._overlays.get(rel)
        if overlay is not None:
            return overlay
        path = self.root / rel
        try:
            info = path.stat()
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(rel)
            if not stat.S_ISREG(info.st_mode):  # a FIFO, socket or device: reading it could block forever
                raise WorkspaceError(f"{rel} is not a regular file (a FIFO, socket or device)", path=rel,
                                     reason="special")
            size = info.st_size
            if size > self.config.max_file_bytes:
                raise WorkspaceError(f"{rel} is {size} bytes, over the workspace.max_file_bytes cap of "
                                     f"{self.config.max_file_bytes}", path=rel, reason="too_large")
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise WorkspaceError(f"{rel} does not exist", path=rel, reason="not_found") from exc
        except IsADirectoryError as exc:
            raise WorkspaceError(f"{rel} is a directory", path=rel, reason="directory") from exc
        except OSError as exc:
            raise WorkspaceError(f"cannot read {rel}: {exc.strerror or exc}", path=rel,
                                 reason="unreadable") from exc

    # ----------------------------------------------------------------- refresh

    def _hinted_updates(self, hints: Iterable[str | Path]) -> dict[str, _Update] | None:
        """Updates for the hinted paths only, or None when a full scan is needed (a directory moved)."""
        updates: dict[str, _Update] = {}
        git_dir = self._git.git_dir if self._git else None
        for hint in hints:
            absolute = Path(hint) if Path(hint).is_absolute() else self.root / hint
            if git_dir is not None and Path(os.path.abspath(absolute)).is_relative_to(git_dir):
                continue
            lexical = Path(os.path.abspath(absolute))
            if not lexical.is_relative_to(self.root) or lexical == self.root:
                continue
            rel = lexical.relative_to(self.root).as_posix()  # not resolved: a symlink leaving is reported
            parts = rel.split("/")
            if ".git" in parts or any("/".join(parts[:i]) in self._skipped for i in range(1, len(parts))):
                continue
            if (self.root / rel).is_dir() and not (self.root / rel).is_symlink():
                return None
            if rel not in self._files and any(p.startswith(rel + "/") for p in self._files):
                return None
            updates[rel] = None if self._ignored(rel, False) else stat_file(self.root, rel,
                                                                          self.config.max_file_bytes)
        return updates

    def _load(self, rel: str, update: _Update) -> FileState | SkippedFile | None:
        overlay = self._overlays.get(rel)
        sig: FileSig | None = None
        if overlay is not None:
            data = overlay
        elif isinstance(update, FileSig):
            sig = update
            try:
                data = (self.root / rel).read_bytes()
            except OSError as exc:
                return SkippedFile(path=rel, reason="unreadable", detail=exc.strerror or str(exc))
            if len(data) > self.config.max_file_bytes:
                return SkippedFile(path=rel, reason="too_large",
                                   detail=f"{len(data)} bytes > {self.config.max_file_bytes}")
        else:
            return update
        blob = blob_id(data)
        old = self._files.get(rel)
        if old is not None and old.blob == blob:
            return FileState(sig=sig, blob=blob, language=old.language, binary=old.binary, utf8=old.utf8,
                             tags=old.tags)
        language = language_for(rel)
        binary = is_binary(data)
        tags: FileTags | None = None
        if language is not None and not binary:
            key = f"{language}-{blob}"
            tags = self._cache.get(key)
            self._errors.pop(rel, None)
            if tags is None:
                try:
                    tags = extract_tags(language, data)
                except Exception as exc:  # a grammar failing on odd input must not stop the index
                    log.warning("tags failed for %s: %s", rel, exc)
                    self._errors[rel] = f"tags failed: {exc}"
                else:
                    self._cache.put(key, tags)
        return FileState(sig=sig, blob=blob, language=language, binary=binary,
                         utf8=binary or is_utf8(data), tags=tags)

    def refresh(self, paths: Iterable[str | Path] | None = None) -> list[ChangeEvent]:
        """Bring the index up to date and say what changed since the previous refresh.

        ``paths`` (from a file watcher) limits the disk check to those paths; None rescans everything.
        """
        with self._lock:
            updates = self._hinted_updates(paths) if paths is not None else None
            if updates is None:
                found = scan(self.root, self._ignored, self.config.max_file_bytes,
                             None if self._git is not None else self.config.max_files_outside_git)
                updates = {rel: None for rel in self._files}
                updates.update({rel: None for rel in self._skipped})
                updates.update(found.files)
                updates.update({s.path: s for s in found.skipped})
                for capped in (s for s in found.skipped if s.reason == "file_cap" and "." not in self._skipped):
                    log.warning("%s: %s", self.root, capped.detail)  # once, when the cap is first reached
            for rel in self._dirty | set(self._overlays):
                if rel not in updates:
                    updates[rel] = stat_file(self.root, rel, self.config.max_file_bytes)
            self._dirty.clear()
            self._prefetch_tags(updates)
            loaded = len(self._files)
            events = self._apply(updates)
            if len(updates) > TRIM_AFTER_FILES and loaded < len(self._files) // 2:
                _release_freed_memory()
            events.extend(self._git_events(bool(events)))
            return events

    def _prefetch_tags(self, updates: dict[str, _Update]) -> None:
        """Tag many new files in worker processes first (a cold index), so ``_load`` finds them cached."""
        todo: list[tuple[str, str, bytes]] = []
        for rel, update in updates.items():
            language = language_for(rel)
            old = self._files.get(rel)
            if (language is None or not isinstance(update, FileSig) or rel in self._overlays
                    or (old is not None and old.sig == update)):
                continue
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            if len(data) > self.config.max_file_bytes or is_binary(data):
                continue
            key = f"{language}-{blob_id(data)}"
            if old is not None and old.blob == key.split("-", 1)[1]:
                continue
            if not self._cache.contains(key):
                todo.append((rel, key, data))
        workers = min(self.config_workers(), len(todo) // PARALLEL_MIN_FILES)
        if workers < 2:
            return
        jobs = [(key.split("-", 1)[0], data) for _, key, data in todo]
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                results = list(pool.map(extract_tags_job, jobs, chunksize=8))
        except (OSError, RuntimeError, BrokenProcessPool) as exc:
            log.warning("parallel tagging unavailable (%s); tagging in this process", exc)
            return
        for (rel, key, _), result in zip(todo, results, strict=True):
            if isinstance(result, str):
                self._errors[rel] = f"tags failed: {result}"
            else:
                self._cache.add_fresh(key, result)

    @staticmethod
    def config_workers() -> int:
        return max(1, min(4, os.cpu_count() or 1))

    def _apply(self, updates: dict[str, _Update]) -> list[ChangeEvent]:
        added: list[tuple[str, FileState]] = []
        deleted: list[tuple[str, FileState]] = []
        events: list[ChangeEvent] = []
        index_files = self._snapshot.index if self._snapshot else {}
        for rel in sorted(updates):
            old = self._files.get(rel)
            update = updates[rel]
            if old is not None and old.sig is not None and update == old.sig and rel not in self._overlays:
                continue
            new = self._load(rel, update)
            if not isinstance(new, FileState):
                self._errors.pop(rel, None)
            if isinstance(new, SkippedFile):
                self._skipped[rel] = new
            else:
                self._skipped.pop(rel, None)
            if not isinstance(new, FileState):
                if old is not None:
                    del self._files[rel]
                    self._index.set_file(rel, None)
                    deleted.append((rel, old))
                continue
            self._files[rel] = new
            if old is None:
                self._index.set_file(rel, new.tags)
                added.append((rel, new))
                continue
            if old.blob == new.blob:
                continue
            map_changed = map_signature(old.tags) != map_signature(new.tags)
            if map_changed:
                self._index.set_file(rel, new.tags)
            elif new.tags is not None:
                self._index.replace_same_shape(rel, new.tags)
            events.append(ChangeEvent(kind="modified", path=rel, segments=self._segments(rel, map_changed)))
        events.extend(self._pair_renames(added, deleted, index_files))
        if events:
            self._diff = None
        return events

    def _segments(self, rel: str, map_changed: bool) -> tuple[Segment, ...]:
        segments: list[Segment] = []
        if map_changed:
            segments.append("repo_map")
        segments.append("pins")
        if self._git is not None:
            segments.append("diff")
        if rel in INSTRUCTION_FILES:
            segments.append("instructions")
        return tuple(segments)

    def _pair_renames(self, added: list[tuple[str, FileState]], deleted: list[tuple[str, FileState]],
                      index_files: dict[str, str]) -> list[ChangeEvent]:
        events: list[ChangeEvent] = []
        gone_by_blob: dict[str, list[tuple[str, FileState]]] = {}
        for rel, state in deleted:
            gone_by_blob.setdefault(state.blob, []).append((rel, state))
        renamed_from: set[str] = set()
        for rel, state in added:
            candidates = gone_by_blob.get(state.blob)
            has_tags = bool(map_signature(state.tags) != ((), ()))
            if candidates:
                old_rel, _ = candidates.pop(0)
                renamed_from.add(old_rel)
                segments = self._segments(rel, has_tags)
                if old_rel in INSTRUCTION_FILES and "instructions" not in segments:
                    segments = (*segments, "instructions")
                events.append(ChangeEvent(kind="renamed", path=rel, old_path=old_rel, segments=segments))
                continue
            untracked = self._git is not None and rel not in index_files
            events.append(ChangeEvent(kind="untracked" if untracked else "added", path=rel, segments=self._segments(rel, has_tags)))
        for rel, state in deleted:
            if rel not in renamed_from:
                events.append(ChangeEvent(kind="deleted", path=rel,
                                          segments=self._segments(rel, map_signature(state.tags) != ((), ()))))
        return events

    def _git_events(self, files_changed: bool) -> list[ChangeEvent]:
        if self._git is None:
            return []
        try:
            snap = self._git.snapshot()
        except RepositoryError as exc:
            self._errors["<git>"] = exc.message
            return []
        self._errors.pop("<git>", None)
        old = self._snapshot
        self._snapshot = snap
        if old is None:
            return []
        events: list[ChangeEvent] = []
        if snap.head != old.head:
            self._diff = None
            events.append(ChangeEvent(kind="committed", segments=("diff",)))
        if snap.index is not old.index and snap.index != old.index:
            staged = sorted(p for p in set(snap.index) | set(old.index) if snap.index.get(p) != old.index.get(p))
            segments: tuple[Segment, ...] = ()
            if not files_changed and not events:
                before = self._diff
                self._diff = None
                if before is None or self.diff_text() != before:
                    segments = ("diff",)
            else:
                segments = ("diff",)
            events.extend(ChangeEvent(kind="staged", path=p, segments=segments) for p in staged)
        return events

    def diff_text(self) -> str:
        """Unified diff of the index and working tree against HEAD ('' outside git)."""
        with self._lock:
            if self._git is None:
                return ""
            if self._diff is None:
                self._diff = self._git.diff_text()
            return self._diff

    def status(self) -> IndexStatus:
        with self._lock:
            snap = self._snapshot
            languages: dict[str, int] = {}
            tagged = defs = 0
            for state in self._files.values():
                if state.tags is not None:
                    tagged += 1
                    defs += len(state.tags.defs)
                    assert state.language is not None
                    languages[state.language] = languages.get(state.language, 0) + 1
            skipped = list(self._skipped.values())
            skipped += [SkippedFile(path=rel, reason="binary") for rel, s in self._files.items() if s.binary]
            if snap is not None:
                skipped += [SkippedFile(path=p, reason="submodule", detail="gitlink in the index")
                            for p in snap.submodules if p not in self._skipped]
            return IndexStatus(
                root=str(self.root), is_git=self._git is not None,
                head=snap.head if snap else None, branch=snap.branch if snap else None,
                detached=snap.detached if snap else False, empty_repo=snap.empty if snap else False,
                files=sum(1 for s in self._files.values() if not s.binary), tagged_files=tagged,
                definitions=defs, languages=dict(sorted(languages.items())),
                skipped=tuple(sorted(skipped, key=lambda s: (s.path, s.reason))),
                non_utf8=tuple(sorted(r for r, s in self._files.items() if not s.utf8)),
                partial=tuple(sorted(r for r, s in self._files.items() if s.tags is not None and s.tags.partial)),
                errors=tuple(f"{k}: {v}" for k, v in sorted(self._errors.items())),
                overlays=tuple(sorted(self._overlays)), cache_hits=self._cache.hits,
                cache_misses=self._cache.misses, cache_rebuilt=self._cache.rebuilt)
