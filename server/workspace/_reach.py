"""Rankings for files that hold no definition the question names: the project's configuration, a package's
export list and modules two hops from the question's code.

On repositories nobody tuned for, these were what retrieval missed: a question about dependencies or
supported versions needs ``pyproject.toml`` / ``setup.py`` / ``requirements.txt``; one about what a package
exports needs its ``__init__.py``; and a bug in a grammar module or a buffer class is two calls away from the
``Request`` or ``next_event`` the question names. Each function lists chunks ``(path, chunk number, reason)``
best first, like the rankings of :mod:`._scorers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from contenox.workspace._bm25 import text_terms
from contenox.workspace._chunk_index import ChunkIndex
from contenox.workspace._config_files import calls_for_config
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._mentions import changed_lines, paths_in, words_in
from contenox.workspace._model import RetrievalQuery
from contenox.workspace._scorers import Hit, is_test

__all__ = ["asks_about_config", "asks_about_exports", "config_hits", "export_hits", "near_hits"]


CONFIG_HITS = 6
"""Configuration chunks a question about configuration ranks."""
NEAR_POOL = 12
"""Files closest to the question's files (file graph) that the near ranking considers."""
NEAR_FILES = 6
"""Files the near ranking offers (its best chunk each)."""
SEEDS = 12
"""The question's files (by weight) whose text is searched for paths of other files."""
CONFIG_SEEDS = 2
"""Configuration hits that count among the question's files."""
EXPORT_CHUNKS = 12
_PACKAGE_FILES = ("__init__.py", "index.js", "index.ts", "index.mjs", "mod.rs", "lib.rs")
_EXPORTS = re.compile(
    r"\b(?:re-?)?export(?:s|ed|ing)?\b|\bpublic (?:api|interface|surface|names?)\b|\b__all__\b|import \*"
    r"|\bimportable\b|\bimport(?:ed)? (?:it |them )?(?:directly )?from\b|\btop[- ]level (?:package|namespace|import)s?\b",
    re.IGNORECASE)


def asks_about_config(query: RetrievalQuery) -> bool:
    """The question (or its selection) is about configuration, or names a configuration file."""
    return calls_for_config(f"{query.text}\n{query.selection}")


def asks_about_exports(query: RetrievalQuery) -> bool:
    """The question is about what a package exports (its public API, ``__all__``, importing from it)."""
    return _EXPORTS.search(f"{query.text}\n{query.selection}") is not None


def config_hits(chunks: ChunkIndex, query: RetrievalQuery) -> list[Hit]:
    """For a question about configuration: configuration chunks by BM25 over them, then (if BM25 matched
    none) the chunks of the root's configuration files."""
    if not chunks.config or not asks_about_config(query):
        return []
    terms = text_terms(f"{query.text}\n{query.selection}")
    found = chunks.bm25.search(terms, CONFIG_HITS, within=chunks.config)
    hits = [(path, local, f"configuration, BM25 rank {rank}") for rank, (_, path, local) in enumerate(found, 1)]
    if not hits:
        for path in sorted(p for p in chunks.config if "/" not in p):
            hits.extend((path, local, "project configuration") for local in range(len(chunks.files[path].chunks)))
    return hits[:CONFIG_HITS]


def _package_files(chunks: ChunkIndex, path: str) -> list[str]:
    """The package files (``__init__.py``, ``index.js``...) of the folders holding ``path``: the nearest,
    then the outermost of the unbroken chain of packages above it."""
    parts = path.split("/")[:-1]
    found: list[str] = []
    for depth in range(len(parts), 0, -1):
        folder = "/".join(parts[:depth])
        here = next((f"{folder}/{name}" for name in _PACKAGE_FILES if f"{folder}/{name}" in chunks.files), None)
        if here is None:
            if found:
                break
            continue
        if here != path:
            found.append(here)
    return found[:1] + found[-1:] if len(found) > 1 else found


def export_hits(chunks: ChunkIndex, query: RetrievalQuery, named: Sequence[Hit]) -> list[Hit]:
    """For a question about a package's exports: the package file (``__init__.py``) of the packages that hold
    the definitions it names, and of the packages it names by their import name (``h11``, ``docstring_parser``)."""
    if not asks_about_exports(query):
        return []
    files: list[str] = []
    for path, _, reason in named:
        if reason.startswith("defines "):
            files.extend(_package_files(chunks, path))
    for word in words_in(f"{query.text}\n{query.selection}", all_code=True):
        for name in _PACKAGE_FILES[:4]:
            found = chunks.resolve(f"{word.name}/{name}")
            if found is not None:
                files.append(found)
    hits: list[Hit] = []
    for path in dict.fromkeys(files):
        count = min(EXPORT_CHUNKS, len(chunks.files[path].chunks))
        hits.extend((path, local, f"exports of {path.rsplit('/', 1)[0]}") for local in range(count))
    return hits


def _seed_files(chunks: ChunkIndex, query: RetrievalQuery, defines: Sequence[Hit], plain: Sequence[Hit],
                uses: Sequence[Hit]) -> dict[str, float]:
    """The files the question points at (weight): frames and named definitions, mentioned paths, the open
    file and the diff's files 1, plain-word definitions 0.5; test files half."""
    seeds: dict[str, float] = {}

    def add(paths: Iterable[str], weight: float) -> None:
        for path in paths:
            share = weight / 2 if is_test(path) else weight
            seeds[path] = max(seeds.get(path, 0.0), share)

    add((path for path, _, _ in defines), 1.0)
    add((path for path, _, reason in uses if reason == "path mentioned"), 1.0)
    add((path for path, _, _ in plain), 0.5)
    if query.open_file and (rel := chunks.resolve(query.open_file)) is not None:
        add([rel], 1.0)
    add((rel for raw in changed_lines(query.diff) if (rel := chunks.resolve(raw)) is not None), 1.0)
    return seeds


def _referenced_chunk(chunks: ChunkIndex, index: SymbolIndex, path: str, seeds: Iterable[str]) -> int:
    """The chunk of ``path`` defining what the seed files reference most (else its first chunk)."""
    counts: dict[str, int] = {}
    for seed in seeds:
        tags = index.tags.get(seed)
        if tags is not None:
            for name, count in tags.refs:
                counts[name] = counts.get(name, 0) + count
    tags = index.tags.get(path)
    best = max(((counts.get(d.name, 0), -d.line) for d in tags.defs), default=(0, 0)) if tags else (0, 0)
    if best[0] > 0:
        local = chunks.at(path, -best[1])
        if local is not None:
            return local
    return 0


def _named_files(chunks: ChunkIndex, hits: Iterable[Hit], read_lines: Callable[[str], list[str]]) -> list[str]:
    """Workspace files that the question's chunks name by path (``exec(open("pkg/_version.py").read())`` in
    setup.py, a fixture file a test opens)."""
    found: list[str] = []
    for path, local, _ in list(dict.fromkeys(hits))[:SEEDS]:
        chunk = chunks.chunk(path, local)
        for raw in paths_in("\n".join(read_lines(path)[chunk.start - 1:chunk.end])):
            rel = chunks.resolve(raw)
            if rel is not None and rel != path:
                found.append(rel)
    return list(dict.fromkeys(found))


def near_hits(chunks: ChunkIndex, index: SymbolIndex, query: RetrievalQuery, defines: Sequence[Hit],
              plain: Sequence[Hit], uses: Sequence[Hit], config: Sequence[Hit], calls: Sequence[Hit],
              read_lines: Callable[[str], list[str]]) -> list[Hit]:
    """Modules the question's files use, one or two hops away, that the question's words match: the
    :data:`NEAR_POOL` files closest to them (a walk over the file graph restarting at them, relative to one
    restarting anywhere) ordered by their best BM25 chunk for the question; files it does not match follow
    with the chunk defining what the question's files use most from them. The question's own files and tests
    are left out."""
    seeds = _seed_files(chunks, query, defines, plain, uses)
    for path, _, _ in config[:CONFIG_SEEDS]:
        seeds.setdefault(path, 0.5)
    if not seeds:
        return []
    graph = index.compiled()
    lift = graph.lift(seeds)
    reached = np.flatnonzero(lift > 0)
    pool: list[str] = []
    for i in reached[np.lexsort((reached, -lift[reached]))]:  # closest first, ties by path order
        path = graph.paths[int(i)]
        if path not in seeds and path in chunks.files and not is_test(path):
            pool.append(path)
            if len(pool) >= NEAR_POOL:
                break
    named = [path for path in _named_files(chunks, [*defines, *config[:CONFIG_SEEDS]], read_lines)
             if path not in seeds and not is_test(path)]
    files = list(dict.fromkeys([*named, *pool]))[:NEAR_POOL]
    if not files:
        return []
    best: dict[str, int] = {}
    for path, local, _ in calls:  # a chunk the question's code calls, else its best BM25 chunk
        if path in files:
            best.setdefault(path, local)
    for _, path, local in chunks.bm25.search(text_terms(f"{query.text}\n{query.selection}"), 8 * NEAR_POOL,
                                             within=set(files)):
        best.setdefault(path, local)
    ordered = [*(path for path in best if path in named), *(path for path in named if path not in best),
               *(path for path in best if path not in named),
               *(path for path in files if path not in best and path not in named)][:NEAR_FILES]
    return [(path, best[path] if path in best else _referenced_chunk(chunks, index, path, seeds),
             f"near the question's code ({'named there' if path in named else 'matches it' if path in best else 'used by it'})")
            for path in ordered]
