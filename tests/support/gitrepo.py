"""Real git repositories for tests: run git with a fixed identity and dates, write files, make a repo."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}

TINY_APP = {
    "util.py": 'def helper(x):\n    """Add one."""\n    return x + 1\n',
    "main.py": "from util import helper\n\n\ndef run():\n    return helper(41)\n",
}
"""Two Python files, one calling the other: the end-to-end tests' workspace."""


def git(repo: Path, *args: str) -> str:
    """Run ``git *args`` in ``repo`` (no user or system config; branch ``main``); its stdout."""
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
                          cwd=repo, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_repo(root: Path, files: Mapping[str, str | bytes], *, commit: bool = True,
              message: str = "init") -> Path:
    """A new git repository at ``root`` holding ``files``, committed unless ``commit`` is false."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        write(root, rel, text)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
    return root
