"""Arguments of ``contenox bench`` (parsed here: the CLI hands over the remainder list)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import msgspec

from contenox.errors import InvalidRequest

__all__ = ["FULL_MODEL", "QUICK_MODEL", "BenchOptions", "ReplayOptions", "parse_bench_args"]

QUICK_MODEL = "smollm2-135m"
FULL_MODEL = "qwen2.5-coder-0.5b"
FULL_POINTS = (0, 256, 1024, 4096, 8192, 16384)
QUICK_POINTS = (0, 256, 1024)


class ReplayOptions(msgspec.Struct, frozen=True, kw_only=True):
    repo: str
    commits: str
    """``A..B`` as git understands it (first-parent history from A exclusive to B inclusive)."""
    max_turns: int = 12
    max_new_tokens: int = 16


class BenchOptions(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    quick: bool
    out_dir: str
    points: tuple[int, ...]
    prefix_tokens: int
    max_context: int
    """0: the profile's max_tested_context."""
    repeats: int
    max_new_tokens: int
    peer: bool
    replay: ReplayOptions | None
    replay_only: bool = False
    time_budget_s: float = 0.0
    """Points not started within the budget are skipped (and listed); 0: no budget."""


def _points(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = 1024 if part.endswith("k") else 1
        try:
            out.append(int(part.rstrip("k")) * mult)
        except ValueError as exc:
            raise InvalidRequest(f"bench: --points: {part!r} is not a token count") from exc
    return tuple(sorted(set(out)))


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Contenox benchmark report (see bench/README.md).")
    p.add_argument("--model", help=f"model to benchmark (default {FULL_MODEL}; --quick: {QUICK_MODEL})")
    p.add_argument("--quick", action="store_true", help="small model, small context: a few minutes")
    p.add_argument("--out", default="bench/results", help="directory for the JSON report and the PNG plot")
    p.add_argument("--points", help="changed-suffix points in tokens, e.g. 0,256,1k,4k")
    p.add_argument("--prefix-tokens", type=int, help="cached stable prefix of the suffix curve")
    p.add_argument("--max-context", type=int, default=0, help="cap on prompt + output tokens (default: profile's)")
    p.add_argument("--repeats", type=int, help="repetitions of each timed case")
    p.add_argument("--max-new-tokens", type=int, help="greedy tokens generated per case")
    p.add_argument("--no-peer", action="store_true", help="skip the llama.cpp side by side")
    p.add_argument("--replay", metavar="REPO", help="also replay REPO's history (needs --commits)")
    p.add_argument("--commits", metavar="A..B", help="commit range for the replay")
    p.add_argument("--max-turns", type=int, default=12, help="replay at most this many commits")
    p.add_argument("--time-budget", type=float, default=0.0, help="seconds; later curve points are skipped")
    return p


def parse_bench_args(argv: Sequence[str]) -> BenchOptions:
    """``[--model NAME] [--quick] [--out DIR] ...`` or ``replay REPO --commits A..B [--model NAME]``."""
    argv = list(argv)
    replay_only = bool(argv) and argv[0] == "replay"
    if replay_only:
        p = _parser("contenox bench replay")
        p.add_argument("repo")
        ns = p.parse_args(argv[1:])
        ns.replay = ns.repo
    else:
        ns = _parser("contenox bench").parse_args(argv)
    if ns.replay and not ns.commits:
        raise InvalidRequest("bench: replay needs --commits A..B")
    quick = bool(ns.quick)
    model = ns.model or (QUICK_MODEL if quick else FULL_MODEL)
    points = _points(ns.points) if ns.points else (QUICK_POINTS if quick else FULL_POINTS)
    replay = None
    if ns.replay:
        replay = ReplayOptions(repo=str(Path(ns.replay).expanduser().resolve()), commits=ns.commits,
                               max_turns=ns.max_turns)
    return BenchOptions(
        model=model, quick=quick, out_dir=ns.out, points=points,
        prefix_tokens=ns.prefix_tokens or (512 if quick else 4096),
        max_context=ns.max_context, repeats=ns.repeats or 3,
        max_new_tokens=ns.max_new_tokens or (16 if quick else 32),
        peer=not ns.no_peer, replay=replay, replay_only=replay_only, time_budget_s=ns.time_budget,
    )
