"""Fixtures for node tests: a private runtime dir (short, for the socket path), a config, a real node."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import Config
from support.nodekit import RawConnection, kill_node, write_config


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short XDG_RUNTIME_DIR (Unix socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def node_config(home: Path, runtime_dir: Path) -> Iterator[Config]:
    """A CONTENOX_HOME with the real model and small turns; the node started from it is killed at the end."""
    config = write_config(home, "[engine]\nmax_new_tokens = 8\ncache_size_gb = 0.5\n\n[node]\nidle_exit_s = 600\n")
    yield config
    kill_node(config)


@pytest.fixture
def raw(node_config: Config) -> Iterator[RawConnection]:
    conn = RawConnection(node_config)
    yield conn
    conn.close()


