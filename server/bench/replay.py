"""``contenox bench replay REPO --commits A..B``: a real history replayed as editing steps.

Each commit becomes one step in a scratch clone (the user's repository and working tree are only
read): the clone's HEAD is the commit's first parent and its working tree and index hold the
commit, so the workspace's diff is exactly that change. Per step the workspace index is refreshed
and a turn "Review this change." runs the node's way (``contenox.planner.turn.prepare`` -> engine ->
``finish``), with the first changed file as the selection. Beside it, on the same engine,
the naive ordering of generic chat clients: a timestamp in the system prompt and the volatile
material (diff, open file) ahead of the stable context, the whole prompt tokenized as one string.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from contenox.bench.options import ReplayOptions
from contenox.bench.report import ReplaySection, ReplaySummary, ReplayTurn
from contenox.bench.stats import spread
from contenox.config import Config
from contenox.errors import ContenoxError, RepositoryError
from contenox.planner.budget import trim_head
from contenox.runtime_ov import Engine, EngineLike, EngineOptions, FinalEvent, GenerateRequest, InstalledModel

__all__ = ["Replayer", "first_parent_commits", "replay_only", "replay_turns", "run_replay"]

log = logging.getLogger(__name__)

PROMPT = "Review this change."
_OPEN_FILE_TOKENS = 1200


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RepositoryError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[:300]}",
                              args=list(args))
    return proc.stdout


def first_parent_commits(repo: Path, spec: str, limit: int) -> list[tuple[str, str]]:
    """(sha, subject) of first-parent commits in ``spec`` that have a parent, oldest first."""
    lines = _git(repo, "rev-list", "--first-parent", "--reverse", "--parents", "--format=%s", spec).splitlines()
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        head = lines[i].split()
        subject = lines[i + 1] if i + 1 < len(lines) else ""
        i += 2
        if len(head) >= 3:  # "commit <sha> <parent> ..."
            out.append((head[1], subject))
    return out[-limit:] if limit > 0 else out


def _step(clone: Path, sha: str) -> None:
    """Working tree and index = ``sha``; HEAD = its first parent (the diff is the commit's change)."""
    _git(clone, "checkout", "-q", "-f", "--detach", sha)
    _git(clone, "clean", "-q", "-fdx")
    _git(clone, "reset", "-q", "--soft", f"{sha}^")


def _changed_file(clone: Path) -> str:
    for line in _git(clone, "diff", "--cached", "--name-status", "HEAD").splitlines():
        parts = line.split("\t")
        if parts and parts[0][:1] in "AM" and len(parts) >= 2:
            return parts[-1]
    return ""


class Replayer:
    def __init__(self, config: Config, engine: EngineLike, clone: Path, state_dir: Path, max_new: int,
                 floor: bool = True) -> None:
        from contenox.planner import Planner
        from contenox.planner.map_base import MapBase
        from contenox.workspace import Workspace

        self.config = config
        self.engine = engine
        self.clone = clone
        self.max_new = max_new
        self.floor = floor
        """Measure each turn's suffix-only floor (its new tokens alone, nothing cached)."""
        self.planner = Planner(engine.tokenizer, engine.profile, config.planner, state_dir=state_dir / "planner")
        self.map_base = MapBase()
        self.ws = Workspace.open(clone, config.workspace, state_dir / "index")
        self.naive_history: list[tuple[str, str]] = []
        self.history_user = PROMPT
        """What the contenox turn put into its history for this step (the prompt with the selection): the
        naive history carries the same text, so both orderings send the same material."""
        self.retrieved_code = ""
        """The code contenox retrieved for this step: the naive ordering sends the same material."""

    def _open_file(self) -> tuple[str, str]:
        rel = _changed_file(self.clone)
        if not rel:
            return "", ""
        try:
            text = self.ws.read_text(rel)
        except Exception:  # binary, huge or vanished: no open file this step
            return rel, ""
        ids = self.engine.tokenizer.encode(text)
        if len(ids) > _OPEN_FILE_TOKENS:
            text = self.engine.tokenizer.decode(ids[:_OPEN_FILE_TOKENS])
        return rel, text

    async def _run(self, ids: list[int], session: str, max_new: int | None = None) -> FinalEvent:
        handle = self.engine.submit(GenerateRequest(session_id=session, token_ids=ids,
                                                    max_new_tokens=max_new or self.max_new))
        final: FinalEvent | None = None
        async for event in handle:
            if isinstance(event, FinalEvent):
                final = event
        assert final is not None
        return final

    def contenox_turn(self, sha: str, subject: str, prompt: str = PROMPT) -> ReplayTurn:
        from contenox.planner.turn import Question, finish, prepare

        events = self.ws.refresh()
        rel, text = self._open_file()
        question = Question(prompt=prompt, thread="replay", selection=f"{rel}\n{text}" if text else None)
        plan = prepare(self.planner, self.ws, question, root=self.clone, changes=events,
                       map_base=self.map_base, predict_cached=self.engine.predict_cached, config=self.config.planner)
        final = asyncio.run(self._run(plan.token_ids, "replay-contenox"))
        end = finish(self.planner, plan, final.text, final.metrics)
        explain, rebased = end.explain, end.rebased
        if rebased:  # the node re-warms a rebased thread in the background, between the user's turns
            asyncio.run(self.engine.warm("replay-contenox", rebased))
        self.history_user = plan.user
        self.retrieved_code = "\n\n".join(f"{c.id} ({c.name}):\n{c.text}" for c in plan.retrieved)
        m = final.metrics
        segs = explain.segments
        reusable = plan.manifest.segment("history").token_end
        cached = m.prompt_tokens - m.measured_recomputed_tokens
        new = plan.token_ids[min(len(plan.token_ids) - 1, max(0, cached)):]
        floor = asyncio.run(self._run(new, f"replay-floor-{sha[:8]}", max_new=1)) if self.floor else None
        return ReplayTurn(
            commit=sha[:12], subject=subject[:80], ordering="contenox", prompt_tokens=m.prompt_tokens,
            segments_cached=sum(1 for s in segs if s.tokens and s.new == 0),
            segments_new=sum(1 for s in segs if s.new > 0), predicted_cached_tokens=plan.manifest.predicted_cached_tokens,
            predicted_recomputed_tokens=m.prompt_tokens - plan.manifest.predicted_cached_tokens,
            measured_recomputed_tokens=m.measured_recomputed_tokens,
            cached_share=round(plan.manifest.predicted_cached_tokens / m.prompt_tokens, 4), ttft_ms=round(m.ttft_ms, 1),
            changed_segments=[s.kind for s in segs if s.invalidated_by],
            segment_tokens={s.kind: s.tokens for s in segs}, reusable_tokens=reusable,
            reuse_efficiency=round(min(cached, reusable) / reusable, 4) if reusable else None,
            floor_ttft_ms=round(floor.metrics.ttft_ms, 1) if floor is not None else None,
            cache_evidence=m.cache_evidence, server_cached_tokens=m.server_cached_tokens)

    def naive_turn(self, sha: str, subject: str) -> ReplayTurn:
        prompts = self.planner.prompts
        rel, text = self._open_file()
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        system = f"{prompts.system}\n\nCurrent date and time: {now}\n\n{prompts.tools}\n\n{prompts.policy}"
        instructions = "\n\n".join(f"# {path}\n{body}" for path, body in self.ws.instructions())
        repo_map = self.ws.repo_map(self.config.planner.repo_map_tokens,
                                    lambda s: len(self.engine.tokenizer.encode(s)))
        encode = self.engine.tokenizer.encode
        # a naive client's sliding window: the newest turns within the thread budget contenox has too
        history: list[tuple[str, str]] = []
        used = 0
        for question, answer in reversed(self.naive_history[-self.config.planner.max_history_turns:]):
            used += len(encode(question)) + len(encode(answer))
            if used > self.config.planner.thread_tokens:
                break
            history.insert(0, (question, answer))
        diff = self.ws.diff_text()

        def prompt_ids(diff_text: str) -> list[int]:
            user = "\n\n".join(part for part in (
                f"Current diff:\n{diff_text}", f"Open file {rel}:\n{text}" if text else "",
                f"Relevant code:\n{self.retrieved_code}" if self.retrieved_code else "",
                instructions, f"Repository map:\n{repo_map}", PROMPT) if part)
            messages = [{"role": "system", "content": system}]
            for question, answer in history:
                messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
            messages.append({"role": "user", "content": user})
            return encode(self.engine.tokenizer.apply_chat_template(messages))

        ids = prompt_ids(diff)
        limit = self.engine.profile.max_tested_context - self.max_new - self.config.planner.output_reserve
        while len(ids) > limit and history:  # a naive client drops its oldest turns to fit ...
            history.pop(0)
            ids = prompt_ids(diff)
        if len(ids) > limit:  # ... and cuts the diff, as the planner does
            ids = prompt_ids(trim_head(diff, max(0, len(encode(diff)) - (len(ids) - limit)),
                                       lambda t: len(encode(t))))
        predicted = self.engine.predict_cached(ids)
        final = asyncio.run(self._run(ids, "replay-naive"))
        self.naive_history.append((self.history_user, final.text.strip()))
        m = final.metrics
        return ReplayTurn(
            commit=sha[:12], subject=subject[:80], ordering="naive", prompt_tokens=m.prompt_tokens,
            segments_cached=0, segments_new=2 + 2 * len(history), predicted_cached_tokens=predicted,
            predicted_recomputed_tokens=m.prompt_tokens - predicted,
            measured_recomputed_tokens=m.measured_recomputed_tokens,
            cached_share=round(predicted / m.prompt_tokens, 4), ttft_ms=round(m.ttft_ms, 1), changed_segments=[],
            segment_tokens={"messages": 2 + 2 * len(history)}, cache_evidence=m.cache_evidence,
            server_cached_tokens=m.server_cached_tokens)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _summary(ours: list[ReplayTurn], naive: list[ReplayTurn], chunk: int) -> ReplaySummary | None:
    if not ours or not naive:
        return None
    o = [t.ttft_ms for t in ours]
    n = [t.ttft_ms for t in naive]
    o_share = _mean([t.cached_share for t in ours])
    n_share = _mean([t.cached_share for t in naive])
    error = max(abs(t.measured_recomputed_tokens - t.predicted_recomputed_tokens) for t in ours + naive)
    del chunk
    reuse = [t.reuse_efficiency for t in ours if t.reuse_efficiency is not None]
    floors = [t.ttft_ms / t.floor_ttft_ms for t in ours if t.floor_ttft_ms]
    return ReplaySummary(
        reuse_efficiency=spread(reuse) if reuse else None, ttft_vs_floor=spread(floors) if floors else None,
        ttft_ratio_naive=spread([b.ttft_ms / a.ttft_ms for a, b in zip(ours, naive, strict=True) if a.ttft_ms]),
        turns=len(ours), contenox_ttft_ms=spread(o), naive_ttft_ms=spread(n),
        mean_ttft_ratio=round(_mean(n) / _mean(o), 3) if _mean(o) else 0.0,
        median_ttft_ratio=round(spread(n).median / spread(o).median, 3) if spread(o).median else 0.0,
        contenox_cached_share=round(o_share, 4), naive_cached_share=round(n_share, 4),
        cached_share_ratio=round(o_share / n_share, 3) if n_share else 0.0, prediction_max_error_tokens=error)


def replay_turns(config: Config, engine: EngineLike, opts: ReplayOptions, *, floor: bool = True,
                 say: Callable[[str], None] = log.info, stopped: list[str] | None = None
                 ) -> tuple[list[ReplayTurn], list[ReplayTurn]]:
    """The contenox and naive turns of ``opts.commits`` of ``opts.repo`` on ``engine``, one pair per commit after
    the first (which warms both orderings up). ``floor``: also measure each contenox turn's suffix-only floor.
    ``stopped``: a failed turn (a serving engine's refusal) ends the replay with the pairs so far, its error added
    here, instead of raising."""
    repo = Path(opts.repo)
    commits = first_parent_commits(repo, opts.commits, opts.max_turns + 1)
    if len(commits) < 2:
        raise RepositoryError(f"{opts.commits}: needs at least two commits with parents in {repo}")
    ours: list[ReplayTurn] = []
    naive: list[ReplayTurn] = []
    with tempfile.TemporaryDirectory(prefix="contenox-replay-") as scratch:
        clone = Path(scratch) / "repo"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(clone)], check=True,
                       capture_output=True)
        _step(clone, commits[0][0])
        r = Replayer(config, engine, clone, Path(scratch) / "state", opts.max_new_tokens, floor=floor)
        r.contenox_turn(*commits[0])
        r.naive_turn(*commits[0])
        for sha, subject in commits[1:]:
            started = time.perf_counter()
            _step(clone, sha)
            try:
                pair = r.contenox_turn(sha, subject), r.naive_turn(sha, subject)
            except ContenoxError as exc:
                if stopped is None:
                    raise
                stopped.append(f"replay stopped at {sha[:8]} after {len(ours)} turn(s): {exc}")
                say(stopped[-1])
                break
            ours.append(pair[0])
            naive.append(pair[1])
            say(f"replay {sha[:8]} {subject[:40]!r}: contenox {ours[-1].ttft_ms:.0f} ms "
                f"({ours[-1].cached_share:.0%} cached), naive {naive[-1].ttft_ms:.0f} ms "
                f"({naive[-1].cached_share:.0%}) [{time.perf_counter() - started:.1f} s]")
    return ours, naive


def run_replay(config: Config, engine: Engine, opts: ReplayOptions, *, say: Callable[[str], None] = log.info
               ) -> ReplaySection:
    """Replay ``opts.commits`` of ``opts.repo`` on ``engine``; the first commit warms both orderings up."""
    ours, naive = replay_turns(config, engine, opts, say=say)
    return ReplaySection(repo=opts.repo, commits=opts.commits, model=engine.model.name, contenox=ours, naive=naive,
                         summary=_summary(ours, naive, engine.options.chunk_tokens))


def replay_only(config: Config, model: InstalledModel, opts: ReplayOptions, *,
                say: Callable[[str], None] = log.info) -> ReplaySection:
    engine = Engine.start(model, EngineOptions.from_config(config.engine))
    try:
        return run_replay(config, engine, opts, say=say)
    finally:
        engine.close()
