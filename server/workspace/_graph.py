"""The symbol index and the file graph (referencing file -> defining file) ranked by personalized PageRank.

Edge weights are integers, so an incrementally maintained index and a fresh one give the same graph and
the same floating-point ranks: the repo map stays byte-identical for the same inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from contenox.workspace._model import Definition, FileTags

__all__ = ["CompiledGraph", "SymbolIndex", "pagerank"]

MAX_DEFINERS = 12
"""Names defined in more files than this (``get``, ``run``, ``__init__``) add no edges: too ambiguous."""
_DATA_KINDS = frozenset({"constant", "variable"})
_SQRT = [round(4 * math.sqrt(i)) for i in range(65)]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _ident_mult(ident: str, definers: int) -> int:
    mult = 10
    if ident.startswith("_"):
        mult = 1
    if definers > 5:
        mult = 1
    if len(ident) >= 8 and mult == 10:
        mult = 20
    return mult


def pagerank(n: int, src: IntArray, dst: IntArray, weight: FloatArray, personalization: FloatArray,
             alpha: float = 0.85, tol: float = 1e-10, max_iter: int = 100) -> FloatArray:
    """Personalized PageRank by power iteration, the semantics of ``networkx.pagerank`` (dangling nodes
    follow the personalization vector)."""
    if n == 0:
        return np.zeros(0)
    p = personalization / personalization.sum()
    out = np.bincount(src, weights=weight, minlength=n)
    share = weight / out[src] if len(src) else weight
    dangling = out == 0
    x = p.copy()
    for _ in range(max_iter):
        last = x
        x = alpha * np.bincount(dst, weights=last[src] * share, minlength=n)
        x += (alpha * float(last[dangling].sum()) + (1.0 - alpha)) * p
        if float(np.abs(x - last).sum()) < n * tol:
            break
    result: FloatArray = x
    return result


class CompiledGraph:
    """Arrays for ranking and rendering, built once per index change."""

    def __init__(self, index: SymbolIndex) -> None:
        self.paths = sorted(index.tags)
        self.position = {path: i for i, path in enumerate(self.paths)}
        position = self.position
        count = len(index.edges)
        src = np.fromiter((position[r] for r, _ in index.edges), dtype=np.int64, count=count)
        dst = np.fromiter((position[d] for _, d in index.edges), dtype=np.int64, count=count)
        weight = np.fromiter(index.edges.values(), dtype=np.float64, count=count)
        order = np.lexsort((dst, src))
        self.src: IntArray = src[order]
        self.dst: IntArray = dst[order]
        self.weight: FloatArray = weight[order]
        tags = index.tags
        self.defs: list[tuple[str, Definition]] = [(path, d) for path in self.paths for d in tags[path].defs]
        counts = np.fromiter((len(tags[path].defs) for path in self.paths), dtype=np.int64,
                             count=len(self.paths))
        self.offsets: IntArray = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.def_file: IntArray = np.repeat(np.arange(len(self.paths), dtype=np.int64), counts)
        n = len(self.defs)
        refs = index.referencers
        users = np.fromiter((len(refs.get(d.name, ())) for _, d in self.defs), dtype=np.float64, count=n)
        private = np.fromiter((d.name.startswith("_") for _, d in self.defs), dtype=bool, count=n)
        constant = np.fromiter((d.kind in _DATA_KINDS for _, d in self.defs), dtype=bool, count=n)
        self.def_weight: FloatArray = ((1.0 + np.log1p(users)) * np.where(private, 0.1, 1.0)
                                       * np.where(constant, 0.3, 1.0))
        self._definers = index.definers

    def defs_named(self, ident: str) -> list[int]:
        """Indices into ``defs`` of the definitions of ``ident``."""
        found: list[int] = []
        for path in sorted(self._definers.get(ident, ())):
            i = self.position.get(path)
            if i is None:
                continue
            start, end = int(self.offsets[i]), int(self.offsets[i + 1])
            found.extend(k for k in range(start, end) if self.defs[k][1].name == ident)
        return found

    def rank(self, boost_files: Iterable[str], boost_idents: Iterable[str]) -> FloatArray:
        """File ranks (summing to 1) personalized towards the boosted files and the definers of the
        boosted identifiers."""
        n = len(self.paths)
        p = np.ones(n, dtype=np.float64)
        boosted = {self.position[f] for f in boost_files if f in self.position}
        for ident in boost_idents:
            for path in self._definers.get(ident, ()):
                if path in self.position:
                    boosted.add(self.position[path])
        if boosted:
            extra = 10.0 * n / len(boosted)
            for i in sorted(boosted):
                p[i] += extra
        return pagerank(n, self.src, self.dst, self.weight, p)


class SymbolIndex:
    """Tags of every file, name -> defining files, name -> referencing files (with counts) and the
    weighted file graph, all maintained incrementally with integer weights."""

    def __init__(self) -> None:
        self.tags: dict[str, FileTags] = {}
        self.definers: dict[str, set[str]] = {}
        self.referencers: dict[str, dict[str, int]] = {}
        self.edges: dict[tuple[str, str], int] = {}
        """(referencing file, defining file) -> weight."""
        self._compiled: CompiledGraph | None = None

    def _bump(self, src: str, dst: str, delta: int) -> None:
        if src == dst or delta == 0:
            return
        key = (src, dst)
        value = self.edges.get(key, 0) + delta
        if value:
            self.edges[key] = value
        else:
            del self.edges[key]

    def _ident_edges(self, ident: str, sign: int) -> None:
        """Add (sign=1) or remove (sign=-1) every edge contribution of ``ident``."""
        defs = self.definers.get(ident)
        refs = self.referencers.get(ident)
        if not defs or not refs or len(defs) > MAX_DEFINERS:
            return
        mult = _ident_mult(ident, len(defs))
        for ref_path, count in refs.items():
            w = sign * mult * _SQRT[min(count, 64)]
            for def_path in defs:
                self._bump(ref_path, def_path, w)

    def _change_ref(self, path: str, ident: str, count: int, sign: int) -> None:
        defs = self.definers.get(ident)
        if sign > 0:
            self.referencers.setdefault(ident, {})[path] = count
        else:
            users = self.referencers[ident]
            del users[path]
            if not users:
                del self.referencers[ident]
        if defs and len(defs) <= MAX_DEFINERS:
            w = sign * _ident_mult(ident, len(defs)) * _SQRT[min(count, 64)]
            for def_path in defs:
                self._bump(path, def_path, w)

    def _change_def(self, path: str, ident: str, sign: int) -> None:
        defs = self.definers.get(ident, set())
        if (path in defs) == (sign > 0):
            return  # the file defines the name more than once
        before = len(defs)
        after = before + sign
        same_rule = (0 < before <= MAX_DEFINERS and 0 < after <= MAX_DEFINERS
                     and _ident_mult(ident, before) == _ident_mult(ident, after))
        if not same_rule:
            self._ident_edges(ident, -1)
        if sign > 0:
            self.definers.setdefault(ident, set()).add(path)
        else:
            defs.discard(path)
            if not defs:
                del self.definers[ident]
        if not same_rule:
            self._ident_edges(ident, 1)
            return
        refs = self.referencers.get(ident, {})
        mult = _ident_mult(ident, after)
        for ref_path, count in refs.items():
            self._bump(ref_path, path, sign * mult * _SQRT[min(count, 64)])

    def set_file(self, path: str, tags: FileTags | None) -> None:
        old = self.tags.pop(path, None)
        if old is not None:
            for name, count in old.refs:
                self._change_ref(path, name, count, -1)
            for name in {d.name for d in old.defs}:
                self._change_def(path, name, -1)
        if tags is not None:
            self.tags[path] = tags
            for name in sorted({d.name for d in tags.defs}):
                self._change_def(path, name, 1)
            for name, count in tags.refs:
                self._change_ref(path, name, count, 1)
        self._compiled = None

    def replace_same_shape(self, path: str, tags: FileTags) -> None:
        """New tags for ``path`` whose names, kinds, texts and references are unchanged (only lines
        moved): the compiled graph stays valid."""
        self.tags[path] = tags

    def compiled(self) -> CompiledGraph:
        if self._compiled is None:
            self._compiled = CompiledGraph(self)
        return self._compiled

    def definitions(self, name: str) -> list[tuple[str, Definition]]:
        found = [(path, d) for path in sorted(self.definers.get(name, ())) for d in self.tags[path].defs
                 if d.name == name]
        return sorted(found, key=lambda item: (item[0], item[1].line))
