"""Per-file state and the classification of file content (binary, UTF-8 or not)."""

from __future__ import annotations

import msgspec
import pygit2

from contenox.workspace._files import FileSig
from contenox.workspace._model import Definition, FileTags

__all__ = ["INSTRUCTION_FILES", "FileState", "blob_id", "is_binary", "is_utf8", "map_signature"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "CONTRIBUTING.md",
                     ".cursorrules")


class FileState(msgspec.Struct, kw_only=True):
    sig: FileSig | None
    """Disk signature the content came from; None when it came from an editor overlay."""
    blob: str
    language: str | None
    binary: bool
    utf8: bool
    tags: FileTags | None


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (content identity, same as ``git hash-object``)."""
    return str(pygit2.hash(data))


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def map_signature(tags: FileTags | None) -> tuple[tuple[tuple[str, str, str], ...],
                                                   tuple[tuple[str, int], ...]]:
    """What of a file's tags the repo map depends on (not line numbers)."""
    if tags is None:
        return (), ()
    defs: tuple[Definition, ...] = tags.defs
    return tuple((d.name, d.kind, d.text) for d in defs), tags.refs
