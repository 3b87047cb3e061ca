"""Shared by the end-to-end tests: a real git workspace, a node home with small turns, node teardown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from contenox.config import Config, load_config
from contenox.node.paths import daemon_lock_path
from contenox.runtime_ov.store import InstalledModel
from support import gitrepo
from support.node_cleanup import terminate_pid

PYTHON = sys.executable
CONFIG = "[model]\ndefault = \"smollm2-135m\"\n\n[engine]\nmax_new_tokens = 6\ncache_size_gb = 0.5\n\n[node]\nidle_exit_s = 120\n"


def make_repo(root: Path) -> Path:
    """The end-to-end workspace: the tiny two-file app, committed."""
    return gitrepo.make_repo(root, gitrepo.TINY_APP)


class NodeHome:
    """A CONTENOX_HOME with the real model and 6-token answers plus a short private XDG_RUNTIME_DIR, handed
    to the client subprocesses through ``env`` (this process's environment is left alone)."""

    def __init__(self, home: Path, runtime: Path) -> None:
        self.home = home
        self.runtime = runtime
        self.config: Config = load_config(home)
        self.env = dict(os.environ, CONTENOX_HOME=str(home), XDG_RUNTIME_DIR=str(runtime))

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "contenox", *args], env=self.env, capture_output=True, text=True,
                              timeout=120, check=False)

    def queue(self) -> dict[str, Any]:
        """``contenox node status --json``'s turn queue."""
        done = self.cli("node", "status", "--json")
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout)["queue"])

    def node_pid(self) -> int | None:
        """The running node's pid, from the lock file in this home's runtime dir (None: none runs)."""
        try:
            text = (self.runtime / "contenox" / daemon_lock_path(self.config).name).read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text else None

    def stop(self) -> None:
        """``contenox node stop``, then SIGTERM/SIGKILL by the lock file's pid if the node is still there."""
        self.cli("node", "stop")
        try:
            text = (self.runtime / "contenox" / daemon_lock_path(self.config).name).read_text().strip()
        except FileNotFoundError:
            return
        if not text:
            return
        pid = int(text)
        terminate_pid(pid)


_shared: dict[str, Any] = {}


@pytest.fixture(scope="session")
def node_home(default_model: InstalledModel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeHome]:
    """One node for all end-to-end tests (starting it is most of an end-to-end test's time); stopped at the end.

    tests/lsp and tests/acp each register this fixture; the node is shared and stopped by the last user.
    """
    if not _shared:
        home = tmp_path_factory.mktemp("contenox-home")
        (home / "models").mkdir()
        (home / "models" / default_model.name).symlink_to(default_model.path, target_is_directory=True)
        (home / "config.toml").write_text(CONFIG, encoding="utf-8")
        _shared.update(node=NodeHome(home, Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))), users=0)
    _shared["users"] += 1
    node: NodeHome = _shared["node"]
    try:
        yield node
    finally:
        _shared["users"] -= 1
        if not _shared["users"]:
            node.stop()
            shutil.rmtree(node.runtime, ignore_errors=True)
            _shared.clear()


@contextmanager
def private_home(root: Path, model: str, weights: Path, config: str,
                 without: tuple[str, ...] = ()) -> Iterator[NodeHome]:
    """A node home at ``root`` with ``model`` linked from ``weights`` (each file but those named in
    ``without``, when given) and ``config`` as its config.toml, and a private runtime dir; its node is stopped
    and the runtime dir removed at the end."""
    (root / "models").mkdir(parents=True)
    if without:
        (root / "models" / model).mkdir()
        for item in weights.iterdir():
            if item.name not in without:
                (root / "models" / model / item.name).symlink_to(item)
    else:
        (root / "models" / model).symlink_to(weights, target_is_directory=True)
    (root / "config.toml").write_text(config, encoding="utf-8")
    node = NodeHome(root, Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp")))
    try:
        yield node
    finally:
        node.stop()
        shutil.rmtree(node.runtime, ignore_errors=True)
