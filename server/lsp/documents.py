"""Where a request points: the workspace root for a URI, file paths, selected text, request params."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from contenox.errors import InvalidRequest, PathOutsideWorkspace
from contenox.node.files import read_text_file

__all__ = ["Span", "document", "file_path", "opened", "param_str", "parse_range", "root_for", "selection", "uri_of"]

Span = tuple[int, int, int, int]
"""(start line, start character, end line, end character), zero-based as in LSP."""


def file_path(uri: str) -> str:
    path = to_fs_path(uri)
    if not path:
        raise InvalidRequest(f"not a file URI: {uri!r}", uri=uri)
    return os.path.abspath(path)


def uri_of(path: str) -> str:
    return from_fs_path(path) or path


def _folders(ls: LanguageServer) -> list[str]:
    folders = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    roots = [os.path.abspath(p) for p in folders if p]
    if ls.workspace.root_path:
        roots.append(os.path.abspath(ls.workspace.root_path))
    return roots


def root_for(ls: LanguageServer, uri: str | None) -> str:
    """The editor's workspace folder holding ``uri`` (the node resolves the repository root from it).

    Requests are scoped to the client's workspace folders: a document outside them (``/etc/passwd``, a file
    in the home directory) is refused, so nothing outside what the editor opened is indexed or pinned.
    """
    folders = _folders(ls)
    if uri:
        path = Path(file_path(uri))
        inside = [f for f in folders if path.is_relative_to(f)]
        if inside:
            return max(inside, key=len)
        raise PathOutsideWorkspace(
            f"{path} is outside the editor's workspace folders" if folders else
            f"{path}: open a folder to use Contenox (no workspace folder is open)", path=str(path))
    if folders:
        return folders[0]
    raise InvalidRequest("no workspace folder is open and no document was given")


def param_str(params: Any, key: str, *, required: bool = True) -> str | None:
    value = params.get(key) if isinstance(params, dict) else None
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise InvalidRequest(f"parameter {key!r} must be a non-empty string", param=key)
    return value


def parse_range(value: Any) -> Span:
    try:
        start, end = value["start"], value["end"]
        span = (int(start["line"]), int(start["character"]), int(end["line"]), int(end["character"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidRequest(f"invalid range: {value!r}", param="range") from exc
    if min(span) < 0:
        raise InvalidRequest(f"invalid range: {value!r}", param="range")
    return span


def opened(ls: LanguageServer, uri: str) -> TextDocument | None:
    """The editor's buffer of ``uri``; None when the editor has not opened it."""
    found: TextDocument | None = ls.workspace.text_documents.get(unquote(uri))
    return found


async def document(ls: LanguageServer, uri: str, max_bytes: int) -> TextDocument:
    """The editor's buffer of ``uri``, else the file as it is on disk, read off the event loop: a regular file
    of at most ``max_bytes`` (WorkspaceError otherwise: a FIFO, a device, a huge file are never read on the
    loop, nor whole). pygls' own fallback reads any file whole on the loop, so handlers never use it."""
    buffer = opened(ls, uri)
    if buffer is not None:
        return buffer
    text = await asyncio.to_thread(read_text_file, Path(file_path(uri)), max_bytes)
    return TextDocument(uri, source=text, position_codec=ls.workspace.position_codec)


def selection(doc: TextDocument, span: Span) -> str:
    """The text in ``span`` of ``doc`` (see :func:`document`)."""
    lines = doc.lines
    l0, c0, l1, c1 = span
    if l0 >= len(lines):
        return ""
    if l0 == l1:
        return lines[l0][c0:c1]
    picked = [lines[l0][c0:], *lines[l0 + 1:l1]]
    if l1 < len(lines):
        picked.append(lines[l1][:c1])
    return "".join(picked)
