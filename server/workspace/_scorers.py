"""The rankings retrieval fuses: what the query mentions (definitions, plain-word definitions, uses), BM25,
and graph neighbours of the selection and the diff. Each lists chunks ``(path, chunk number, reason)`` best
first; a chunk listed again adds its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from contenox.workspace._bm25 import STOP_WORDS, text_terms
from contenox.workspace._chunk_index import ChunkIndex
from contenox.workspace._chunks import MODULE
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._mentions import Word, changed_lines, frames, paths_in, words_in
from contenox.workspace._model import RetrievalQuery

__all__ = ["Hit", "Mentions", "bm25_hits", "graph_hits", "is_secondary", "is_test", "mention_hits"]

Hit = tuple[str, int, str]

MAX_WORDS = 24
CODE_DEFINERS = 12
"""A code-like mention defined in more places than this is too ambiguous to fetch its definitions."""
PLAIN_DEFINERS = 3
PATH_CHUNKS = 12
REFERENCES = 8
BM25_HITS = 30
SEEDS = 12
NEIGHBOURS = 12
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _words(query: RetrievalQuery) -> list[Word]:
    """Mentioned identifiers: the question's, then the selection's, then code-like ones of the terminal
    output and of the diff's changed lines; code-like first within each."""
    changed = "\n".join(line[1:] for line in query.diff.splitlines()
                        if line[:1] in "+-" and not line.startswith(("+++", "---")))
    groups = [words_in(query.text), words_in(query.selection),
              [w for w in words_in(query.terminal) if w.code], [w for w in words_in(changed) if w.code]]
    seen: set[str] = set()
    found: list[Word] = []
    for group in groups:
        for word in sorted(group, key=lambda w: not w.code):
            if word.name not in seen:
                seen.add(word.name)
                found.append(word)
    return found[:MAX_WORDS]


def is_test(path: str) -> bool:
    """Test code (``tests/``, ``test_x.py``, ``x_test.go``, ``a.spec.ts``): ranked after the code itself."""
    parts = path.lower().split("/")
    name = parts[-1]
    return (any(p in ("test", "tests", "testing", "__tests__", "spec") for p in parts[:-1])
            or name.startswith("test_") or ".test." in name or ".spec." in name
            or name.rsplit(".", 1)[0].endswith(("_test", "_tests")))


_SECONDARY = frozenset({"docs", "doc", "examples", "example", "samples", "sample", "demo", "demos", "fuzz"})


def is_secondary(path: str) -> bool:
    """Example, demo and documentation code (``docs/``, ``examples/``, ``fuzz/``): like tests, ranked after
    the code itself."""
    return any(p in _SECONDARY for p in path.lower().split("/")[:-1])


class Mentions(NamedTuple):
    """Rankings from what the query names: ``defines`` (frames, definitions of code-like identifiers),
    ``plain`` (definitions of plain words), ``uses`` (chunks of mentioned paths, then users of the
    mentioned identifiers)."""

    defines: list[Hit]
    plain: list[Hit]
    uses: list[Hit]


def mention_hits(chunks: ChunkIndex, index: SymbolIndex, query: RetrievalQuery) -> Mentions:
    found = Mentions([], [], [])
    for source, trace in ((query.terminal, True), (query.text, False), (query.selection, False)):
        for frame in frames(source, trace=trace):
            rel = chunks.resolve(frame.path)
            local = chunks.at(rel, frame.line, near=True) if rel is not None else None
            if rel is not None and local is not None:
                reason = f"stack trace line {frame.line}" if frame.trace else f"line {frame.line} mentioned"
                found.defines.append((rel, local, reason))
    words = _words(query)
    defining: dict[str, set[tuple[str, int]]] = {}
    for word in words:
        defs = index.definitions(word.name)
        if not defs and not word.code and word.name.islower():  # "the engine" names the class ``Engine``
            defs = index.definitions(word.name.capitalize())
        if not defs or len(defs) > (CODE_DEFINERS if word.code else PLAIN_DEFINERS):
            continue
        located = sorted(((path, local) for path, d in defs if (local := chunks.at(path, d.line)) is not None),
                         key=lambda loc: (is_test(loc[0]), loc))
        defining[word.name] = set(located)
        qualified = [loc for loc in located if word.dotted != word.name
                     and chunks.chunk(*loc).name.endswith(word.dotted)]
        for path, local in qualified or located:
            name = chunks.chunk(path, local).name
            (found.defines if word.code else found.plain).append(
                (path, local, f"defines {word.name if name == MODULE else name} (mentioned)"))
    for raw in paths_in(f"{query.text}\n{query.selection}"):
        rel = chunks.resolve(raw)
        if rel is not None:
            count = min(PATH_CHUNKS, len(chunks.files[rel].chunks))
            found.uses.extend((rel, local, "path mentioned") for local in range(count))
    for word in words:
        if word.name not in defining or not word.code:
            continue
        users = index.referencers.get(word.name, {})
        used = sorted((is_test(path), -tf, path, local) for tf, path, local in chunks.containing(word.name, users)
                      if (path, local) not in defining[word.name])
        found.uses.extend((path, local, f"mentions {word.name}") for _, _, path, local in used[:REFERENCES])
    return found


def bm25_hits(chunks: ChunkIndex, query: RetrievalQuery) -> list[Hit]:
    terms = text_terms(f"{query.text}\n{query.selection}")
    found = chunks.bm25.search(terms, BM25_HITS)
    return [(path, local, f"BM25 rank {rank}") for rank, (_, path, local) in enumerate(found, start=1)]


MENTION_SEEDS = 4
"""Definitions the question names whose callees join the graph neighbours (one hop)."""
HOP_FROM = 4
"""First-hop callees (of named definitions and frames) whose own callees join the ranking (two hops)."""
HOP_NEIGHBOURS = 4
"""Callees taken from each of them."""
FRAME_SEEDS = 4
"""Stack-trace frames (innermost first) whose callees join the graph neighbours (one hop)."""


def _seeds(chunks: ChunkIndex, query: RetrievalQuery, named: list[Hit]) -> list[Hit]:
    seeds: list[Hit] = []
    if query.open_file and query.selection_lines:
        rel = chunks.resolve(query.open_file)
        if rel is not None:
            lo, hi = query.selection_lines
            seeds.extend((rel, local, "selected") for local in chunks.overlapping(rel, lo, max(lo, hi)))
    for raw, lines in sorted(changed_lines(query.diff).items()):
        rel = chunks.resolve(raw)
        if rel is None:
            continue
        for line in sorted(lines):
            local = chunks.at(rel, line, near=True)
            if local is not None and not any(s[:2] == (rel, local) for s in seeds):
                seeds.append((rel, local, "in the diff"))
    seeds = seeds[:SEEDS]
    frames = [hit for hit in named if hit[2].startswith("stack trace line ")][:FRAME_SEEDS]
    for path, local, reason in frames:  # the failing run's frames: follow their calls one hop
        if not any(s[:2] == (path, local) for s in seeds):
            seeds.append((path, local, reason))
    for path, local, reason in named:  # what the question names: follow its calls one hop
        if reason.startswith("defines ") and not is_test(path) and not any(s[:2] == (path, local) for s in seeds):
            seeds.append((path, local, reason))
            if len(seeds) >= SEEDS + MENTION_SEEDS + len(frames):
                break
    return seeds


def _callees(chunks: ChunkIndex, index: SymbolIndex, path: str, local: int,
             read_lines: Callable[[str], list[str]], skip: set[tuple[str, int]], limit: int) -> list[Hit]:
    """The chunks defining what one chunk calls or names (calls first), at most ``limit``."""
    chunk = chunks.chunk(path, local)
    callees: list[Hit] = []
    text = "\n".join(read_lines(path)[chunk.start - 1:chunk.end])
    own = chunk.name.rsplit(".", 1)[-1]
    called = dict.fromkeys(_CALL.findall(text))  # calls and constructions first, then other names
    for ident in dict.fromkeys([*called, *_IDENT.findall(text)]):
        if ident == own or ident.lower() in STOP_WORDS or not 0 < len(index.definers.get(ident, ())) <= 3:
            continue
        for def_path, d in sorted(index.definitions(ident), key=lambda f: (is_test(f[0]), f[0]))[:3]:
            found = chunks.at(def_path, d.line)
            if found is not None and (def_path, found) not in skip:
                callees.append((def_path, found, f"callee of {chunk.name}"))
        if len(callees) >= limit:
            break
    return callees


def graph_hits(chunks: ChunkIndex, index: SymbolIndex, query: RetrievalQuery,
               read_lines: Callable[[str], list[str]], named: Sequence[Hit] = ()) -> list[Hit]:
    """The selected / changed chunks, then the definitions they use (callees) and the chunks using what
    they define (callers), alternating; then the callees of the definitions the question names and of the
    failing run's frames; last, what their first callees call in turn (two hops)."""
    seeds = _seeds(chunks, query, list(named))
    hits: list[Hit] = [s for s in seeds if not s[2].startswith(("defines ", "stack trace line "))]
    seed_keys = {(path, local) for path, local, _ in hits}
    second: list[list[Hit]] = []
    for path, local, why in seeds:
        named_seed = why.startswith(("defines ", "stack trace line "))
        chunk = chunks.chunk(path, local)
        own = chunk.name.rsplit(".", 1)[-1]
        callees = _callees(chunks, index, path, local, read_lines, seed_keys, NEIGHBOURS)
        callers: list[Hit] = []
        if not named_seed and chunk.name != MODULE and own.lower() not in STOP_WORDS:
            users = index.referencers.get(own, {})
            used = sorted((is_test(p), -tf, p, i) for tf, p, i in chunks.containing(own, users)
                          if (p, i) not in seed_keys)
            callers = [(p, i, f"caller of {chunk.name}") for _, _, p, i in used[:NEIGHBOURS]]
        for k in range(max(len(callees), len(callers))):
            hits.extend(found[k] for found in (callees, callers) if k < len(found))
        if named_seed:
            second.append([hit for hit in callees if not is_test(hit[0]) and hit[:2] != (path, local)])
    origins = {(path, local) for path, local, _ in seeds}
    seen = {(path, local) for path, local, _ in hits} | origins
    firsts = dict.fromkeys(hit[:2] for k in range(NEIGHBOURS) for found in second if k < len(found)
                           for hit in found[k:k + 1]  # each seed's first callee, then second...
                           if hit[:2] not in origins and chunks.chunk(*hit[:2]).kind in ("function", "method"))
    for path, local in list(firsts)[:HOP_FROM]:
        for hit in _callees(chunks, index, path, local, read_lines, seen, HOP_NEIGHBOURS):
            if hit[:2] not in seen:
                seen.add(hit[:2])
                hits.append((hit[0], hit[1], f"{hit[2]} (two hops)"))
    return hits
