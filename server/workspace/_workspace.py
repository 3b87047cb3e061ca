"""The workspace: an incrementally refreshed index of one folder (git repository or not).

``refresh()`` re-reads what changed on disk, in editor overlays and in git, and reports it as change
events naming the planner segments they invalidate. Everything is guarded by one lock, so the async node
may run ``refresh`` in a worker thread while serving reads.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from contenox.config import WorkspaceConfig
from contenox.errors import PathOutsideWorkspace, WorkspaceError
from contenox.workspace._calls import asks_how_it_works, call_tree, render_tree
from contenox.workspace._indexer import Indexer
from contenox.workspace._mentions import words_in
from contenox.workspace._model import (
    ChangeEvent,
    DiffFile,
    RelatedHit,
    Retrieval,
    RetrievalQuery,
    RetrievedChunk,
    SearchHit,
    SymbolInfo,
    SymbolLocation,
)
from contenox.workspace._repo_map import render_repo_map
from contenox.workspace._retrieve import Retriever
from contenox.workspace._search import compile_pattern, related, search
from contenox.workspace._state import INSTRUCTION_FILES, is_binary

__all__ = ["Workspace"]

log = logging.getLogger(__name__)

class Workspace(Indexer):
    """Index, repo map, change tracking, search and retrieval for one workspace root."""

    def __init__(self, root: Path, config: WorkspaceConfig, cache_dir: Path | None) -> None:
        super().__init__(root, config, cache_dir)
        self._retriever = Retriever()

    @classmethod
    def open(cls, root: str | Path, config: WorkspaceConfig, cache_dir: str | Path | None) -> Workspace:
        """Open ``root`` and build (or load from the tags cache) its index."""
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise WorkspaceError(f"workspace root {path} is not a directory", path=str(path))
        ws = cls(path, config, Path(cache_dir) if cache_dir is not None else None)
        ws.refresh()
        ws._cache.prune({f"{s.language}-{s.blob}" for s in ws._files.values() if s.tags is not None})
        return ws

    # ----------------------------------------------------------------- paths and content
    def read_text(self, rel_path: str | Path) -> str:
        """The text of a workspace file (editor overlay first); clear errors for paths outside the root,
        files over the size cap, binary and non-UTF-8 content."""
        with self._lock:
            rel = self.relpath(rel_path)
            data = self._bytes(rel)
        if is_binary(data):
            raise WorkspaceError(f"{rel} is a binary file", path=rel, reason="binary")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(f"{rel} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset "
                                 f"{exc.start})", path=rel, reason="non_utf8") from exc

    def _text_or_none(self, rel: str) -> str | None:
        state = self._files.get(rel)
        if state is None or state.binary:
            return None
        try:
            return self._bytes(rel).decode("utf-8", errors="replace")
        except WorkspaceError:
            return None

    def set_overlay(self, rel_path: str | Path, text: str | None) -> None:
        """An unsaved editor buffer for ``rel_path`` (None drops it). Overlays win over disk; they are
        applied at the next ``refresh`` (so a burst of keystrokes costs one re-index)."""
        with self._lock:
            rel = self.relpath(rel_path)
            if text is None:
                if self._overlays.pop(rel, None) is None:
                    return
            else:
                data = text.encode("utf-8")
                if self._overlays.get(rel) == data:
                    return
                self._overlays[rel] = data
            self._dirty.add(rel)

    # ----------------------------------------------------------------- reads

    def index_notes(self) -> tuple[str, ...]:
        """What every turn must say about the index itself (the file cap outside git)."""
        with self._lock:
            capped = self._skipped.get(".")
        if capped is None or capped.reason != "file_cap":
            return ()
        return (f"not a git repository: only part of {self.root} is indexed ({capped.detail})",)

    def instructions(self) -> list[tuple[str, str]]:
        """Repository instructions in their fixed order: (relative path, text) of those present."""
        found: list[tuple[str, str]] = []
        for rel in INSTRUCTION_FILES:
            with self._lock:
                if rel not in self._files:
                    continue
            try:
                found.append((rel, self.read_text(rel)))
            except WorkspaceError as exc:
                log.warning("instructions %s unreadable: %s", rel, exc.message)
        return found

    def diff_files(self) -> list[DiffFile]:
        """The files and hunks of ``diff_text()`` as data ([] outside git)."""
        with self._lock:
            return [] if self._git is None else self._git.diff_files()

    def search(self, pattern: str, regex: bool = True, limit: int = 100, *, word: bool = False
               ) -> list[SearchHit]:
        """Lines matching ``pattern`` in indexed text files (ignored files never are), by path."""
        rx = compile_pattern(pattern, regex, word)
        with self._lock:
            return search(sorted(self._files), self._text_or_none, rx, limit)

    def indexed_paths(self) -> list[str]:
        """Every indexed file, as a root-relative POSIX path (what an answer may cite)."""
        with self._lock:
            return sorted(self._files)

    def file_lines(self, rel_path: str) -> int | None:
        """The number of lines of an indexed text file (overlay first); None when not an indexed text file."""
        with self._lock:
            text = self._text_or_none(rel_path) if rel_path in self._files else None
        return None if text is None else text.count("\n") + (0 if text.endswith("\n") else 1)

    def signatures(self) -> tuple[str | None, dict[str, tuple[str, ...]]]:
        """(HEAD commit or None, the definition lines of every tagged file in line order): what the repo
        map is made of, for telling which symbols changed since a base map was rendered."""
        with self._lock:
            head = self._snapshot.head if self._snapshot is not None else None
            out: dict[str, tuple[str, ...]] = {}
            for rel, state in self._files.items():
                if state.tags is not None and state.tags.defs:
                    lines = [d.text.strip() for d in sorted(state.tags.defs, key=lambda d: (d.line, d.name))]
                    out[rel] = tuple(dict.fromkeys(lines))
            return head, out

    def knows_symbol(self, name: str) -> bool:
        """Whether the workspace defines, uses or otherwise holds the identifier ``name`` (an attribute, a
        parameter): what makes a cited symbol real."""
        with self._lock:
            if self._index.definitions(name) or name in self._index.referencers:
                return True
            return self._retriever.active and self._retriever.chunks.bm25.has_term(name)

    def find_symbol(self, name: str) -> list[SymbolLocation]:
        with self._lock:
            return [SymbolLocation(name=d.name, kind=d.kind, path=path, line=d.line, end_line=d.end_line,
                                   text=d.text.strip()) for path, d in self._index.definitions(name)]

    def refresh(self, paths: Iterable[str | Path] | None = None) -> list[ChangeEvent]:
        with self._lock:
            events = super().refresh(paths)
            if self._retriever.active:  # chunks are built by the first retrieval, then kept current
                self._retriever.sync(self._files, self._text_or_none)
            return events

    def retrieve(self, query: RetrievalQuery, budget_tokens: int, count_tokens: Callable[[str], int], *,
                 exclude: Collection[str] = ()) -> Retrieval:
        """The code chunks a turn about ``query`` should show, best first, within ``budget_tokens``
        (``count_tokens`` of each chunk's ``render()``); chunk ids in ``exclude`` are left out."""
        with self._lock:
            self._retriever.sync(self._files, self._text_or_none)
            return self._retriever.retrieve(self._index, query, budget_tokens, count_tokens, exclude,
                                            self._text_or_none)

    def call_tree(self, query: RetrievalQuery, max_lines: int) -> tuple[str, tuple[str, ...]]:
        """For a question that asks how code works or to trace it (:func:`asks_how_it_works`): the calls the
        definitions it names make (a test it names too), read from the source, as indented lines (``''`` when it asks something else or names nothing the
        tree can start from), and the names the tree starts from."""
        if max_lines <= 0 or not asks_how_it_works(query.text):
            return "", ()
        with self._lock:
            words = [w for w in words_in(query.text) if w.code]
            trees = call_tree(self._index, lambda path: (self._text_or_none(path) or "").split("\n"),
                              [(w.name, w.dotted) for w in words], max_lines=max_lines)
            return render_tree(trees), tuple(t.name for t in trees)

    def chunk_at(self, rel_path: str | Path, line: int) -> RetrievedChunk | None:
        """The chunk holding ``line`` (1-based) of a workspace file, or None (tokens and score are 0)."""
        with self._lock:
            rel = self._known_rel(str(rel_path))
            if rel is None:
                return None
            self._retriever.sync(self._files, self._text_or_none)
            local = self._retriever.chunks.at(rel, line)
            if local is None:
                return None
            text = self._text_or_none(rel) or ""
            return self._retriever.make_chunk(rel, local, text.split("\n"))

    def prepare(self) -> None:
        """Build the file graph now (it is otherwise built lazily by the first map or symbol query after a
        definition change) and, once retrieval is in use, its BM25 postings; the watcher calls this after
        each refresh, off the turn's critical path."""
        with self._lock:
            if self._retriever.active:
                self._retriever.chunks.bm25.compile()
            graph = self._index.compiled()
            key = (graph.version, (), ())
            if key != self._ranks_key:
                self._ranks = graph.rank((), ())
                self._ranks_key = key

    def _base_ranks(self) -> dict[str, float]:
        graph = self._index.compiled()
        ranks = graph.rank((), ())
        return {path: float(ranks[i]) for i, path in enumerate(graph.paths)}

    def symbol_info(self, name: str) -> SymbolInfo | None:
        """Where ``name`` is defined, which files use it and how its files rank (LSP hover)."""
        with self._lock:
            defs = self.find_symbol(name)
            users = self._index.referencers.get(name, {})
            if not defs and not users:
                return None
            ranks = self._base_ranks()
            order = sorted(ranks, key=lambda p: (-ranks[p], p))
            position = {p: i + 1 for i, p in enumerate(order)}
            best = min((d.path for d in defs), key=lambda p: position.get(p, len(order) + 1), default=None)
            return SymbolInfo(name=name, definitions=tuple(defs),
                              referenced_by=tuple(sorted(users, key=lambda p: (-ranks.get(p, 0.0), p))),
                              rank=ranks.get(best, 0.0) if best else 0.0,
                              rank_position=position.get(best, 0) if best else 0, files_ranked=len(order))

    def related(self, text: str, limit: int = 20) -> list[RelatedHit]:
        """Definitions of the names in ``text`` and places that use them ("find related code")."""
        with self._lock:
            return related(self._index, self._base_ranks(), text, self._text_or_none, limit)

    def repo_map(self, budget_tokens: int, count_tokens: Callable[[str], int], mentioned: Iterable[str] = (),
                 pinned: Iterable[str] = (), open_files: Iterable[str] = ()) -> str:
        """The ranked repo map within ``budget_tokens``: byte-identical for the same index and inputs."""
        with self._lock:
            files: set[str] = set()
            idents: set[str] = set()
            for item in mentioned:
                rel = self._known_rel(item)
                if rel is not None:
                    files.add(rel)
                else:
                    idents.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", item))
            for item in (*pinned, *open_files):
                rel = self._known_rel(item)
                if rel is not None:
                    files.add(rel)
            graph = self._index.compiled()
            key = (graph.version, tuple(sorted(files)), tuple(sorted(idents)))
            if key != self._ranks_key:
                self._ranks = graph.rank(sorted(files), sorted(idents))
                self._ranks_key = key
            full_key = (*key, budget_tokens, count_tokens)
            if self._rendered is not None and self._rendered[0] == full_key:
                return self._rendered[1]
            text = render_repo_map(graph, self._ranks, budget_tokens, count_tokens,  # type: ignore[arg-type]
                                   sorted(idents))
            self._rendered = (full_key, text)
            return text

    def _known_rel(self, item: str) -> str | None:
        try:
            rel = self.relpath(item)
        except (PathOutsideWorkspace, ValueError, OSError):
            return None
        return rel if rel in self._files else None

