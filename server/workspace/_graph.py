"""The symbol index and the file graph (referencing file -> defining file) ranked by personalized PageRank.

Edge weights are integers, so an incrementally maintained index and a fresh one give the same graph and
the same floating-point ranks: the repo map stays byte-identical for the same inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from itertools import chain

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


def _power_iteration(n: int, src: IntArray, dst: IntArray, share: FloatArray, dangling: npt.NDArray[np.bool_],
                     personalization: FloatArray, alpha: float, tol: float, max_iter: int) -> FloatArray:
    p = personalization / personalization.sum()
    x: FloatArray = p.copy()
    for _ in range(max_iter):
        last = x
        x = (alpha * np.bincount(dst, weights=last[src] * share, minlength=n)).astype(np.float64, copy=False)
        x += (alpha * float(last[dangling].sum()) + (1.0 - alpha)) * p
        if float(np.abs(x - last).sum()) < n * tol:
            break
    return x


def pagerank(n: int, src: IntArray, dst: IntArray, weight: FloatArray, personalization: FloatArray,
             alpha: float = 0.85, tol: float = 1e-9, max_iter: int = 100) -> FloatArray:
    """Personalized PageRank by power iteration, the semantics of ``networkx.pagerank`` (dangling nodes
    follow the personalization vector; converged when the L1 change is under ``n * tol``)."""
    if n == 0:
        return np.zeros(0)
    out = np.bincount(src, weights=weight, minlength=n)
    share = weight / out[src] if len(src) else weight
    return _power_iteration(n, src, dst, share, out == 0, personalization, alpha, tol, max_iter)


class CompiledGraph:
    """Arrays for ranking and rendering, built once per index change from per-file parts."""

    def __init__(self, index: SymbolIndex) -> None:
        self.version = index.version
        self.paths = sorted(index.tags)
        self.position = {path: i for i, path in enumerate(self.paths)}
        n_files = len(self.paths)
        file_ids = np.fromiter((index.file_ids[p] for p in self.paths), dtype=np.int64, count=n_files)
        perm = np.full(len(index.file_ids) + 1, -1, dtype=np.int64)
        perm[file_ids] = np.arange(n_files, dtype=np.int64)
        n_edges = len(index.edges)
        pairs = np.fromiter(chain.from_iterable(index.edges), dtype=np.int64, count=2 * n_edges).reshape(-1, 2)
        weight = np.fromiter(index.edges.values(), dtype=np.float64, count=n_edges)
        src, dst = perm[pairs[:, 0]], perm[pairs[:, 1]]
        order = np.lexsort((dst, src))
        self.src: IntArray = src[order]
        self.dst: IntArray = dst[order]
        self.weight: FloatArray = weight[order]
        out = np.bincount(self.src, weights=self.weight, minlength=n_files)
        self._share: FloatArray = self.weight / out[self.src] if n_edges else self.weight
        self._dangling = out == 0
        parts = [index.file_parts[p] for p in self.paths]
        self.defs: list[tuple[str, Definition]] = list(chain.from_iterable(part.defs for part in parts))
        counts = np.fromiter((len(part.defs) for part in parts), dtype=np.int64, count=n_files)
        self.offsets: IntArray = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.def_file: IntArray = np.repeat(np.arange(n_files, dtype=np.int64), counts)
        if parts:
            ident = np.concatenate([part.ident_ids for part in parts])
            factor = np.concatenate([part.factor for part in parts])
        else:
            ident = np.zeros(0, dtype=np.int64)
            factor = np.zeros(0, dtype=np.float64)
        users = index.users[ident].astype(np.float64)
        self.def_weight: FloatArray = (1.0 + np.log1p(users)) * factor
        self._definers = index.definers
        self._everywhere: FloatArray | None = None

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
        if n == 0:
            return np.zeros(0)
        return _power_iteration(n, self.src, self.dst, self._share, self._dangling, p, 0.85, 1e-9, 100)

    def near(self, seeds: dict[str, float], alpha: float = 0.5) -> FloatArray:
        """File ranks of a walk that restarts only at ``seeds`` (file -> weight) and follows references to
        their definitions: with ``alpha`` 0.5 a file one hop away gets about half a seed's share, two hops a
        quarter. Files no seed reaches rank 0."""
        n = len(self.paths)
        p = np.zeros(n, dtype=np.float64)
        for path, weight in sorted(seeds.items()):
            i = self.position.get(path)
            if i is not None:
                p[i] += weight
        if not p.any():
            return p
        return _power_iteration(n, self.src, self.dst, self._share, self._dangling, p, alpha, 1e-6, 30)

    def lift(self, seeds: dict[str, float]) -> FloatArray:
        """:meth:`near` over the same walk restarting anywhere: above 1, a file is closer to the seeds than to
        the repository at large (a hub every module uses is not)."""
        if self._everywhere is None:
            self._everywhere = self.near(dict.fromkeys(self.paths, 1.0))
        near = self.near(seeds)
        out: FloatArray = np.divide(near, self._everywhere, out=np.zeros_like(near), where=self._everywhere > 0)
        return out


class _FileParts:
    """A file's definitions prepared for compiling: (path, definition), identifier ids, weight factors."""

    __slots__ = ("defs", "factor", "ident_ids")

    def __init__(self, path: str, tags: FileTags, ident_id: Callable[[str], int]) -> None:
        self.defs = [(path, d) for d in tags.defs]
        self.ident_ids: IntArray = np.array([ident_id(d.name) for d in tags.defs], dtype=np.int64)
        self.factor: FloatArray = np.array(
            [(0.1 if d.name.startswith("_") else 1.0) * (0.3 if d.kind in _DATA_KINDS else 1.0)
             for d in tags.defs], dtype=np.float64)


class SymbolIndex:
    """Tags of every file, name -> defining files, name -> referencing files (with counts) and the
    weighted file graph, all maintained incrementally with integer weights."""

    def __init__(self) -> None:
        self.tags: dict[str, FileTags] = {}
        self.definers: dict[str, set[str]] = {}
        self.referencers: dict[str, dict[str, int]] = {}
        self.file_ids: dict[str, int] = {}
        """Stable small ids of files (never reused while the index lives)."""
        self.edges: dict[tuple[int, int], int] = {}
        """(referencing file id, defining file id) -> weight."""
        self.file_parts: dict[str, _FileParts] = {}
        self._ident_ids: dict[str, int] = {}
        self.users: IntArray = np.zeros(1024, dtype=np.int64)
        """Identifier id -> number of files referencing it."""
        self.version = 0
        self._compiled: CompiledGraph | None = None

    def _ident_id(self, ident: str) -> int:
        found = self._ident_ids.get(ident)
        if found is None:
            found = self._ident_ids[ident] = len(self._ident_ids)
            if found >= len(self.users):
                self.users = np.concatenate((self.users, np.zeros(len(self.users), dtype=np.int64)))
        return found

    def _file_id(self, path: str) -> int:
        found = self.file_ids.get(path)
        if found is None:
            found = self.file_ids[path] = len(self.file_ids)
        return found

    def _bump(self, src: str, dst: str, delta: int) -> None:
        if src == dst or delta == 0:
            return
        key = (self.file_ids[src], self.file_ids[dst])
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
        ident_id = self._ident_id(ident)  # first: it may grow (replace) self.users
        self.users[ident_id] += sign
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
        self.file_parts.pop(path, None)
        self._file_id(path)
        self.version += 1
        if old is not None:
            for name, count in old.refs:
                self._change_ref(path, name, count, -1)
            for name in {d.name for d in old.defs}:
                self._change_def(path, name, -1)
        if tags is not None:
            self.tags[path] = tags
            self.file_parts[path] = _FileParts(path, tags, self._ident_id)
            for name in sorted({d.name for d in tags.defs}):
                self._change_def(path, name, 1)
            for name, count in tags.refs:
                self._change_ref(path, name, count, 1)
        self._compiled = None

    def edges_by_path(self) -> dict[tuple[str, str], int]:
        names = {i: p for p, i in self.file_ids.items()}
        return {(names[a], names[b]): w for (a, b), w in self.edges.items()}

    def replace_same_shape(self, path: str, tags: FileTags) -> None:
        """New tags for ``path`` whose names, kinds, texts and references are unchanged (only lines
        moved): the compiled graph stays valid."""
        self.tags[path] = tags
        self.file_parts[path] = _FileParts(path, tags, self._ident_id)

    def compiled(self) -> CompiledGraph:
        if self._compiled is None:
            self._compiled = CompiledGraph(self)
        return self._compiled

    def definitions(self, name: str) -> list[tuple[str, Definition]]:
        found = [(path, d) for path in sorted(self.definers.get(name, ())) for d in self.tags[path].defs
                 if d.name == name]
        return sorted(found, key=lambda item: (item[0], item[1].line))
