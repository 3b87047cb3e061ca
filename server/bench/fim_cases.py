"""Held-out completion cases from real repositories, and how a completion is scored against them.

A case is a function or method of a repository's Python source (tests excluded) whose body, after its docstring,
is 2-12 lines: the body is deleted, the cursor is put where it started (at its indentation) and the completion
should give the body back. Cases are sampled with a fixed seed, so a run is repeatable.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import msgspec

__all__ = ["FimCase", "Score", "edit_similarity", "extract_cases", "score"]

_MIN_LINES, _MAX_LINES = 2, 12


class FimCase(msgspec.Struct, frozen=True, kw_only=True):
    repo: str
    path: str
    """Relative to the repository root."""
    function: str
    text: str
    """The file with the body deleted: one line holding only the body's indentation, where the cursor is."""
    line: int
    character: int
    expected: str
    """The deleted body, its first line without the indentation the cursor already has."""


class Score(msgspec.Struct, frozen=True, kw_only=True):
    first_line_exact: bool
    first_line_similarity: float
    block_exact: bool
    block_similarity: float


def _trivial(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Pass | ast.Raise | ast.Expr)


def _cases_in(repo: str, rel: str, source: str) -> list[FimCase]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.split("\n")
    found: list[FimCase] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = list(node.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # keep the docstring: it is part of what the cursor sees
        if not body or _trivial(body):
            continue
        start, end = body[0].lineno, body[-1].end_lineno or body[-1].lineno
        if not _MIN_LINES <= end - start + 1 <= _MAX_LINES or body[0].col_offset == 0:
            continue
        indent = lines[start - 1][:body[0].col_offset]
        if indent.strip():
            continue  # the body starts on the def's line
        removed = lines[start - 1:end]
        text = "\n".join([*lines[:start - 1], indent, *lines[end:]])
        expected = "\n".join(removed)[len(indent):]
        found.append(FimCase(repo=repo, path=rel, function=node.name, text=text, line=start - 1,
                             character=len(indent), expected=expected))
    return found


def extract_cases(repo: str, root: Path, count: int, seed: int) -> list[FimCase]:
    """``count`` cases of ``repo`` at ``root`` (fewer if it has fewer), sampled with ``seed``."""
    cases: list[FimCase] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(("test", ".")) or part in ("docs", "examples") for part in rel.split("/")):
            continue
        cases.extend(_cases_in(repo, rel, path.read_text(encoding="utf-8", errors="replace")))
    random.Random(seed).shuffle(cases)
    return cases[:count]


def edit_similarity(a: str, b: str) -> float:
    """1 - Levenshtein distance / the longer length (1.0: equal)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return 1.0 - previous[-1] / max(len(a), len(b))


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip()


def score(completion: str, expected: str) -> Score:
    """First line and whole block, exact (ignoring trailing spaces) and by edit similarity."""
    got, want = _normal(completion), _normal(expected)
    got_first, want_first = (got.split("\n")[0].strip() if got else ""), want.split("\n")[0].strip()
    return Score(first_line_exact=got_first == want_first,
                 first_line_similarity=edit_similarity(got_first, want_first),
                 block_exact=got == want, block_similarity=edit_similarity(got, want))
