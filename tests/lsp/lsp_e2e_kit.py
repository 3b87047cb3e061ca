"""Shared by the end-to-end tests: a real git workspace, a node home with small turns, node teardown."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import Config, load_config
from contenox.node.paths import daemon_lock_path
from contenox.runtime_ov.store import InstalledModel

PYTHON = sys.executable
CONFIG = "[engine]\nmax_new_tokens = 6\ncache_size_gb = 0.5\n\n[node]\nidle_exit_s = 600\n"


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "util.py").write_text("def helper(x):\n    \"\"\"Add one.\"\"\"\n    return x + 1\n")
    (root / "main.py").write_text("from util import helper\n\n\ndef run():\n    return helper(41)\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


def _node_pid(config: Config) -> int | None:
    try:
        text = daemon_lock_path(config).read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def stop_node(config: Config) -> None:
    """``contenox node stop``, then SIGTERM/SIGKILL by the lock file's pid if the node is still there."""
    subprocess.run([PYTHON, "-m", "contenox", "node", "stop"], env=dict(os.environ, CONTENOX_HOME=config.home),
                   capture_output=True, timeout=60, check=False)
    pid = _node_pid(config)
    if pid is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


@pytest.fixture(scope="module")
def node_home(default_model: InstalledModel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Config]:
    """One node per test module (starting it is most of an end-to-end test's time): a CONTENOX_HOME with the
    real model and 6-token answers, a short private XDG_RUNTIME_DIR; the node is stopped at the end."""
    home = tmp_path_factory.mktemp("contenox-home")
    (home / "models").mkdir()
    (home / "models" / default_model.name).symlink_to(default_model.path, target_is_directory=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    runtime = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONTENOX_HOME", str(home))
        patch.setenv("XDG_RUNTIME_DIR", str(runtime))
        config = load_config(home)
        try:
            yield config
        finally:
            stop_node(config)
            shutil.rmtree(runtime, ignore_errors=True)
