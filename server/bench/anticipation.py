"""``contenox bench anticipation``: what anticipated context costs in a replayed editing session.

A real history replayed at a user's pace on a private node. For each commit, in a scratch clone whose HEAD and
working tree are the commit's first parent, the user opens the first changed source file at its first changed
line (``focus``), reads for half the pace, makes the commit's change and saves it (the working tree becomes the
commit's, the diff is its change: ``focus`` with ``saved``), and moves on after the other half. Every
``--ask-every`` steps a question about the change comes before the user moves on ("What does the change I just
made in FILE do, and could it break a caller?", from the chat: no file or selection of its own). The node
anticipates as it does for an editor, at the lowest priority, while the engine is idle.

Reported, from the node's own counters (``status``) and each question's explain-context: the prompt tokens the
anticipations computed per minute of session (all, and of retrieved code), how many of those code tokens a
question found cached (the rest was never used: the next place superseded it before any question came), and
each question's TTFT with its anticipated account.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from contenox.bench.replay import first_parent_commits
from contenox.client import PrivateNode
from contenox.config import Config

__all__ = ["QUESTION", "first_change", "main", "run_session"]

QUESTION = "What does the change I just made in {path} do, and could it break a caller?"
_SOURCE = {".py", ".ts", ".tsx", ".js", ".mjs", ".rs", ".go", ".java", ".c", ".h", ".cc", ".cpp", ".rb", ".kt"}
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, input=stdin, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}")
    return proc.stdout


def first_change(diff: str) -> tuple[str, int, int] | None:
    """(path, first changed line before, after) of the first modified source file of a ``git diff -U0``."""
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            path = name[2:] if name.startswith("b/") else ""
            if Path(path).suffix not in _SOURCE:
                path = ""
        elif path and (m := _HUNK.match(line)):
            return path, max(1, int(m.group(1))), max(1, int(m.group(2)))
    return None


class _Node(PrivateNode):
    """The session's private node (``bench/anticipation-<model>``): anticipation on, no tools, no verification."""

    def __init__(self, base: Config, model: str, max_new_tokens: int) -> None:
        super().__init__(base, f"bench/anticipation-{model}", msgspec.structs.replace(
            base, model=msgspec.structs.replace(base.model, default=model),
            anticipate=msgspec.structs.replace(base.anticipate, enabled=True),
            tools=msgspec.structs.replace(base.tools, enabled=False),
            verify=msgspec.structs.replace(base.verify, enabled=False),
            engine=msgspec.structs.replace(base.engine, max_new_tokens=max_new_tokens)))

    def counters(self) -> tuple[int, int]:
        anticipate = (self.request("status", {}) or {}).get("anticipate") or {}
        return int(anticipate.get("prefilled_tokens") or 0), int(anticipate.get("prefilled_code_tokens") or 0)

    def settle(self, limit_s: float = 300.0) -> None:
        """Until no anticipation is scheduled, planned or computing (none left running beside the next step)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            anticipate = (self.request("status", {}) or {}).get("anticipate") or {}
            states = [w.get("state") for w in (anticipate.get("workspaces") or {}).values()]
            if not any(s in ("scheduled", "planned", "computing") for s in states):
                return
            time.sleep(0.2)


def run_session(base: Config, model: str, repo: Path, commits: str, *, steps: int, pace_s: float, ask_every: int,
                max_new_tokens: int = 96, say: Callable[[str], object] = print) -> dict[str, Any]:
    node = _Node(base, model, max_new_tokens)
    work = Path(tempfile.mkdtemp(prefix="cx-session-"))
    clone = work / "repo"
    try:
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(clone)], check=True,
                       capture_output=True)
        history = [(sha, subject) for sha, subject in first_parent_commits(clone, commits, 0)
                   if first_change(_git(clone, "diff", "-U0", "--diff-filter=M", f"{sha}^", sha)) is not None]
        history = history[-steps:] if steps > 0 else history
        if not history:
            raise RuntimeError(f"no commit in {commits} modifies a source file")
        node.request("completion_info", {})  # the model is loaded, as in an editor that asked for completions
        cwd = str(clone)
        prefilled0, code0 = node.counters()
        started = time.monotonic()
        records: list[dict[str, Any]] = []
        for number, (sha, subject) in enumerate(history, 1):
            _git(clone, "checkout", "-q", "-f", "--detach", f"{sha}^")
            _git(clone, "clean", "-q", "-fdx")
            change = first_change(_git(clone, "diff", "-U0", "--diff-filter=M", f"{sha}^", sha))
            assert change is not None
            path, before, after = change
            step_started = time.monotonic()
            node.request("focus", {"cwd": cwd, "path": path, "line": before, "thread": "session"})
            time.sleep(pace_s / 2)
            _git(clone, "apply", "--whitespace=nowarn", stdin=_git(clone, "diff", "--binary", f"{sha}^", sha))
            node.request("focus", {"cwd": cwd, "path": path, "line": after, "thread": "session", "saved": True})
            record: dict[str, Any] = {"step": number, "commit": sha[:12], "subject": subject[:80],
                                      "place": f"{path}:{after}"}
            if ask_every > 0 and number % ask_every == 0:
                time.sleep(pace_s / 2)  # reading the change over before asking
                result = node.ask({"cwd": cwd, "prompt": QUESTION.format(path=path), "thread": "session",
                                   "max_new_tokens": max_new_tokens})
                explain = (result or {}).get("explain") or {}
                record.update(question=True, ttft_ms=node.first_chunk_ms, anticipated=explain.get("anticipated"),
                              prompt_tokens=(explain.get("totals") or {}).get("tokens"))
                node.settle()  # the answer's thread is anticipated again before the user moves on
            else:
                time.sleep(max(0.0, pace_s - (time.monotonic() - step_started)))
            record["seconds"] = round(time.monotonic() - step_started, 1)
            records.append(record)
            say(f"[{number}/{len(history)}] {record['place']}"
                + (f": question TTFT {record['ttft_ms']} ms" if record.get("question") else ""))
        minutes = (time.monotonic() - started) / 60.0
        node.settle()
        prefilled1, code1 = node.counters()
    finally:
        node.close()
        shutil.rmtree(work, ignore_errors=True)
    prefilled, code = prefilled1 - prefilled0, code1 - code0
    questions = [r for r in records if r.get("question")]
    used = sum(int((r.get("anticipated") or {}).get("cached_tokens") or 0) for r in questions)
    ttfts = [r["ttft_ms"] for r in questions if r.get("ttft_ms") is not None]
    return {
        "model": model, "date": date.today().isoformat(), "repo": str(repo), "commits": commits,
        "steps": len(records), "pace_s": pace_s, "ask_every": ask_every, "minutes": round(minutes, 2),
        "prefilled_tokens": prefilled, "prefilled_code_tokens": code,
        "prefilled_tokens_per_minute": round(prefilled / minutes, 1) if minutes else None,
        "prefilled_code_tokens_per_minute": round(code / minutes, 1) if minutes else None,
        "questions": len(questions), "code_tokens_used": used,
        "code_never_used_share": round(1 - used / code, 4) if code else None,
        "questions_warm": sum(1 for r in questions if (r.get("anticipated") or {}).get("state") == "warm"),
        "question_ttft_ms_median": round(statistics.median(ttfts), 1) if ttfts else None,
        "records": records,
    }


def main(config: Config, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="contenox bench anticipation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=config.model.default)
    parser.add_argument("--repo", default=".", help="a git repository whose history is replayed (default: here)")
    parser.add_argument("--commits", default="HEAD~30..HEAD", help="first-parent range (default HEAD~30..HEAD)")
    parser.add_argument("--steps", type=int, default=12, help="the last N commits that modify a source file")
    parser.add_argument("--pace-s", type=float, default=30.0, help="seconds the user spends at each change")
    parser.add_argument("--ask-every", type=int, default=3, help="a question every N changes (0: none)")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args(argv)
    report = run_session(config, args.model, Path(args.repo).resolve(), args.commits, steps=args.steps,
                         pace_s=args.pace_s, ask_every=args.ask_every, max_new_tokens=args.max_new_tokens)
    out = Path(args.out) / f"{report['date']}-anticipation-session-{args.model}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{report['prefilled_tokens_per_minute']} prompt tokens/min anticipated "
          f"({report['prefilled_code_tokens_per_minute']} of code); of the code, "
          f"{report['code_never_used_share']} never used; {report['questions_warm']}/{report['questions']} "
          f"questions warm, median TTFT {report['question_ttft_ms_median']} ms -> {out}")
    return 0
