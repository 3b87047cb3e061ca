"""``contenox bench remote``: the planner over a real serving engine, measured by the server's own counts.

One run against the server ``[engine]`` names (``backend = "openai"``; ``--url`` / ``--server-model`` override):

- **two developers**: two clones of one commit at different paths, each with its own planner state, ask their
  first question (different ones) one after the other; the server's cached-token count of the second one, as a
  share of its stable prefix (system .. pins), is the team-shared prefix served once. Run first, so the first
  developer finds the server's cache holding nothing of this repository (its own figure says so).
- **a replayed session**: REPO's commits as editing steps (``bench/replay``), the turn "Review this change."
  the node's way and, beside it, the same material as a plain OpenAI chat client sends it (a timestamped system
  prompt, the volatile material first); per turn the TTFT this client saw and the server's cached tokens.

Every cached figure is the server's (``usage.prompt_tokens_details.cached_tokens`` or llama.cpp's
``timings.cache_n``); a server that reports none is named, and its figures are left out, not predicted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from contenox.bench.options import ReplayOptions
from contenox.bench.replay import Replayer, first_parent_commits, replay_turns
from contenox.bench.report import ReplayTurn
from contenox.bench.stats import Spread, spread
from contenox.config import Config
from contenox.errors import ContenoxError
from contenox.runtime_ov import EngineLike

__all__ = ["DeveloperTurn", "RemoteReport", "main", "run_remote"]

log = logging.getLogger(__name__)

STABLE = ("system", "tools", "policy", "instructions", "repo_map", "pins")
"""The planner's stable segments: what every developer of one checkout sends byte for byte."""
QUESTIONS = ("Where does this project start, and what does it call first?",
             "How are errors reported to the caller here?")
"""The two developers' first questions (different, as two people's would be)."""


class DeveloperTurn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    developer: str
    clone: str
    """Where this developer's clone was (different for each: no path reaches the stable prefix)."""
    question: str
    prompt_tokens: int
    stable_tokens: int
    server_cached_tokens: int | None
    stable_cached_share: float | None
    """min(server cached, stable) / stable: how much of the shared prefix the server already held."""
    ttft_ms: float


class RemoteTurnPair(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    commit: str
    contenox_prompt_tokens: int
    contenox_server_cached: int | None
    contenox_ttft_ms: float
    naive_prompt_tokens: int
    naive_server_cached: int | None
    naive_ttft_ms: float


class RemoteSummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    turns: int
    contenox_ttft_ms: Spread
    naive_ttft_ms: Spread
    median_ttft_ratio: float
    """naive median TTFT / contenox median TTFT (above 1: contenox is faster)."""
    contenox_cached_share: float | None
    """The server's cached tokens over the prompt tokens, all the session's contenox turns together."""
    naive_cached_share: float | None
    second_developer_stable_share: float | None
    """The headline: of the second developer's stable prefix, the share the server reported cached."""


class RemoteReport(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    date: str
    server: str
    server_model: str
    local_model: str
    """The catalog model whose tokenizer and profile the node plans with."""
    token_prompt: bool
    tokenizer_check: str
    machine: str
    repo: str
    commits: str
    developers: list[DeveloperTurn]
    turns: list[RemoteTurnPair]
    summary: RemoteSummary | None
    notes: list[str]


def _share(cached: int | None, total: int) -> float | None:
    return round(min(cached, total) / total, 4) if cached is not None and total else None


def _developer(config: Config, engine: EngineLike, repo: Path, sha: str, scratch: Path, name: str, path: str,
               question: str) -> DeveloperTurn:
    clone = scratch / name / path
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(clone)], check=True,
                   capture_output=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--detach", sha], check=True, capture_output=True)
    dev = Replayer(config, engine, clone, scratch / name / "state", max_new=8, floor=False)
    turn = dev.contenox_turn(sha, "", prompt=question)
    stable = sum(turn.segment_tokens.get(kind, 0) for kind in STABLE)
    return DeveloperTurn(developer=name, clone=str(clone), question=question, prompt_tokens=turn.prompt_tokens,
                         stable_tokens=stable, server_cached_tokens=turn.server_cached_tokens,
                         stable_cached_share=_share(turn.server_cached_tokens, stable), ttft_ms=turn.ttft_ms)


def _pair(ours: ReplayTurn, naive: ReplayTurn) -> RemoteTurnPair:
    return RemoteTurnPair(commit=ours.commit, contenox_prompt_tokens=ours.prompt_tokens,
                          contenox_server_cached=ours.server_cached_tokens, contenox_ttft_ms=ours.ttft_ms,
                          naive_prompt_tokens=naive.prompt_tokens, naive_server_cached=naive.server_cached_tokens,
                          naive_ttft_ms=naive.ttft_ms)


def _total_share(turns: list[ReplayTurn]) -> float | None:
    if any(t.server_cached_tokens is None for t in turns) or not turns:
        return None
    return round(sum(t.server_cached_tokens or 0 for t in turns) / sum(t.prompt_tokens for t in turns), 4)


def run_remote(config: Config, opts: ReplayOptions, *, say: Callable[[str], None] = log.info) -> RemoteReport:
    """Measure the node's planner over the serving engine ``config.engine`` names (see the module's text)."""
    from contenox.runtime_ov import ModelStore, ServedEngine, ServedOptions

    model = ModelStore(config.models_dir).ensure(config.model.default)
    options = ServedOptions.from_config(config.engine, config.model.default)
    engine = ServedEngine.start(model, options)
    notes: list[str] = []
    repo = Path(opts.repo).resolve()
    try:
        commits = first_parent_commits(repo, opts.commits, opts.max_turns + 1)
        if not commits:
            raise ContenoxError(f"{opts.commits}: no commits with a parent in {repo}")
        head = commits[-1][0]
        with tempfile.TemporaryDirectory(prefix="contenox-remote-") as scratch:
            developers = []
            for (name, path), question in zip((("alice", "src/work"), ("bob", "checkouts/team-repo")), QUESTIONS,
                                              strict=True):
                developers.append(_developer(config, engine, repo, head, Path(scratch), name, path, question))
                d = developers[-1]
                say(f"developer {name}: {d.prompt_tokens} prompt tokens, stable {d.stable_tokens}, server cached "
                    f"{d.server_cached_tokens} ({'-' if d.stable_cached_share is None else f'{d.stable_cached_share:.0%}'}"
                    f" of the stable prefix), TTFT {d.ttft_ms:.0f} ms")
        ours, naive = replay_turns(config, engine, opts, floor=False, say=say, stopped=notes)
    finally:
        engine.close()
    if any(t.server_cached_tokens is None for t in ours + naive) or developers[1].server_cached_tokens is None:
        notes.append(f"{engine.server} reported no cached-token count for some requests: those figures are left out")
    summary = None
    if ours:
        o, n = spread([t.ttft_ms for t in ours]), spread([t.ttft_ms for t in naive])
        summary = RemoteSummary(turns=len(ours), contenox_ttft_ms=o, naive_ttft_ms=n,
                                median_ttft_ratio=round(n.median / o.median, 3) if o.median else 0.0,
                                contenox_cached_share=_total_share(ours), naive_cached_share=_total_share(naive),
                                second_developer_stable_share=developers[1].stable_cached_share)
    return RemoteReport(
        date=dt.date.today().isoformat(), server=engine.server, server_model=options.model, local_model=model.name,
        token_prompt=options.token_prompt, tokenizer_check=engine.tokenizer_check,
        machine=f"{platform.machine()}, {platform.system()}", repo=str(repo), commits=opts.commits,
        developers=developers, turns=[_pair(a, b) for a, b in zip(ours, naive, strict=True)], summary=summary,
        notes=notes)


def plot_remote(report: RemoteReport, path: Path) -> Path:
    """TTFT and the server's cached share per replayed turn, contenox beside the naive client."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    xs = list(range(1, len(report.turns) + 1))
    left.plot(xs, [t.contenox_ttft_ms for t in report.turns], "o-", label="contenox")
    left.plot(xs, [t.naive_ttft_ms for t in report.turns], "s--", label="naive chat client")
    left.set_xticks(xs)
    left.set_xlabel("replayed commit")
    left.set_ylabel("time to first token, ms")
    left.set_yscale("log")
    left.legend(fontsize=8)
    left.grid(True, alpha=0.3)
    right.plot(xs, [(_share(t.contenox_server_cached, t.contenox_prompt_tokens) or 0) * 100 for t in report.turns],
               "o-", label="contenox")
    right.plot(xs, [(_share(t.naive_server_cached, t.naive_prompt_tokens) or 0) * 100 for t in report.turns],
               "s--", label="naive chat client")
    second = report.developers[1].stable_cached_share if len(report.developers) > 1 else None
    if second is not None:
        right.axhline(second * 100, color="gray", linestyle=":",
                      label=f"2nd developer's first turn: {second:.0%} of the stable prefix")
    right.set_xticks(xs)
    right.set_xlabel("replayed commit")
    right.set_ylabel("prompt tokens the server reported cached, %")
    right.set_ylim(0, 105)
    right.legend(fontsize=8)
    right.grid(True, alpha=0.3)
    fig.suptitle(f"{report.server_model} on {report.server} (planned with {report.local_model}'s tokenizer)",
                 fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench remote", description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", default=".", help="the repository to replay and ask about (default: .)")
    p.add_argument("--commits", default="HEAD~9..HEAD", help="commit range to replay (default: HEAD~9..HEAD)")
    p.add_argument("--max-turns", type=int, default=8, help="replay at most this many commits (default 8)")
    p.add_argument("--max-new", type=int, default=16, help="tokens each answer decodes (default 16)")
    p.add_argument("--url", help="the server's OpenAI base URL (default: [engine] url)")
    p.add_argument("--server-model", help="the name the server serves the model under (default: [engine] model)")
    p.add_argument("--token-prompt", action="store_true", help="send the planned ids (llama.cpp's server, vLLM)")
    p.add_argument("--out", default="bench/results", help="where the JSON report and plot go")
    ns = p.parse_args(argv)
    engine = config.engine
    fields: dict[str, object] = {"backend": "openai"}
    if ns.url:
        fields["url"] = ns.url
    if ns.server_model:
        fields["model"] = ns.server_model
    if ns.token_prompt:
        fields["token_prompt"] = True
    config = msgspec.structs.replace(config, engine=msgspec.structs.replace(engine, **fields))
    if not config.engine.url:
        print("contenox bench remote: no server: set [engine] url or pass --url", file=sys.stderr)
        return 2
    opts = ReplayOptions(repo=ns.repo, commits=ns.commits, max_turns=ns.max_turns, max_new_tokens=ns.max_new)
    try:
        report = run_remote(config, opts, say=lambda line: print(line, file=sys.stderr, flush=True))
    except ContenoxError as exc:  # (a ServingError among them)
        print(f"contenox bench remote: {exc}", file=sys.stderr)
        return 1
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{report.date}-remote-{report.server_model or report.local_model}"  # (a model name may hold dots)
    (out / f"{stem}.json").write_text(json.dumps(msgspec.to_builtins(report), indent=2) + "\n")
    try:
        plot_remote(report, out / f"{stem}.png")
    except ImportError:
        print("no plot: matplotlib is not installed (the bench extra)", file=sys.stderr)
    print(out / f"{stem}.json")
    s = report.summary
    if s is not None:
        print(f"contenox TTFT median {s.contenox_ttft_ms.median:.0f} ms vs naive {s.naive_ttft_ms.median:.0f} ms "
              f"({s.median_ttft_ratio}x); server-cached share {s.contenox_cached_share} vs {s.naive_cached_share}; "
              f"second developer's stable prefix cached: {s.second_developer_stable_share}")
    return 0

