"""Reading a file a request names from disk: regular files only, within the size cap pins use.

An editor request on a file it has not opened (hover, inline completion, "Explain selection") reads the file
from disk. A FIFO would block the read until someone writes to it, a device such as ``/dev/zero`` (or a symlink
to one) never ends, a huge file takes seconds: so the type is checked before anything is opened, the file is
opened without waiting for a writer and checked again on the open descriptor (it may have been swapped), and
no more than the cap is read. Blocking: callers on the event loop run it with ``asyncio.to_thread``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from contenox.errors import WorkspaceError

__all__ = ["read_text_file"]

_BINARY_PROBE = 8192


def _refuse_kind(name: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise WorkspaceError(f"{name} is a directory, not a file", path=name, reason="directory")
    if not stat.S_ISREG(mode):
        raise WorkspaceError(f"{name} is not a regular file (a FIFO, socket or device); not read", path=name,
                             reason="special")


def _refuse_size(name: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise WorkspaceError(f"{name} is {size} bytes, over the workspace.max_file_bytes cap of {max_bytes}; "
                             "not read", path=name, reason="too_large", size=size, max_bytes=max_bytes)


def read_text_file(path: Path, max_bytes: int) -> str:
    """The UTF-8 text of the regular file at ``path`` (symlinks followed) of at most ``max_bytes`` bytes;
    :class:`WorkspaceError` (``reason``: not_found, directory, special, too_large, unreadable, binary, non_utf8)
    for anything else."""
    name = str(path)
    try:
        info = os.stat(path)
        _refuse_kind(name, info.st_mode)
        _refuse_size(name, info.st_size, max_bytes)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO swapped in: no wait for a writer
    except FileNotFoundError as exc:
        raise WorkspaceError(f"{name} does not exist", path=name, reason="not_found") from exc
    except OSError as exc:
        raise WorkspaceError(f"cannot read {name}: {exc.strerror or exc}", path=name, reason="unreadable") from exc
    try:
        info = os.fstat(fd)
        _refuse_kind(name, info.st_mode)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes and (chunk := os.read(fd, min(1 << 20, max_bytes + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        _refuse_size(name, size, max_bytes)  # grew since the stat
    except OSError as exc:
        raise WorkspaceError(f"cannot read {name}: {exc.strerror or exc}", path=name, reason="unreadable") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\0" in data[:_BINARY_PROBE]:
        raise WorkspaceError(f"{name} is a binary file", path=name, reason="binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{name} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset "
                             f"{exc.start})", path=name, reason="non_utf8") from exc
