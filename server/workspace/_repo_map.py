"""The repo map: the highest-ranked definitions that fit a token budget, rendered deterministically.

Selection follows rank (quantized, ties broken by path and line); the text lists the selected files in
path order and their definitions in line order, one source line each, without line numbers. So an edit
in one file changes the map only where that file's entries are, unless it moves definitions across the
budget edge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from contenox.workspace._graph import CompiledGraph

__all__ = ["TokenMemo", "render_repo_map"]

_QUANT = float(1 << 20)


class TokenMemo:
    """Token counts of map lines per counting function (a line's count never changes)."""

    def __init__(self, limit: int = 200_000) -> None:
        self._memo: dict[Callable[[str], int], dict[str, int]] = {}
        self._limit = limit

    def counter(self, count_tokens: Callable[[str], int]) -> Callable[[str], int]:
        memo = self._memo.get(count_tokens)
        if memo is None:
            if len(self._memo) >= 4:
                self._memo.clear()
            memo = self._memo[count_tokens] = {}
        if len(memo) > self._limit:
            memo.clear()

        def count(text: str) -> int:
            n = memo.get(text)
            if n is None:
                n = memo[text] = count_tokens(text)
            return n

        return count


def _render(graph: CompiledGraph, selected: Iterable[int]) -> str:
    by_file: dict[str, list[int]] = {}
    for k in selected:
        by_file.setdefault(graph.defs[k][0], []).append(k)
    out: list[str] = []
    for path in sorted(by_file):
        out.append(f"{path}:\n")
        last_line = -1
        for k in sorted(by_file[path], key=lambda k: (graph.defs[k][1].line, k)):
            definition = graph.defs[k][1]
            if definition.line != last_line:  # several definitions on one line show it once
                out.append(f"│{definition.text}\n")
                last_line = definition.line
    return "".join(out)


def render_repo_map(graph: CompiledGraph, ranks: np.ndarray, budget_tokens: int,
                    count_tokens: Callable[[str], int], memo: TokenMemo,
                    boost_idents: Iterable[str] = ()) -> str:
    """The map text for ``ranks`` (from :meth:`CompiledGraph.rank`) within ``budget_tokens``."""
    if budget_tokens <= 0 or not graph.defs:
        return ""
    score = ranks[graph.def_file] * graph.def_weight
    for ident in sorted(set(boost_idents)):
        for k in graph.defs_named(ident):
            score[k] *= 10.0
    top = float(score.max())
    quant = np.floor(score / top * _QUANT) if top > 0 else np.zeros_like(score)
    order = np.lexsort((np.arange(len(score)), -quant))
    count = memo.counter(count_tokens)
    seen: set[str] = set()
    lines: set[tuple[str, int]] = set()
    chosen: list[int] = []
    total = 0
    for k in order.tolist():
        path, definition = graph.defs[k]
        if not definition.text.strip():
            continue
        cost = 0 if (path, definition.line) in lines else count(f"│{definition.text}\n")
        if path not in seen:
            cost += count(f"{path}:\n")
        if total + cost > budget_tokens:
            break
        total += cost
        seen.add(path)
        lines.add((path, definition.line))
        chosen.append(k)
    text = _render(graph, chosen)
    while chosen and count_tokens(text) > budget_tokens:
        chosen = chosen[: max(0, len(chosen) - max(1, len(chosen) // 50))]
        text = _render(graph, chosen)
    return text
