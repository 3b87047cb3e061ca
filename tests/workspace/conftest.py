"""Fixture repositories made with real git, and a workspace opener with its own tags cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.config import WorkspaceConfig
from contenox.workspace import Workspace
from support import gitrepo
from support.wsrepo import APP_FILES


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A git repository with ``files`` committed (the app fixture by default)."""

    def make(files: dict[str, str | bytes] | None = None, name: str = "repo", commit: bool = True) -> Path:
        return gitrepo.make_repo(tmp_path / name, APP_FILES if files is None else files, commit=commit,
                                 message="initial")

    return make


@pytest.fixture
def open_ws(tmp_path: Path) -> Callable[..., Workspace]:
    """Open a workspace with a per-test tags cache (``cache=None``: memory only)."""
    counter = iter(range(1000))

    def open_(root: Path, cache: Path | str | None = "auto", **config: int) -> Workspace:
        cache_dir = tmp_path / f"cache-{next(counter)}" if cache == "auto" else cache
        return Workspace.open(root, WorkspaceConfig(**config), cache_dir)

    return open_
