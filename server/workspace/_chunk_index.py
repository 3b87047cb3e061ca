"""Every indexed file's chunks and their BM25 index, kept in step with the file index by content id.

``sync`` re-chunks only the files whose blob id changed since the last sync (an edit, an overlay, a
checkout), so a warm index costs one dictionary pass per turn. Code files are cut at their definitions;
project configuration (``pyproject.toml``, ``requirements.txt``...) at its sections (:mod:`._config_files`).
"""

from __future__ import annotations

import bisect
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from contenox.workspace._bm25 import Bm25, text_terms
from contenox.workspace._chunks import MODULE, Chunk, chunk_file
from contenox.workspace._config_files import chunk_config, config_format, is_project_config
from contenox.workspace._state import FileState

__all__ = ["ChunkIndex", "FileChunks"]

log = logging.getLogger(__name__)


class FileChunks:
    """One file's chunks (in line order) for the content ``blob``."""

    __slots__ = ("blob", "chunks", "starts")

    def __init__(self, blob: str, chunks: tuple[Chunk, ...]) -> None:
        self.blob = blob
        self.chunks = chunks
        self.starts = [c.start for c in chunks]


def _terms(path: str, chunk: Chunk, lines: list[str]) -> Counter[str]:
    counts = text_terms("\n".join(lines[chunk.start - 1:chunk.end]))
    stem = path.rsplit(".", 1)[0]
    counts.update(text_terms(f"{stem.replace('/', ' ')} {'' if chunk.name == MODULE else chunk.name}"))
    return counts


def _format(path: str, state: FileState) -> str | None:
    """How a file is chunked: ``"code"`` (at its definitions), a configuration format, or None (not at all)."""
    if state.tags is not None and state.language is not None:
        return "code"
    if state.binary or not state.utf8:
        return None
    return config_format(path)


class ChunkIndex:
    """Chunks of the tagged files, a basename lookup for mentioned paths, and BM25 over the chunks."""

    def __init__(self) -> None:
        self.files: dict[str, FileChunks] = {}
        self.bm25 = Bm25()
        self._by_name: dict[str, set[str]] = {}
        self.config: set[str] = set()
        """Chunked files that configure the project (``pyproject.toml``, ``setup.py``...)."""
        self._unchunked: dict[str, str] = {}
        """Files neither code nor configuration -> the blob that was found so (not looked at again)."""

    def __len__(self) -> int:
        return sum(len(f.chunks) for f in self.files.values())

    def sync(self, states: Mapping[str, FileState], read: Callable[[str], str | None]) -> int:
        """Re-chunk the files whose content changed; returns how many were (re)chunked or dropped."""
        changed = 0
        for path in [p for p in self.files if p not in states]:
            self._set(path, None, None)
            changed += 1
        for path, state in states.items():
            have = self.files.get(path)
            if (have is not None and have.blob == state.blob) or self._unchunked.get(path) == state.blob:
                continue
            fmt = _format(path, state)
            if fmt is None:  # neither code nor configuration (README.md, data): remembered per content
                self._unchunked[path] = state.blob
                if have is not None:
                    self._set(path, None, None)
                    changed += 1
                continue
            self._unchunked.pop(path, None)
            text = read(path)
            if text is None:
                if have is not None:
                    self._set(path, None, None)
                continue
            try:
                if state.tags is not None and state.language is not None:
                    chunks = chunk_file(state.language, state.tags.defs, text)
                else:
                    chunks = chunk_config(fmt, text)
            except Exception as exc:  # odd tags must not stop retrieval of the other files
                log.warning("chunking failed for %s: %s", path, exc)
                chunks = ()
            self._set(path, FileChunks(state.blob, chunks), text.split("\n"))
            changed += 1
        return changed

    def _set(self, path: str, chunks: FileChunks | None, lines: list[str] | None) -> None:
        name = path.rsplit("/", 1)[-1]
        if chunks is None or lines is None:
            self.files.pop(path, None)
            self._by_name.get(name, set()).discard(path)
            self.config.discard(path)
            self.bm25.set_file(path, None)
            return
        self.files[path] = chunks
        self._by_name.setdefault(name, set()).add(path)
        if is_project_config(path):
            self.config.add(path)
        self.bm25.set_file(path, [_terms(path, c, lines) for c in chunks.chunks])

    def chunk(self, path: str, local: int) -> Chunk:
        return self.files[path].chunks[local]

    def at(self, path: str, line: int, *, near: bool = False) -> int | None:
        """The number of the chunk of ``path`` holding ``line`` (with ``near``: else the one before it)."""
        found = self.files.get(path)
        if found is None:
            return None
        i = bisect.bisect_right(found.starts, line) - 1
        if i < 0:
            return 0 if near and found.chunks else None
        return i if near or found.chunks[i].end >= line else None

    def overlapping(self, path: str, lo: int, hi: int) -> Iterator[int]:
        found = self.files.get(path)
        if found is None:
            return
        first = self.at(path, lo, near=True) or 0
        for i in range(first, len(found.chunks)):
            chunk = found.chunks[i]
            if chunk.start > hi:
                break
            if chunk.end >= lo:
                yield i

    def resolve(self, raw: str) -> str | None:
        """A mentioned path as an indexed one: exact, an absolute or longer path ending in one, or a
        shorter one (``signer.py``, ``pkg/signer.py``) that ends exactly one indexed path or, if several,
        the shortest (then first by name)."""
        path = raw.replace("\\", "/").strip()
        while path.startswith("./"):
            path = path[2:]
        if path in self.files:
            return path
        parts = [p for p in path.split("/") if p]
        for i in range(1, len(parts)):
            tail = "/".join(parts[i:])
            if tail in self.files:
                return tail
        options = [p for p in self._by_name.get(parts[-1] if parts else "", ()) if p == path or
                   p.endswith("/" + path)]
        return min(options, key=lambda p: (len(p), p)) if options else None

    def containing(self, ident: str, paths: Mapping[str, object] | set[str]) -> list[tuple[int, str, int]]:
        """Chunks in ``paths`` whose text holds the identifier ``ident``: (occurrences, path, chunk)."""
        return [(tf, path, local) for path, local, tf in self.bm25.containing(ident.strip("_").lower())
                if path in paths]
