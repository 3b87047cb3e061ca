"""On-disk tags cache keyed by content: ``(language, git blob id)`` -> :class:`FileTags`.

One small msgpack file per entry under ``<cache_dir>/tags-v<VERSION>-<queries digest>/``; the directory
name changes with the format or any tags query, so stale entries are never read. An entry that does not
decode (torn write, disk trouble, another version) is counted, rebuilt and rewritten; never fatal.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import msgspec

from contenox.workspace._languages import queries_digest
from contenox.workspace._model import FileTags

__all__ = ["CACHE_VERSION", "TagCache"]

log = logging.getLogger(__name__)

CACHE_VERSION = 1


class _Entry(msgspec.Struct, frozen=True, array_like=True):
    version: int
    key: str
    tags: FileTags


class TagCache:
    """Content-addressed tags cache; ``None`` as the directory keeps everything in memory only."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.dir = cache_dir / f"tags-v{CACHE_VERSION}-{queries_digest()}" if cache_dir else None
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder(_Entry)
        self.hits = 0
        self.misses = 0
        self.rebuilt = 0
        self.write_errors = 0
        self._fresh: dict[str, FileTags] = {}
        if self.dir is not None:
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                log.warning("tags cache disabled: cannot create %s: %s", self.dir, exc)
                self.dir = None

    def _path(self, key: str) -> Path:
        assert self.dir is not None
        return self.dir / key[-2:] / f"{key}.msgpack"

    def add_fresh(self, key: str, tags: FileTags) -> None:
        """Tags computed ahead (in parallel) for the next ``get``; also persisted."""
        self._fresh[key] = tags
        self.put(key, tags)

    def get(self, key: str) -> FileTags | None:
        fresh = self._fresh.pop(key, None)
        if fresh is not None:
            self.misses += 1
            return fresh
        if self.dir is None:
            self.misses += 1
            return None
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError as exc:
            log.warning("tags cache: cannot read %s: %s", path, exc)
            self.misses += 1
            return None
        try:
            entry = self._decoder.decode(raw)
            if entry.version != CACHE_VERSION or entry.key != key:
                raise ValueError(f"entry for {entry.key!r} v{entry.version}")
        except (msgspec.DecodeError, ValueError) as exc:
            log.info("tags cache: corrupt entry %s (%s); rebuilding", path.name, exc)
            self.rebuilt += 1
            return None
        self.hits += 1
        return entry.tags

    def prune(self, keep: set[str], slack: int = 1000) -> int:
        """Drop entries not in ``keep`` once they outnumber it by ``slack`` (and caches of other versions
        or queries); returns how many files were removed."""
        if self.dir is None:
            return 0
        removed = 0
        for other in self.dir.parent.glob("tags-v*"):
            if other != self.dir and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
                removed += 1
        try:
            entries = [entry for sub in os.scandir(self.dir) if sub.is_dir() for entry in os.scandir(sub.path)]
        except OSError:
            return removed
        if len(entries) <= len(keep) + slack:
            return removed
        for entry in entries:
            if entry.name.removesuffix(".msgpack") not in keep:
                try:
                    os.unlink(entry.path)
                    removed += 1
                except OSError:
                    pass
        return removed

    def contains(self, key: str) -> bool:
        return key in self._fresh or (self.dir is not None and self._path(key).is_file())

    def put(self, key: str, tags: FileTags) -> None:
        if self.dir is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(self._encoder.encode(_Entry(CACHE_VERSION, key, tags)))
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            self.write_errors += 1
            log.warning("tags cache: cannot write %s: %s", path, exc)
