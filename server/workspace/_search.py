"""Lexical search over workspace text and "find related code" (symbols named in a text plus their uses)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from contenox.errors import InvalidRequest
from contenox.workspace._graph import SymbolIndex
from contenox.workspace._model import RelatedHit, SearchHit

__all__ = ["compile_pattern", "identifiers_in", "related", "search"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
MAX_HIT_CHARS = 200


def compile_pattern(pattern: str, regex: bool, word: bool) -> re.Pattern[str]:
    source = pattern if regex else re.escape(pattern)
    if word:
        source = rf"\b(?:{source})\b"
    try:
        return re.compile(source)
    except re.error as exc:
        raise InvalidRequest(f"invalid search pattern {pattern!r}: {exc}", pattern=pattern) from exc


def search(paths: Iterable[str], text_of: Callable[[str], str | None], rx: re.Pattern[str],
           limit: int) -> list[SearchHit]:
    """Matches of ``rx`` line by line over ``paths`` (in the given order), at most ``limit``."""
    hits: list[SearchHit] = []
    if limit <= 0:
        return hits
    for path in paths:
        text = text_of(path)
        if text is None or rx.search(text) is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            found = rx.search(line)
            if found is None:
                continue
            shown = line if len(line) <= MAX_HIT_CHARS else line[: MAX_HIT_CHARS - 1] + "…"
            hits.append(SearchHit(path=path, line=number, column=found.start() + 1, text=shown))
            if len(hits) >= limit:
                return hits
    return hits


def identifiers_in(text: str) -> list[str]:
    """Distinct identifier-like words of ``text`` in order of first appearance."""
    return list(dict.fromkeys(_IDENT.findall(text)))


def related(index: SymbolIndex, ranks: dict[str, float], text: str, text_of: Callable[[str], str | None],
            limit: int) -> list[RelatedHit]:
    """Definitions of the names used in ``text`` (best-ranked first), then lines that use them."""
    names = [n for n in identifiers_in(text) if n in index.definers or n in index.referencers]
    definitions: list[RelatedHit] = []
    for name in names:
        found = index.definitions(name)
        for path, d in found:
            score = ranks.get(path, 0.0) / len(found)
            definitions.append(RelatedHit(kind="definition", name=name, path=path, line=d.line,
                                          text=d.text.strip(), score=score))
    definitions.sort(key=lambda h: (-h.score, h.path, h.line, h.name))
    hits = definitions[:limit]
    seen = {(h.path, h.line) for h in hits}
    users: list[tuple[float, str, str]] = []
    for name in names:
        for path in index.referencers.get(name, {}):
            users.append((ranks.get(path, 0.0), path, name))
    users.sort(key=lambda u: (-u[0], u[1], u[2]))
    for score, path, name in users:
        if len(hits) >= limit:
            break
        content = text_of(path)
        if content is None:
            continue
        rx = re.compile(rf"\b{re.escape(name)}\b")
        for number, line in enumerate(content.splitlines(), start=1):
            if rx.search(line) and (path, number) not in seen:
                seen.add((path, number))
                hits.append(RelatedHit(kind="reference", name=name, path=path, line=number,
                                       text=line.strip()[:MAX_HIT_CHARS], score=score))
                break
    return hits
