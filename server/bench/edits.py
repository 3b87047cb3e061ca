"""``contenox bench edits``: does the model's own ``propose_edit`` apply, and does its own test run pass on it?

Each task is a small repository with a failing test and a request a user would type ("... fails: ... Fix it (propose
the edit) and run `python -m pytest ...`"), asked through ``contenox ask --verify`` (the consent to run the test in
the scratch copy) on a private node (the model's own certification gives it the tools, as for a user). Two arms: ``redraw`` (as shipped: a
``propose_edit`` whose diff does not apply, changes nothing or is cut off is drawn again once under the file's own
lines) and ``off`` (``[tools] redraw_edits = false``). Per task and arm, from what the user sees (the CLI's tool
lines) and explain-context's notes: whether the model called ``propose_edit``, whether its edit applied (first or
after the redraw), whether its own test command ran on it in the scratch copy and passed, and whether the edit the
turn offers (its own, or the verification's candidate) makes the task's test pass in a fresh copy.

Tasks: ``tuned`` (the three the redraw was built on: a diff of context alone, context from memory, line numbers
copied from a read) and ``held-out`` (written afterwards from reading h11's code, never run before this bench:
one-line bugs in h11 whose own tests catch them; needs the eval's h11 checkout, ``contenox eval`` fetches it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from contenox.config import Config
from contenox.host import host_facts

__all__ = ["TASKS", "Task", "main"]


@dataclass(frozen=True)
class Task:
    name: str
    group: str
    """``tuned`` or ``held-out``."""
    ask: str
    test: str
    """The command that passes once the bug is fixed."""
    files: dict[str, str] = field(default_factory=dict)
    """A repository of these files; or, with ``base``, files laid over a copy of it."""
    base: str = ""
    """An eval repository (folder name in the eval's repository cache) to copy."""
    bug: tuple[str, str, str] = ("", "", "")
    """(path, text, injected): ``text`` in ``path`` replaced by ``injected`` (exactly once)."""


_UTIL = 'def helper(x):\n    """Add one."""\n    return x + 1\n'
_TEXT = ('import re\n\n\ndef words(s):\n    return re.findall(r"[A-Za-z0-9]+", s)\n\n\ndef slugify(s):\n'
         '    """URL slug: lowercase words joined by dashes."""\n    return "-".join(words(s))\n\n\ndef title(s):\n'
         '    return " ".join(w.capitalize() for w in words(s))\n')
_CONFIG = ('from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    host: str = "127.0.0.1"\n'
           '    port: int = 8000\n    debug: bool = False\n\n\ndef load(env):\n'
           '    return Config(host=env.get("HOST", "127.0.0.1"), port=int(env.get("PORT", 8000)))\n')

TASKS = (
    Task("add-two", "tuned",
         "tests/test_util.py fails: it expects helper(1) == 3, so helper must add two, not one. Read util.py, "
         "propose the edit to it, then run `python -m pytest -q tests/test_util.py` to check it.",
         "python -m pytest -q tests/test_util.py",
         {"util.py": _UTIL, "tests/test_util.py": "from util import helper\n\n\ndef test_helper():\n"
                                                  "    assert helper(1) == 3\n"}),
    Task("slugify-lowercase", "tuned",
         "tests/test_text.py fails: slugify('Hello World') returns 'Hello-World' instead of 'hello-world'. Fix "
         "slugify in text.py with propose_edit, then run `python -m pytest -q tests/test_text.py`.",
         "python -m pytest -q tests/test_text.py",
         {"text.py": _TEXT, "tests/test_text.py": "from text import slugify\n\n\ndef test_slug():\n"
                                                  "    assert slugify('Hello World') == 'hello-world'\n"}),
    Task("default-port", "tuned",
         "tests/test_config.py fails: the default port must be 8080, not 8000, everywhere in server/config.py. "
         "Propose the edit, then run `python -m pytest -q tests/test_config.py`.",
         "python -m pytest -q tests/test_config.py",
         {"server/__init__.py": "", "server/config.py": _CONFIG,
          "tests/test_config.py": "from server.config import Config, load\n\n\ndef test_port():\n"
                                  "    assert Config().port == 8080 and load({}).port == 8080\n"}),
    Task("h11-next-line", "held-out",
         "h11/tests/test_receivebuffer.py fails: lines extracted by maybe_extract_next_line lose their final "
         "newline byte. Fix it in h11/_receivebuffer.py (propose the edit), then run "
         "`python -m pytest -q h11/tests/test_receivebuffer.py`.",
         "python -m pytest -q h11/tests/test_receivebuffer.py", base="h11",
         bug=("h11/_receivebuffer.py", "idx = partial_idx + 2", "idx = partial_idx + 1")),
    Task("h11-comma-header", "held-out",
         "h11/tests/test_headers.py fails: get_comma_header does not split `Connection: close, upgrade` into two "
         "values. Fix get_comma_header in h11/_headers.py (propose the edit), then run "
         "`python -m pytest -q h11/tests/test_headers.py`.",
         "python -m pytest -q h11/tests/test_headers.py", base="h11",
         bug=("h11/_headers.py", 'found_raw_value.split(b",")', 'found_raw_value.split(b";")')),
    Task("h11-expect-continue", "held-out",
         "h11/tests/test_headers.py fails: has_expect_100_continue says an HTTP/1.0 request expects "
         "100-continue; it must ignore the header there. Fix it in h11/_headers.py (propose the edit), then run "
         "`python -m pytest -q h11/tests/test_headers.py`.",
         "python -m pytest -q h11/tests/test_headers.py", base="h11",
         bug=("h11/_headers.py", 'if request.http_version < b"1.1":\n        return False',
              'if request.http_version < b"1.1":\n        return True')),
    Task("h11-bytesify-int", "held-out",
         "h11/tests/test_util.py fails: bytesify(10) should raise TypeError but returns ten zero bytes. Fix "
         "bytesify in h11/_util.py (propose the edit), then run `python -m pytest -q h11/tests/test_util.py`.",
         "python -m pytest -q h11/tests/test_util.py", base="h11",
         bug=("h11/_util.py", '    if isinstance(s, int):\n        raise TypeError("expected bytes-like object, '
                              'not int")\n', "")),
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "user.name=bench", "-c", "user.email=b@x",
                    *args], cwd=repo, check=True, capture_output=True)


def _make(task: Task, root: Path, repos: Path) -> Path:
    repo = root / task.name
    if task.base:
        shutil.copytree(repos / task.base, repo, ignore=shutil.ignore_patterns(".git"))
    else:
        repo.mkdir(parents=True)
    for rel, text in task.files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    path, text, injected = task.bug
    if path:
        source = (repo / path).read_text(encoding="utf-8")
        if source.count(text) != 1:
            raise SystemExit(f"task {task.name}: {text!r} is not in {path} exactly once")
        (repo / path).write_text(source.replace(text, injected), encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "task")
    return repo


def _passes(repo: Path, command: str) -> bool:
    done = subprocess.run(command, shell=True, cwd=repo, capture_output=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return done.returncode == 0


def _run(task: Task, arm: str, root: Path, repos: Path, env: dict[str, str]) -> dict[str, Any]:
    repo = _make(task, root / arm, repos)
    if _passes(repo, task.test):
        raise SystemExit(f"task {task.name}: its test passes before any fix")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "contenox", "ask", "--verify", "--apply", "--cwd", str(repo),
                           task.ask], env=env, capture_output=True, text=True, timeout=1800,
                          stdin=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - started
    lines = done.stdout.splitlines()
    called = [line for line in lines if line.startswith(("· ", "✗ "))]
    edits = [line for line in called if line[2:].startswith("Edit ")]
    scratch = [line for line in called if "scratch copy" in line and line[2:].startswith("Run ")]
    explained = subprocess.run([sys.executable, "-m", "contenox", "explain-context", "--json", "--cwd", str(repo)],
                               env=env, capture_output=True, text=True, timeout=300, check=False)
    try:
        notes = list(json.loads(explained.stdout).get("notes", []))
    except json.JSONDecodeError:
        notes = []
    redraws = [n for n in notes if n.startswith("the model's edit of ") and "drawn again" in n]
    return {"task": task.name, "group": task.group, "arm": arm, "wall_s": round(wall, 1),
            "exit_code": done.returncode, "called_edit": bool(edits),
            "own_edit_applied": any(line.startswith("· ") for line in edits),
            "redraws": len(redraws), "own_check_ran": bool(scratch),
            "own_check_passed": any(line.startswith("· ") and "(exit code 0)" in line for line in scratch),
            "offered_edit_passes": _passes(repo, task.test), "tool_lines": called, "notes": notes,
            "stdout_tail": done.stdout[-3000:], "stderr_tail": done.stderr[-1500:]}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in dict.fromkeys(r["arm"] for r in rows):
        for group in ("tuned", "held-out", "all"):
            runs = [r for r in rows if r["arm"] == arm and group in ("all", r["group"])]
            if not runs:
                continue
            out[f"{arm}/{group}"] = {
                "tasks": len(runs), **{key: sum(bool(r[key]) for r in runs) for key in (
                    "called_edit", "own_edit_applied", "own_check_ran", "own_check_passed", "offered_edit_passes")},
                "redrawn": sum(r["redraws"] > 0 for r in runs),
                "median_wall_s": round(statistics.median(r["wall_s"] for r in runs), 1)}
    return out


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench edits", description=__doc__.split("\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--arms", default="redraw,off", help="comma-separated: redraw, off")
    p.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    p.add_argument("--repos", default=str(config.root / "cache" / "eval-repos"),
                   help="the eval's repository cache (for the held-out tasks)")
    p.add_argument("--out", default="bench/results")
    ns = p.parse_args(argv)
    weights = config.models_dir / ns.model
    if not weights.is_dir():
        raise SystemExit(f"{ns.model} is not installed in {config.models_dir}")
    chosen = [t for t in TASKS if not ns.tasks or t.name in ns.tasks.split(",")]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cx-bench-edits-") as scratch:
        root = Path(scratch)
        for arm in ns.arms.split(","):
            home = root / f"home-{arm}"
            (home / "models").mkdir(parents=True)
            (home / "models" / ns.model).symlink_to(weights, target_is_directory=True)
            (home / "config.toml").write_text(
                f'[model]\ndefault = "{ns.model}"\n\n[engine]\ncache_size_gb = 1.0\nmax_new_tokens = 512\n\n'
                f"[node]\nidle_exit_s = 900\n\n[tools]\n"
                f"redraw_edits = {'true' if arm == 'redraw' else 'false'}\n", encoding="utf-8")
            runtime = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
            env = {**os.environ, "CONTENOX_HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
            try:
                for task in chosen:
                    row = _run(task, arm, root, Path(ns.repos), env)
                    rows.append(row)
                    print(f"[bench edits] {arm} {task.name}: edit called {row['called_edit']}, applied "
                          f"{row['own_edit_applied']} (redrawn {row['redraws']}), own check passed "
                          f"{row['own_check_passed']}, offered edit passes {row['offered_edit_passes']}, "
                          f"{row['wall_s']} s", flush=True)
            finally:
                subprocess.run([sys.executable, "-m", "contenox", "node", "stop"], env=env, capture_output=True,
                               timeout=120, check=False)
                shutil.rmtree(runtime, ignore_errors=True)
    report = {"model": ns.model, "date": date.today().isoformat(),
              "machine": host_facts(),
              "summary": _summary(rows), "runs": rows}
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{date.today().isoformat()}-edits-{ns.model}.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for key, figures in report["summary"].items():
        print(f"[bench edits] {key}: {figures}")
    print(f"[bench edits] wrote {target}")
    return 0
