"""What ``contenox ask`` shows: on a terminal (a real pseudo-terminal) a spinner naming the step, then the answer
rendered as it streams and a one-line cache summary; piped, plain text; ``--explain``, the segment table."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contenox.config import Config
from support.gitrepo import TINY_APP, make_repo

pytestmark = pytest.mark.slow

_SUMMARY = re.compile(r"\d+% cached · \d+ of \d+ prompt tokens( · first token [\d.]+ s)? · turn \d+")


def _on_a_terminal(args: list[str], cwd: Path) -> str:
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "contenox", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=child, stderr=child, env=dict(os.environ, COLUMNS="100", TERM="xterm"))
    os.close(child)
    out = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    proc.wait(30)
    os.close(main)
    assert proc.returncode == 0, out
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode(errors="replace"))


def test_ask_on_a_terminal_piped_and_with_explain(node_config: Config, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TINY_APP)
    shown = _on_a_terminal(["ask", "What does helper return?"], repo)
    assert "reading the context" in shown or "indexing the workspace" in shown  # the spinner named the step
    assert _SUMMARY.search(shown) and "`contenox explain-context` for the segments" in shown
    assert "repo_map" not in shown  # no table by default

    piped = subprocess.run([sys.executable, "-m", "contenox", "ask", "And run?"], cwd=repo, capture_output=True,
                           text=True, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert "\x1b[" not in piped.stdout and "reading the context" not in piped.stdout  # plain text when piped
    assert _SUMMARY.search(piped.stdout.splitlines()[-1])

    table = subprocess.run([sys.executable, "-m", "contenox", "ask", "--explain", "Where is main?"], cwd=repo,
                           capture_output=True, text=True, timeout=300)
    assert table.returncode == 0, table.stderr
    assert "repo_map" in table.stdout and "hit" in table.stdout and not _SUMMARY.search(table.stdout)
