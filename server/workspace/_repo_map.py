"""The repo map: the highest-ranked definitions that fit a token budget, rendered deterministically.

Selection follows rank (quantized, ties broken by path and line); the text lists the selected files in
path order and their definitions in line order, one source line each, without line numbers. So an edit
in one file changes the map only where that file's entries are, unless it moves definitions across the
budget edge.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate

import numpy as np

from contenox.workspace._graph import CompiledGraph

__all__ = ["render_repo_map"]

_QUANT = float(1 << 20)


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


def _fit(order: list[int], chars: list[int], budget: int, render: Callable[[list[int]], str],
         count_tokens: Callable[[str], int]) -> str:
    """The longest rank-ordered prefix whose rendering fits ``budget`` tokens, found with a few whole-text
    token counts: the prefix is sized by characters, the characters-per-token ratio measured on the
    candidate text itself. A pure function of its inputs (no state carried between calls)."""
    cumulative = list(accumulate(chars))
    counted: dict[int, tuple[int, str]] = {}

    def measure(n: int) -> int:
        if n not in counted:
            text = render(order[:n])
            counted[n] = (count_tokens(text) if text else 0, text)
        return counted[n][0]

    ratio = 3.0
    n = bisect_right(cumulative, budget * ratio)
    for _ in range(6):
        tokens = measure(n)
        if tokens == 0:
            break
        ratio = len(counted[n][1]) / tokens
        target = bisect_right(cumulative, budget * ratio)
        if target == n or target in counted:
            break
        n = target
    fitting = [k for k, (tokens, _) in counted.items() if tokens <= budget]
    best = max(fitting, default=0)
    if not fitting:  # every candidate was over: shrink until one fits
        n = min(counted)
        while n > 0 and measure(n) > budget:
            n = n * 9 // 10
        best = n
    return counted[best][1] if best in counted else ""


_CANDIDATES = 4096


def _ranked(quant: np.ndarray, candidates: int = _CANDIDATES) -> np.ndarray:
    """Definition indices by descending quantized score, ties by index: the top candidates only (every
    definition tied with the last one included), which is the same prefix a full sort gives."""
    n = len(quant)
    if n <= candidates:
        return np.lexsort((np.arange(n), -quant))
    threshold = np.partition(quant, n - candidates)[n - candidates]
    chosen = np.flatnonzero(quant >= threshold)
    return chosen[np.lexsort((chosen, -quant[chosen]))]


def render_repo_map(graph: CompiledGraph, ranks: np.ndarray, budget_tokens: int,
                    count_tokens: Callable[[str], int], boost_idents: Iterable[str] = ()) -> str:
    """The map text for ``ranks`` (from :meth:`CompiledGraph.rank`) within ``budget_tokens``."""
    if budget_tokens <= 0 or not graph.defs:
        return ""
    score = ranks[graph.def_file] * graph.def_weight
    for ident in sorted(set(boost_idents)):
        for k in graph.defs_named(ident):
            score[k] *= 10.0
    top = float(score.max())
    quant = np.floor(score / top * _QUANT) if top > 0 else np.zeros_like(score)
    ranked = _ranked(quant)
    limit = budget_tokens * 12  # characters: far more than any tokenizer packs into the budget
    order: list[int] = []
    chars: list[int] = []
    seen_files: set[str] = set()
    seen_lines: set[tuple[str, int]] = set()
    total = 0
    for k in ranked.tolist():
        path, definition = graph.defs[k]
        if not definition.text.strip():
            continue
        cost = 0 if (path, definition.line) in seen_lines else len(definition.text) + 2
        if path not in seen_files:
            cost += len(path) + 2
            seen_files.add(path)
        seen_lines.add((path, definition.line))
        order.append(k)
        chars.append(cost)
        total += cost
        if total > limit:
            break
    return _fit(order, chars, budget_tokens, lambda chosen: _render(graph, chosen), count_tokens)
