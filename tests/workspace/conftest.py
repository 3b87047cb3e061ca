"""Fixture repositories made with real git, and a workspace opener with its own tags cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from wsrepo import APP_FILES, git, write

from contenox.config import WorkspaceConfig
from contenox.workspace import Workspace


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A git repository with ``files`` committed (the app fixture by default)."""

    def make(files: dict[str, str | bytes] | None = None, name: str = "repo", commit: bool = True) -> Path:
        root = tmp_path / name
        root.mkdir()
        git(root, "init", "-q")
        for rel, text in (APP_FILES if files is None else files).items():
            write(root, rel, text)
        if commit:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "initial")
        return root

    return make


@pytest.fixture
def open_ws(tmp_path: Path) -> Callable[..., Workspace]:
    """Open a workspace with a per-test tags cache (``cache=None``: memory only)."""
    counter = iter(range(1000))

    def open_(root: Path, cache: Path | str | None = "auto", **config: int) -> Workspace:
        cache_dir = tmp_path / f"cache-{next(counter)}" if cache == "auto" else cache
        return Workspace.open(root, WorkspaceConfig(**config), cache_dir)

    return open_
