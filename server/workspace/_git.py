"""Git state of a workspace through pygit2: HEAD, the index, ignore rules and the diff against HEAD.

Every pygit2 error is translated here (``RepositoryError``); callers see plain data.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import msgspec
import pygit2

from contenox.errors import RepositoryError
from contenox.workspace._model import DiffFile, DiffHunk

__all__ = ["GitRepo", "GitSnapshot", "open_repo"]

log = logging.getLogger(__name__)

MAX_DIFF_CHARS = 2_000_000
_SUBMODULE_MODE = 0o160000


class GitSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    head: str | None
    branch: str | None
    detached: bool
    empty: bool
    index: dict[str, str]
    """Workspace-relative path -> staged blob id."""
    submodules: tuple[str, ...]


def open_repo(root: Path) -> GitRepo | None:
    """The repository containing ``root``, or None when ``root`` is not inside one."""
    try:
        found = pygit2.discover_repository(str(root))
    except pygit2.GitError as exc:
        log.warning("git discovery failed for %s: %s", root, exc)
        return None
    if found is None:
        return None
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise RepositoryError(f"cannot open the git repository at {found}: {exc}", path=str(root)) from exc
    if repo.is_bare or repo.workdir is None:
        return None
    git = GitRepo(repo, root)
    if git.prefix and repo.path_is_ignored(git.prefix):
        return None  # the root lies in an ignored folder of an enclosing repository: not versioned here
    return git


class GitRepo:
    def __init__(self, repo: pygit2.Repository, root: Path) -> None:
        self.repo = repo
        self.workdir = Path(repo.workdir).resolve()
        prefix = root.relative_to(self.workdir).as_posix()
        self.prefix = "" if prefix == "." else prefix + "/"
        self._index_sig: tuple[int, int, int] | None = None
        self._index: dict[str, str] = {}
        self._submodules: tuple[str, ...] = ()

    @property
    def git_dir(self) -> Path:
        return Path(self.repo.path)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        try:
            return bool(self.repo.path_is_ignored(self.prefix + rel + ("/" if is_dir else "")))
        except pygit2.GitError:
            return False

    def _read_index(self) -> None:
        path = self.git_dir / "index"
        try:
            st = os.stat(path)
            sig = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            sig = (0, 0, 0)
        if sig == self._index_sig:
            return
        try:
            index = self.repo.index
            index.read(force=True)
            entries: dict[str, str] = {}
            submodules: list[str] = []
            plen = len(self.prefix)
            for entry in index:
                if not entry.path.startswith(self.prefix):
                    continue
                rel = entry.path[plen:]
                if entry.mode == _SUBMODULE_MODE:
                    submodules.append(rel)
                else:
                    entries[rel] = str(entry.id)
        except pygit2.GitError as exc:
            raise RepositoryError(f"cannot read the git index: {exc}", path=str(path)) from exc
        self._index_sig = sig
        self._index = entries
        self._submodules = tuple(sorted(submodules))

    def snapshot(self) -> GitSnapshot:
        """HEAD and the index now (the index is re-read only when its file changed)."""
        self._read_index()
        repo = self.repo
        try:
            empty = repo.head_is_unborn
            head = None if empty else str(repo.head.target)
            detached = False if empty else repo.head_is_detached
            if detached:
                branch = None
            elif empty:
                ref = repo.lookup_reference("HEAD").target
                branch = str(ref).removeprefix("refs/heads/")
            else:
                branch = repo.head.shorthand
        except pygit2.GitError as exc:
            raise RepositoryError(f"cannot read HEAD: {exc}", path=str(self.workdir)) from exc
        return GitSnapshot(head=head, branch=branch, detached=detached, empty=empty, index=self._index,
                           submodules=self._submodules)

    def _diff(self) -> pygit2.Diff:
        repo = self.repo
        flags = (pygit2.enums.DiffOption.INCLUDE_UNTRACKED | pygit2.enums.DiffOption.RECURSE_UNTRACKED_DIRS
                 | pygit2.enums.DiffOption.SHOW_UNTRACKED_CONTENT)
        if repo.head_is_unborn:
            tree = repo.get(repo.TreeBuilder().write())
        else:
            tree = repo.head.peel(pygit2.Tree)
        assert isinstance(tree, pygit2.Tree)
        # tree -> working tree (untracked content included): what `git diff HEAD` shows plus new files
        return tree.diff_to_workdir(flags=flags)

    def diff_files(self) -> list[DiffFile]:
        """Files and hunks of the working tree against HEAD."""
        statuses = {pygit2.enums.DeltaStatus.ADDED: "added", pygit2.enums.DeltaStatus.DELETED: "deleted",
                    pygit2.enums.DeltaStatus.MODIFIED: "modified", pygit2.enums.DeltaStatus.RENAMED: "renamed",
                    pygit2.enums.DeltaStatus.UNTRACKED: "untracked",
                    pygit2.enums.DeltaStatus.TYPECHANGE: "typechange"}
        plen = len(self.prefix)
        files: list[DiffFile] = []
        try:
            for patch in self._diff():
                if patch is None:
                    continue
                delta = patch.delta
                path = delta.new_file.path or delta.old_file.path
                if not path.startswith(self.prefix) or delta.new_file.mode == _SUBMODULE_MODE:
                    continue
                _, additions, deletions = patch.line_stats
                files.append(DiffFile(
                    path=path[plen:], old_path=(delta.old_file.path or path)[plen:],
                    status=statuses.get(delta.status, "other"),  # type: ignore[arg-type]
                    binary=bool(delta.is_binary), additions=additions, deletions=deletions,
                    hunks=tuple(DiffHunk(old_start=h.old_start, old_lines=h.old_lines, new_start=h.new_start,
                                         new_lines=h.new_lines, header=h.header.rstrip("\n"))
                                for h in patch.hunks)))
        except pygit2.GitError as exc:
            raise RepositoryError(f"cannot diff against HEAD: {exc}", path=str(self.workdir)) from exc
        return sorted(files, key=lambda f: f.path)

    def diff_text(self) -> str:
        """Unified diff of the working tree (staged or not, untracked files included) against HEAD."""
        try:
            diff = self._diff()
            parts: list[str] = []
            size = 0
            for patch in diff:
                if patch is None:
                    continue
                delta = patch.delta
                path = delta.new_file.path or delta.old_file.path
                if not path.startswith(self.prefix) or delta.new_file.mode == _SUBMODULE_MODE:
                    continue
                text = patch.text or ""
                size += len(text)
                if size > MAX_DIFF_CHARS:
                    parts.append(f"... diff truncated at {MAX_DIFF_CHARS} characters\n")
                    break
                parts.append(text)
        except pygit2.GitError as exc:
            raise RepositoryError(f"cannot diff against HEAD: {exc}", path=str(self.workdir)) from exc
        return "".join(parts)
