"""Question-driven retrieval: fuse the mention, BM25 and graph rankings of chunks and fit them to a budget.

Weighted reciprocal-rank fusion (k=60; see :data:`WEIGHTS`): a chunk found by several rankings sums its
shares and keeps every reason. Test code counts half unless the query is about tests (it names a test
or a test file, or carries test output). Chunks partition their files, so no chosen chunk nests in
another. Then the best remaining candidate is taken while it fits the token budget, each further chunk
of a file already chosen counting :data:`SAME_FILE` times less, so the budget covers more of the files
involved; a chunk that does not fit is reported dropped. Ties fall to path and line: the same index
and query give the same result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

import msgspec

from contenox.workspace._chunk_index import ChunkIndex
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._model import Retrieval, RetrievalQuery, RetrievedChunk
from contenox.workspace._scorers import Hit, bm25_hits, graph_hits, is_test, mention_hits
from contenox.workspace._state import FileState

__all__ = ["RRF_K", "Retriever"]

RRF_K = 60
WEIGHTS = {"defines": 3.0, "graph": 1.5, "uses": 1.0, "bm25": 1.0, "plain": 0.5}
"""Named definitions and stack frames outrank everything; plain words that happen to name a definition
(``thread``, ``usage``) count least."""
MAX_CANDIDATES = 48
"""Fused candidates tried against the budget; the rest are reported in one line."""
MIN_TOKENS = 24
"""Stop trying once less than this much budget is left."""
TEST_WEIGHT = 0.5
"""Test code's share of its fused score when the query is not about tests."""
SAME_FILE = 0.7
"""A file's n-th chosen chunk competes with ``SAME_FILE ** n`` of its score."""
_ABOUT_TESTS = re.compile(r"\btests?\b|\btest_\w+|\w+_test\b|\bspec\b", re.IGNORECASE)


class _Reader:
    """File lines read once per retrieval (editor overlays included)."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._lines: dict[str, list[str]] = {}

    def __call__(self, path: str) -> list[str]:
        found = self._lines.get(path)
        if found is None:
            text = self._read(path)
            found = self._lines[path] = [] if text is None else text.split("\n")
        return found


def fuse(rankings: dict[str, list[Hit]]) -> dict[tuple[str, int], tuple[float, list[str]]]:
    """Weighted reciprocal-rank fusion; a chunk's rank in a ranking is its first appearance there."""
    fused: dict[tuple[str, int], tuple[float, list[str]]] = {}
    for scorer, hits in rankings.items():
        rank = 0
        seen: set[tuple[str, int]] = set()
        for path, local, reason in hits:
            key = (path, local)
            score, reasons = fused.get(key, (0.0, []))
            if key not in seen:
                seen.add(key)
                rank += 1
                score += WEIGHTS[scorer] / (RRF_K + rank)
            if reason not in reasons:
                reasons.append(reason)
            fused[key] = (score, reasons)
    return fused


class Retriever:
    """The chunk index of a workspace and retrieval over it; the workspace's lock guards every call."""

    def __init__(self) -> None:
        self.chunks = ChunkIndex()
        self.active = False
        """Set by the first retrieval: from then on every refresh keeps the chunks current."""

    def sync(self, states: dict[str, FileState], read: Callable[[str], str | None]) -> int:
        self.active = True
        return self.chunks.sync(states, read)

    def make_chunk(self, path: str, local: int, lines: list[str], *, tokens: int = 0, score: float = 0.0,
                   reasons: tuple[str, ...] = ()) -> RetrievedChunk:
        c = self.chunks.chunk(path, local)
        return RetrievedChunk(path=path, start_line=c.start, end_line=c.end, name=c.name, kind=c.kind,
                              header=c.header, text="\n".join(lines[c.start - 1:c.end]), tokens=tokens,
                              score=score, reasons=reasons)

    def retrieve(self, index: SymbolIndex, query: RetrievalQuery, budget: int, count_tokens: Callable[[str], int],
                 exclude: Collection[str], read: Callable[[str], str | None]) -> Retrieval:
        reader = _Reader(read)
        mentions = mention_hits(self.chunks, index, query)
        fused = fuse({"defines": mentions.defines,
                      "graph": graph_hits(self.chunks, index, query, reader, mentions.defines),
                      "uses": mentions.uses, "bm25": bm25_hits(self.chunks, query), "plain": mentions.plain})
        if not (query.terminal.strip() or _ABOUT_TESTS.search(f"{query.text}\n{query.selection}")):
            fused = {k: (score * TEST_WEIGHT if is_test(k[0]) else score, reasons)
                     for k, (score, reasons) in fused.items()}
        order = sorted(fused, key=lambda k: (-fused[k][0], k[0], self.chunks.chunk(*k).start))
        excluded = set(exclude)
        pool = order[:MAX_CANDIDATES]
        chosen: list[RetrievedChunk] = []
        dropped: list[str] = []
        per_file: dict[str, int] = {}
        used = 0
        while pool and budget - used >= MIN_TOKENS:
            best = max(range(len(pool)), key=lambda i: (fused[pool[i]][0] * SAME_FILE ** per_file.get(pool[i][0], 0),
                                                         -i))
            key = pool.pop(best)
            score, reasons = fused[key]
            chunk = self.make_chunk(*key, reader(key[0]), score=score, reasons=tuple(reasons))
            if chunk.id in excluded:  # already with the caller: it counts for its file, costs nothing here
                per_file[key[0]] = per_file.get(key[0], 0) + 1
                continue
            tokens = count_tokens(chunk.render())
            if used + tokens > budget:
                dropped.append(f"{chunk.id} {chunk.name} ({tokens} tokens) over budget")
                continue
            used += tokens
            per_file[key[0]] = per_file.get(key[0], 0) + 1
            chosen.append(msgspec.structs.replace(chunk, tokens=tokens))
        left = len(pool) + max(0, len(order) - MAX_CANDIDATES)
        if left:
            dropped.append(f"{left} more candidates not tried: "
                           f"{'budget full' if budget - used < MIN_TOKENS else 'candidates exhausted'}")
        return Retrieval(chunks=tuple(chosen), dropped=tuple(dropped), budget=budget, used=used)

