"""Which files the workspace holds: a walk of the root that honours .gitignore and reports what it skips.

Symlinks are never followed out of the root nor into directories; nested repositories (submodules) are
not entered; special files and files over the size cap are reported, not read.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable
from pathlib import Path

import msgspec
import pathspec

from contenox.workspace._model import SkippedFile

__all__ = ["FileSig", "Scan", "gitignore_matcher", "scan", "stat_file"]

IgnoreFn = Callable[[str, bool], bool]
"""(relative path, is_dir) -> ignored."""


class FileSig(msgspec.Struct, frozen=True, array_like=True):
    """Cheap identity of a file on disk; content is re-hashed only when this changes."""

    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int


class Scan(msgspec.Struct, kw_only=True):
    files: dict[str, FileSig]
    skipped: list[SkippedFile]


def gitignore_matcher(root: Path) -> IgnoreFn:
    """A matcher for folders that are not git repositories: every ``.gitignore`` under the root applies to
    its own directory, like git."""
    specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def spec_for(directory: str) -> pathspec.GitIgnoreSpec | None:
        if directory not in specs:
            try:
                lines = (root / directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
                specs[directory] = pathspec.GitIgnoreSpec.from_lines(lines.splitlines())
            except OSError:
                specs[directory] = None
        return specs[directory]

    def ignored(rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(len(parts)):
            spec = spec_for("/".join(parts[:depth]))
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
        return False

    return ignored


def _sig(st: os.stat_result) -> FileSig:
    return FileSig(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def stat_file(root: Path, rel: str, max_bytes: int) -> FileSig | SkippedFile | None:
    """Signature of one relative path, its skip reason, or None when it is gone (or not a file)."""
    path = root / rel
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return SkippedFile(path=rel, reason="unreadable", detail=str(exc))
    st = lst
    if stat.S_ISLNK(lst.st_mode):
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            return SkippedFile(path=rel, reason="unreadable", detail=f"broken symlink: {exc}")
        if not target.is_relative_to(root):
            return SkippedFile(path=rel, reason="symlink_outside", detail=str(target))
        st = os.stat(target)
        if stat.S_ISDIR(st.st_mode):
            return SkippedFile(path=rel, reason="symlink_dir", detail=str(target))
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return SkippedFile(path=rel, reason="special", detail=stat.filemode(st.st_mode))
    if st.st_size > max_bytes:
        return SkippedFile(path=rel, reason="too_large", detail=f"{st.st_size} bytes > {max_bytes}")
    return _sig(st)


def scan(root: Path, ignored: IgnoreFn, max_bytes: int, max_files: int | None = None) -> Scan:
    """Every workspace file under ``root`` with its signature, and what was skipped and why. With ``max_files``
    the walk (breadth first: files nearest the root first) stops at that many files and says so."""
    result = Scan(files={}, skipped=[])
    stack: deque[str] = deque([""])
    capped = False
    while stack and not capped:
        directory = stack.popleft()
        try:
            entries = list(os.scandir(root / directory if directory else root))
        except OSError as exc:
            result.skipped.append(SkippedFile(path=directory or ".", reason="unreadable", detail=str(exc)))
            continue
        if max_files is not None:
            entries.sort(key=lambda e: e.name)  # which files a capped walk keeps must not depend on the disk
        for entry in entries:
            if max_files is not None and len(result.files) >= max_files:
                capped = True
                break
            name = entry.name
            rel = f"{directory}/{name}" if directory else name
            if name == ".git":
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if ignored(rel, True):
                    continue
                if os.path.lexists(os.path.join(entry.path, ".git")):
                    result.skipped.append(SkippedFile(path=rel, reason="submodule",
                                                      detail="nested git repository"))
                    continue
                stack.append(rel)
                continue
            if ignored(rel, False):
                continue
            try:
                if entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_size <= max_bytes:
                        result.files[rel] = _sig(st)
                        continue
            except OSError:
                pass
            found = stat_file(root, rel, max_bytes)
            if isinstance(found, FileSig):
                result.files[rel] = found
            elif found is not None:
                result.skipped.append(found)
    if capped:
        result.skipped.append(SkippedFile(path=".", reason="file_cap", detail=(
            f"stopped after {max_files} files outside a git repository (workspace.max_files_outside_git)")))
    result.skipped.sort(key=lambda s: s.path)
    return result
