"""Deterministic synthetic workspace material sized in tokens: source files, logs, questions.

The same seed gives byte-identical text on every machine, so runs of the benchmark are comparable.
Sizes are reached by counting tokens with the model's own tokenizer, line by line.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["QUESTIONS", "edit_middle", "log_text", "source_files"]

Count = Callable[[str], int]

_NAMES = ["cache", "block", "segment", "planner", "engine", "session", "index", "symbol", "token", "prefix",
          "manifest", "window", "buffer", "request", "reply", "worker", "queue", "digest", "profile", "store"]
_VERBS = ["load", "save", "merge", "split", "find", "count", "check", "build", "warm", "evict", "render", "parse"]

QUESTIONS = (
    "Explain what the function at the top of the first pinned file does.",
    "Which function would you change to make eviction cheaper, and why?",
    "Summarise the failing test output in one sentence.",
    "Suggest a better name for the second class in the pinned files.",
    "Where is the cache size decided? Answer briefly.",
    "What does the log say went wrong first?",
    "List two risks in the code shown above.",
    "Is there any dead code in the pinned files?",
)


def _function(rng: random.Random, i: int) -> str:
    a, b = rng.choice(_NAMES), rng.choice(_NAMES)
    verb = rng.choice(_VERBS)
    n = rng.randint(2, 97)
    return (f"def {verb}_{a}_{i}({b}: list[int], limit: int = {n}) -> int:\n"
            f"    \"\"\"{verb.capitalize()} the {a} of a {b}; stops after {n} items.\"\"\"\n"
            f"    total = 0\n"
            f"    for k, item in enumerate({b}):\n"
            f"        if k >= limit:\n"
            f"            break\n"
            f"        total += item * {rng.randint(1, 9)} - {rng.randint(0, 5)}\n"
            f"    return total\n\n")


def source_files(tokens: int, count: Count, *, seed: int = 0, files: int = 4) -> list[tuple[str, str]]:
    """``files`` Python files of about ``tokens`` tokens in all, as (relative path, text)."""
    rng = random.Random(f"src-{seed}")
    per_file = max(1, tokens // files)
    out: list[tuple[str, str]] = []
    fn = 0
    for f in range(files):
        parts = [f'"""Module {f}: {rng.choice(_NAMES)} helpers."""\n\n']
        used = count(parts[0])
        while used < per_file:
            text = _function(rng, fn)
            fn += 1
            parts.append(text)
            used += count(text)
        out.append((f"pkg/mod_{f}.py", "".join(parts)))
    return out


def log_text(tokens: int, count: Count, *, seed: int = 0) -> str:
    """A pytest-like log of about ``tokens`` tokens (empty for 0)."""
    if tokens <= 0:
        return ""
    rng = random.Random(f"log-{seed}")
    lines: list[str] = []
    used = 0
    i = 0
    while used < tokens:
        name = f"{rng.choice(_VERBS)}_{rng.choice(_NAMES)}_{rng.randint(0, 9999)}"
        if rng.random() < 0.15:
            line = (f"FAILED tests/test_{rng.choice(_NAMES)}.py::test_{name} - AssertionError: "
                    f"assert {rng.randint(0, 999)} == {rng.randint(0, 999)}\n")
        else:
            line = f"tests/test_{rng.choice(_NAMES)}.py::test_{name} PASSED [{i % 100:3d}%] {rng.random():.4f}s\n"
        lines.append(line)
        used += count(line)
        i += 1
    return "".join(lines)


def edit_middle(files: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """The files with one line changed in the middle file; returns (files, edited path)."""
    idx = len(files) // 2
    path, text = files[idx]
    lines = text.splitlines(keepends=True)
    mid = len(lines) // 2
    lines[mid] = "    # edited: the limit is now checked before the loop\n" + lines[mid]
    out = list(files)
    out[idx] = (path, "".join(lines))
    return out, path
