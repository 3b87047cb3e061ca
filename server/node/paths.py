"""Where the node lives on disk: its private socket directory, lock files, workspace roots."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from contenox.config import Config
from contenox.errors import NodeUnavailable

__all__ = [
    "daemon_lock_path",
    "ensure_private_dir",
    "socket_dir",
    "socket_path",
    "spawn_lock_path",
    "workspace_dir",
    "workspace_key",
    "workspace_root",
    "workspaces_dir",
]

_MAX_SUN_PATH = 107


def socket_dir(config: Config) -> Path:
    """``node.socket_dir``, else ``$XDG_RUNTIME_DIR/contenox``, else ``/tmp/contenox-$UID``."""
    if config.node.socket_dir:
        return Path(config.node.socket_dir).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "contenox"
    return Path(f"/tmp/contenox-{os.getuid()}")


def socket_path(config: Config) -> Path:
    path = socket_dir(config) / "node.sock"
    if len(os.fsencode(path)) > _MAX_SUN_PATH:
        raise NodeUnavailable(f"socket path too long for a Unix socket ({len(str(path))} bytes): {path}; "
                              "set node.socket_dir to a shorter directory", path=str(path))
    return path


def spawn_lock_path(config: Config) -> Path:
    """Held by a client while it starts the daemon and waits for its socket."""
    return socket_dir(config) / "spawn.lock"


def daemon_lock_path(config: Config) -> Path:
    """Held by the running daemon for its whole life: the single-instance guarantee."""
    return socket_dir(config) / "node.lock"


def build_path(config: Config) -> Path:
    """The running daemon's build (``{"pid": ..., "build": ...}``), written once it holds the lock."""
    return socket_dir(config) / "node.build"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` with mode 0700 (or tighten it); refuse one owned by another user."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise NodeUnavailable(f"{path} exists and is not a directory", path=str(path))
    if info.st_uid != os.getuid():
        raise NodeUnavailable(f"{path} belongs to uid {info.st_uid}, not to this user", path=str(path))
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def workspace_root(cwd: str | Path) -> Path:
    """The git work tree containing ``cwd`` (a ``.git`` dir or file), else ``cwd`` itself, resolved."""
    start = Path(cwd).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def workspace_key(root: Path) -> str:
    """A stable directory name for a workspace root: readable slug plus a hash of the full path."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:40] or "root"
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
    return f"{slug}-{digest}"


def workspaces_dir(config: Config) -> Path:
    """Where each workspace's planner state lives (its journal, index, scratch copy), one folder per key."""
    return config.state_dir / "workspaces"


def workspace_dir(config: Config, key: str) -> Path:
    """The workspace's folder (``key``: :func:`workspace_key`): ``journal``, ``index/``, ``scratch/``."""
    return workspaces_dir(config) / key
