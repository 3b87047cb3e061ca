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

from contenox.workspace._bm25 import ident_terms, text_terms
from contenox.workspace._chunk_index import ChunkIndex
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._mentions import words_in
from contenox.workspace._model import Retrieval, RetrievalQuery, RetrievedChunk
from contenox.workspace._reach import asks_about_config, config_hits, export_hits, near_hits
from contenox.workspace._scorers import Hit, bm25_hits, graph_hits, is_secondary, is_test, mention_hits
from contenox.workspace._state import FileState

__all__ = ["RRF_K", "Retriever", "points_at"]

RRF_K = 60
WEIGHTS = {"defines": 3.0, "exports": 2.0, "config": 2.0, "graph": 1.5, "uses": 1.0, "bm25": 1.0, "near": 1.0,
           "plain": 0.5}
"""Named definitions and stack frames outrank everything; a package's export list (for a question about
exports) and project configuration (for one about dependencies or settings) come next; plain words that
happen to name a definition (``thread``, ``usage``) count least."""
MAX_CANDIDATES = 48
"""Fused candidates tried against the budget; the rest are reported in one line."""
MIN_TOKENS = 24
"""Stop trying once less than this much budget is left."""
TEST_WEIGHT = 0.5
"""Test code's share of its fused score when the query is not about tests."""
CONFIG_WEIGHT = 0.5
"""Project configuration's share of its fused score when the query is not about configuration."""
SAME_FILE = 0.7
"""A file's n-th chosen chunk competes with ``SAME_FILE ** n`` of its score."""
WINDOW_SHARE = 8
"""A chunk over the budget left is cut to its best window of at most ``budget / WINDOW_SHARE`` tokens, while
that much is left (less than that goes to the next chunks that fit whole)."""
MIN_WINDOW = 64
"""No window is cut smaller than this (tokens)."""
LARGE_SHARE = 4
"""A chunk over ``budget / LARGE_SHARE`` tokens that the question does not point at (name it, its frames, its
selection or diff, its path) is cut to its best window of that size."""
_STRONG = ("defines ", "stack trace line ", "line ", "selected", "in the diff", "path mentioned")
_POINTED = (*_STRONG, "configuration", "project configuration", "exports of ")


def points_at(reasons: Collection[str]) -> bool:
    """Whether the query points at a chunk retrieval found for these reasons: it names the definition, the file,
    a line or a frame in it, selects it or changed it, or asks about the configuration or export list it is;
    not when only the ranking found it (words in common, a neighbour in the graph, a use of a named symbol)."""
    return any(reason.startswith(_POINTED) for reason in reasons)
_ABOUT_TESTS = re.compile(r"\btests?\b|\btest_\w+|\w+_test\b|\bspec\b", re.IGNORECASE)
_ABOUT_EXAMPLES = re.compile(r"\b(?:docs?|documentation|examples?|samples?|demos?|fuzz\w*)\b", re.IGNORECASE)


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


def _window(chunk: RetrievedChunk, tokens: int, room: int, terms: set[str],
            count_tokens: Callable[[str], int]) -> RetrievedChunk | None:
    """The consecutive lines of ``chunk`` that fit in ``room`` tokens and hold the most distinct query terms
    (besides its name, which the chunk's location line shows): the chunk cut down to what the question is
    about; None when too little room is left or nothing fits."""
    lines = chunk.text.split("\n")
    if room < MIN_WINDOW or len(lines) < 4:
        return None
    scale = tokens / max(1, len(chunk.render()))
    cost = [max(1.0, (len(line) + 1) * scale) for line in lines]
    wanted = terms - set(text_terms(chunk.name))
    found = [wanted.intersection(text_terms(line)) for line in lines]
    frame = tokens - sum(cost)  # the location and header lines
    best: tuple[int, int, int] | None = None  # (distinct terms, -start, end): most, then earliest and longest
    for start in range(len(lines)):
        spent, held = frame, set()
        for end in range(start, len(lines)):
            spent += cost[end]
            if spent > room:
                break
            held |= found[end]
            if best is None or (len(held), -start, end) > best:
                best = (len(held), -start, end)
    while best is not None:
        first, last = -best[1], best[2]
        part = msgspec.structs.replace(chunk, start_line=chunk.start_line + first, end_line=chunk.start_line + last,
                                       text="\n".join(lines[first:last + 1]),
                                       reasons=(*chunk.reasons, f"lines {chunk.start_line + first}-"
                                                f"{chunk.start_line + last} of {chunk.id}: the part that fits"))
        size = count_tokens(part.render())
        if size <= room:
            return msgspec.structs.replace(part, tokens=size)
        best = (best[0], best[1], last - 1) if last - 1 > first else None
    return None


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
        config = config_hits(self.chunks, query)
        graph = graph_hits(self.chunks, index, query, reader, mentions.defines)
        fused = fuse({"defines": mentions.defines, "exports": export_hits(self.chunks, query, mentions.defines),
                      "config": config, "graph": graph, "uses": mentions.uses, "bm25": bm25_hits(self.chunks, query),
                      "near": near_hits(self.chunks, index, query, mentions.defines, mentions.plain, mentions.uses,
                                        config, graph, reader),
                      "plain": mentions.plain})
        if not (query.terminal.strip() or _ABOUT_TESTS.search(f"{query.text}\n{query.selection}")):
            fused = {k: (score * TEST_WEIGHT if is_test(k[0]) else score, reasons)
                     for k, (score, reasons) in fused.items()}
        if not asks_about_config(query):
            fused = {k: (score * CONFIG_WEIGHT if k[0] in self.chunks.config else score, reasons)
                     for k, (score, reasons) in fused.items()}
        if not _ABOUT_EXAMPLES.search(f"{query.text}\n{query.selection}\n{query.open_file or ''}"):
            fused = {k: (score * TEST_WEIGHT if is_secondary(k[0]) and k[0] not in self.chunks.config else score,
                         reasons) for k, (score, reasons) in fused.items()}
        order = sorted(fused, key=lambda k: (-fused[k][0], k[0], self.chunks.chunk(*k).start))
        excluded = set(exclude)
        terms = set(text_terms(f"{query.text}\n{query.selection}")) | {
            t for w in words_in(query.terminal) if w.code for t in ident_terms(w.name)}
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
            if tokens > budget // LARGE_SHARE and not any(r.startswith(_STRONG) for r in reasons):
                window = _window(chunk, tokens, min(budget - used, budget // LARGE_SHARE), terms, count_tokens)
                if window is not None:
                    dropped.append(f"{chunk.id} {chunk.name} ({tokens} tokens) is large for what found it: "
                                   f"lines {window.start_line}-{window.end_line} kept")
                    chunk, tokens = window, window.tokens
            if used + tokens > budget:  # a window only while a whole one fits: the tail goes to chunks that fit
                window = (_window(chunk, tokens, budget // WINDOW_SHARE, terms, count_tokens)
                          if budget - used >= budget // WINDOW_SHARE else None)
                dropped.append(f"{chunk.id} {chunk.name} ({tokens} tokens) over budget"
                               + (f": lines {window.start_line}-{window.end_line} kept" if window else ""))
                if window is None:
                    continue
                chunk, tokens = window, window.tokens
            used += tokens
            per_file[key[0]] = per_file.get(key[0], 0) + 1
            chosen.append(msgspec.structs.replace(chunk, tokens=tokens))
        left = len(pool) + max(0, len(order) - MAX_CANDIDATES)
        if left:
            dropped.append(f"{left} more candidates not tried: "
                           f"{'budget full' if budget - used < MIN_TOKENS else 'candidates exhausted'}")
        return Retrieval(chunks=tuple(chosen), dropped=tuple(dropped), budget=budget, used=used)

