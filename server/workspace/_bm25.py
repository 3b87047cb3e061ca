"""BM25 over chunks with identifier-aware terms, kept per file and compiled into postings arrays.

Terms: each identifier lowercased whole and split at ``_`` and camelCase (``parseHTTPHeader`` gives
``parsehttpheader``, ``parse``, ``http``, ``header``); English stop words and common keywords are left out.
Each file's terms are held as small arrays; a compiled base (term -> chunks, CSR) covers most files and the
files changed since it was built are scored from a small second compilation, with the base's copies of
them masked out. Statistics (N, df, average length) are exact integers either way and terms are summed in
sorted order, so an incrementally updated index scores exactly as a fresh one.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "STOP_WORDS",
    "Bm25",
    "ident_terms",
    "stems",
    "text_terms",
]

K1 = 1.2
B = 0.75
RECOMPILE_AFTER = 64
"""Changed files scored beside the base before the base is rebuilt."""

STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each else few for from further get gets had has have
having he her here hers him his how i if in into is it its itself just me might more most must my no nor
not now of off on once only or other our out over own please same shall she should so some such than that
the their them then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours
def self cls return import none true false null nil var let const func fn pub public private protected
static void int str bool this new end elif lambda pass yield async await mut impl use struct enum
""".split())

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@functools.lru_cache(maxsize=1 << 18)
def ident_terms(ident: str) -> tuple[str, ...]:
    """The terms of one identifier: itself lowercased and its snake / camel parts (two letters or more)."""
    whole = ident.strip("_").lower()
    terms = {whole, *(p.lower() for p in _PART.findall(ident))}
    return tuple(sorted(t for t in terms if len(t) > 1 and not t.isdigit() and t not in STOP_WORDS))


_SUFFIXES = ("ings", "ing", "ied", "ies", "ed", "es", "s", "ly", "er", "ers")


def stems(term: str) -> list[str]:
    """Plain-English inflections stripped from a lowercase word, most likely first: ``planned`` -> ``plann``,
    ``plan``; ``parsing`` -> ``pars``, ``parse``; ``entries`` -> ``entry``. Only tried for words the index lacks."""
    out: list[str] = []
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            root = term[: -len(suffix)]
            out += [root + "y"] if suffix in ("ied", "ies") else [root, root + "e"]
            if len(root) > 3 and root[-1] == root[-2]:  # doubled consonant: planned -> plan
                out.append(root[:-1])
    return out


def text_terms(text: str) -> Counter[str]:
    """Term frequencies of a text."""
    counts: Counter[str] = Counter()
    for ident, n in Counter(_WORD.findall(text)).items():
        for term in ident_terms(ident):
            counts[term] += n
    return counts


class _FileTerms:
    """One file's chunks as (term id, chunk number, frequency) rows plus chunk lengths."""

    __slots__ = ("chunk", "lengths", "term", "tf")

    def __init__(self, chunks: list[Counter[str]], vocab: dict[str, int]) -> None:
        term: list[int] = []
        chunk: list[int] = []
        tf: list[int] = []
        for i, counts in enumerate(chunks):
            term.extend(vocab.setdefault(t, len(vocab)) for t in counts)
            chunk.extend([i] * len(counts))
            tf.extend(counts.values())
        self.term = np.array(term, dtype=np.int32)
        self.chunk = np.array(chunk, dtype=np.int32)
        self.tf = np.array(tf, dtype=np.int32)
        self.lengths = np.array([sum(c.values()) for c in chunks], dtype=np.int64)


class _Compiled:
    """Postings (term -> chunk rows, frequencies) over a set of files."""

    def __init__(self, files: list[tuple[str, _FileTerms]], n_terms: int) -> None:
        self.paths = [path for path, _ in files]
        self.index = {path: i for i, path in enumerate(self.paths)}
        counts = np.array([len(ft.lengths) for _, ft in files], dtype=np.int64)
        self.offsets: IntArray = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.n = int(self.offsets[-1])
        self.file_of: IntArray = np.repeat(np.arange(len(files), dtype=np.int64), counts)
        self.lengths: FloatArray = (np.concatenate([ft.lengths for _, ft in files]).astype(np.float64)
                                    if files else np.zeros(0))
        if files:
            term = np.concatenate([ft.term for _, ft in files])
            row = np.concatenate([ft.chunk.astype(np.int64) + self.offsets[i] for i, (_, ft) in enumerate(files)])
            tf = np.concatenate([ft.tf for _, ft in files])
        else:
            term = row = tf = np.zeros(0, dtype=np.int64)
        order = np.argsort(term, kind="stable")
        self.rows: IntArray = row[order].astype(np.int64)
        self.tf: FloatArray = tf[order].astype(np.float64)
        self.indptr: IntArray = np.concatenate(([0], np.cumsum(np.bincount(term, minlength=n_terms)))).astype(
            np.int64)
        self.alive: npt.NDArray[np.bool_] | None = None
        """Rows still current (None: all); files changed since compiling are masked out."""

    def postings(self, tid: int | None) -> tuple[IntArray, FloatArray]:
        if tid is None or tid + 1 >= len(self.indptr):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
        rows, tf = self.rows[lo:hi], self.tf[lo:hi]
        if self.alive is not None:
            keep = self.alive[rows]
            rows, tf = rows[keep], tf[keep]
        return rows, tf

    def mask(self, stale: Iterable[str]) -> tuple[int, float]:
        """Mask the rows of ``stale`` files; the number and total length of the rows left."""
        alive = np.ones(self.n, dtype=np.bool_)
        for path in stale:
            i = self.index[path]
            alive[int(self.offsets[i]):int(self.offsets[i + 1])] = False
        self.alive = None if alive.all() else alive
        return int(alive.sum()), float(self.lengths[alive].sum())

    def locate(self, rows: IntArray) -> list[tuple[str, int]]:
        return [(self.paths[int(f)], int(r - self.offsets[f])) for r, f in zip(rows, self.file_of[rows], strict=True)]


def _weights(tf: FloatArray, lengths: FloatArray, idf: float, avgdl: float) -> FloatArray:
    result: FloatArray = idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * lengths / avgdl))
    return result


class Bm25:
    """Incremental BM25 index of chunks, addressed as (path, chunk number in the file)."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._files: dict[str, _FileTerms] = {}
        self._base: _Compiled | None = None
        self._stale: set[str] = set()
        self._delta: _Compiled | None = None
        self._stats = (0, 0.0)
        self._changed = True

    def set_file(self, path: str, chunks: list[Counter[str]] | None) -> None:
        """Replace the chunks of ``path`` (None removes the file)."""
        if chunks is None:
            self._files.pop(path, None)
        else:
            self._files[path] = _FileTerms(chunks, self._vocab)
        if self._base is not None and path in self._base.index:
            self._stale.add(path)
        self._delta = None
        self._changed = True

    def compile(self) -> None:
        """Rebuild the base postings from every file (the watcher calls this off the turn's path)."""
        if not self._changed and self._base is not None:
            return
        self._changed = False
        self._base = _Compiled(sorted(self._files.items()), len(self._vocab))
        self._stale.clear()
        self._delta = None

    def _ready(self) -> tuple[_Compiled, _Compiled]:
        if self._base is None or len(self._stale) > RECOMPILE_AFTER:
            self.compile()
        assert self._base is not None
        if self._delta is None:
            fresh = [(p, ft) for p, ft in sorted(self._files.items())
                     if p in self._stale or p not in self._base.index]
            self._delta = _Compiled(fresh, len(self._vocab))
            alive_n, alive_len = self._base.mask(self._stale)
            self._stats = (alive_n + self._delta.n, alive_len + float(self._delta.lengths.sum()))
        return self._base, self._delta

    def _known(self, term: str) -> str:
        """``term``, or the indexed word it inflects (a question says "planned", the code says ``plan``)."""
        if term in self._vocab:
            return term
        for stem in stems(term):
            if stem in self._vocab:
                return stem
        return term

    def has_term(self, ident: str) -> bool:
        """Whether some indexed chunk holds the identifier ``ident`` (as a whole word, any case)."""
        return ident.strip("_").lower() in self._vocab

    def search(self, terms: Iterable[str], limit: int,
               within: Collection[str] | None = None) -> list[tuple[float, str, int]]:
        """The best ``limit`` chunks for the query terms: (score, path, chunk number), best first, ties by
        path and position; with ``within``, only chunks of those files (statistics stay the whole index's)."""
        base, delta = self._ready()
        n, total = self._stats
        if n == 0:
            return []
        avgdl = total / n
        scores = (np.zeros(base.n), np.zeros(delta.n))
        for term in sorted({self._known(t) for t in terms}):
            tid = self._vocab.get(term)
            found = [part.postings(tid) for part in (base, delta)]
            df = sum(len(rows) for rows, _ in found)
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for part, acc, (rows, tf) in zip((base, delta), scores, found, strict=True):
                acc[rows] += _weights(tf, part.lengths[rows], idf, avgdl)
        hits: list[tuple[float, str, int]] = []
        for part, acc in zip((base, delta), scores, strict=True):
            if within is not None:
                keep = np.zeros(len(part.paths), dtype=np.bool_)
                keep[[part.index[path] for path in within if path in part.index]] = True
                acc[~keep[part.file_of]] = 0.0
            rows = np.flatnonzero(acc > 0)
            if len(rows) > limit:
                cut = float(np.partition(acc[rows], len(rows) - limit)[len(rows) - limit])
                rows = rows[acc[rows] >= cut]
            hits.extend((float(acc[r]), path, local) for r, (path, local) in zip(rows, part.locate(rows),
                                                                                   strict=True))
        hits.sort(key=lambda h: (-h[0], h[1], h[2]))
        return hits[:limit]

    def containing(self, term: str) -> list[tuple[str, int, int]]:
        """Chunks holding ``term``: (path, chunk number, occurrences), by path and position."""
        base, delta = self._ready()
        tid = self._vocab.get(term)
        found: list[tuple[str, int, int]] = []
        for part in (base, delta):
            rows, tf = part.postings(tid)
            found.extend((path, local, int(f)) for (path, local), f in zip(part.locate(rows), tf, strict=True))
        return sorted(found)
