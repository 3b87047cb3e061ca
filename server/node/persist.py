"""Small durable files the node and its adapters keep under ``$CONTENOX_HOME/state``.

Writes are atomic (temp file, fsync, rename) so a node killed mid-write leaves the previous version;
reads of a missing or unreadable file give ``None`` (logged), never an exception: state is a cache of
sessions, and a corrupt record must not stop the node.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TypeVar

import msgspec

from contenox.processes import pid_alive

__all__ = ["read_json", "sweep_temp_files", "tighten_modes", "write_atomic"]

log = logging.getLogger(__name__)

T = TypeVar("T")


def read_json(path: Path, type_: type[T]) -> T | None:
    """The decoded file, or None when it is missing or unreadable."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=type_)
    except FileNotFoundError:
        return None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        log.warning("ignoring unreadable %s: %s", path, exc)
        return None


def write_atomic(path: Path, data: bytes, *, keep_mode: bool = False) -> None:
    """Replace ``path`` with ``data`` all at once (durable before the rename). ``keep_mode``: a user's file
    keeps its permissions (a new one gets 0644), where state files get the process's default."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = (path.stat().st_mode & 0o777 if path.exists() else 0o644) if keep_mode else None
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sweep_temp_files(state_dir: Path, *, recursive: bool = True) -> list[Path]:
    """Remove the temp files of writers killed between write and rename (``.NAME.PID.tmp`` whose PID is
    gone) in ``state_dir`` (and its subfolders when ``recursive``); the previous version of each file is intact.
    The files removed."""
    removed: list[Path] = []
    for tmp in (state_dir.rglob if recursive else state_dir.glob)(".*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if not pid.isdigit() or int(pid) == os.getpid() or pid_alive(int(pid)):
            continue
        try:
            tmp.unlink()
        except OSError as exc:
            log.warning("cannot remove %s: %s", tmp, exc)
            continue
        log.warning("removed %s, left by a writer that was killed mid-write (the file it replaced is intact)", tmp)
        removed.append(tmp)
    return removed


def tighten_modes(root: Path) -> list[Path]:
    """Take group and other access away from everything under ``root`` (files 0600, folders 0700; symlinks are
    left alone, never followed). An earlier version created transcripts, sessions and logs 0644 in 0755
    folders, and appending to them keeps that mode. The paths changed."""
    changed: list[Path] = []

    def tighten(path: Path) -> None:
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) or not mode & 0o077:
                return
            os.chmod(path, stat.S_IMODE(mode) & 0o700, follow_symlinks=False)
        except NotImplementedError:  # no lchmod here: the link check above already skipped symlinks
            os.chmod(path, stat.S_IMODE(mode) & 0o700)
        except OSError as exc:
            log.warning("cannot make %s private: %s", path, exc)
            return
        log.debug("made %s private (was %03o)", path, stat.S_IMODE(mode))
        changed.append(path)

    if not root.is_dir() or root.is_symlink():
        return changed
    tighten(root)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            tighten(Path(folder, name))
    return changed
