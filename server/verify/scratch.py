"""A scratch copy of a workspace where candidate edits are applied and checked; the user's files are never
touched.

The copy is HEAD's tree checked out through a private index (``git read-tree`` + ``checkout-index`` into a
folder under the node's state), with the working tree's uncommitted changes (staged, unstaged, untracked
and not ignored) and the editors' unsaved buffers laid over it. Nothing is registered in the repository (no
``git worktree`` entry, no ref, no index change), so a node killed mid-check leaves nothing there; the
folder itself is swept when the node starts. Each candidate's edits are applied over the base and taken back
before the next one. A workspace outside git is copied file by file (bounded).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from contenox.answer.edits import apply_edit
from contenox.errors import StaleEdit, VerifyError

__all__ = ["EditLike", "ScratchTree", "python_env"]

log = logging.getLogger(__name__)

_LINKED = (".venv", "venv", "node_modules")
"""Ignored top-level folders the check command needs as they are (an environment, installed packages):
linked into the copy, never copied."""
_MAX_COPY_FILES = 20_000
_MAX_FILE_BYTES = 5_000_000


class EditLike(msgspec.Struct, frozen=True, kw_only=True):
    """One file's change as verification needs it: the text it was made from and the text after."""

    path: str
    old_text: str | None
    new_text: str | None


def _git(root: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=dict(env) if env else None,
                          check=False, timeout=120)


class ScratchTree:
    """``folder`` holds the copy of ``root``; build it with :meth:`build`, lay edits with :meth:`apply`."""

    def __init__(self, root: Path, folder: Path) -> None:
        self.root = root
        self.folder = folder
        self.tree = folder / "tree"
        self._applied: list[EditLike] = []

    def build(self, overlays: Mapping[str, str] | None = None) -> None:
        """(Re)build the copy: HEAD, the uncommitted changes, then ``overlays`` (root-relative path -> text)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self.tree.mkdir(parents=True)
        self._applied = []
        if (self.root / ".git").exists() and _git(self.root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
            self._from_git()
        else:
            self._copy(self._walk())
        for name in _LINKED:
            source = self.root / name
            if source.is_dir() and not (self.tree / name).exists():
                (self.tree / name).symlink_to(source, target_is_directory=True)
        for rel, text in (overlays or {}).items():
            self._write(rel, text)

    def _from_git(self) -> None:
        env = os.environ | {"GIT_INDEX_FILE": str(self.folder / "index")}
        for args in (("read-tree", "HEAD"), ("--work-tree", str(self.tree), "checkout-index", "-a", "-f")):
            done = _git(self.root, *args, env=env)
            if done.returncode != 0:
                raise VerifyError(f"cannot check out HEAD of {self.root} into the scratch copy: "
                                   f"{done.stderr.decode(errors='replace').strip()}")
        changed = _git(self.root, "diff", "--name-only", "-z", "--no-renames", "HEAD")
        untracked = _git(self.root, "ls-files", "-z", "-o", "--exclude-standard")
        paths = [p for out in (changed.stdout, untracked.stdout) for p in out.decode(errors="surrogateescape")
                 .split("\0") if p]
        self._copy(paths)

    def _walk(self) -> list[str]:
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", *_LINKED, "__pycache__")
                                 and not d.startswith(".cache"))
            for name in sorted(filenames):
                found.append(os.path.relpath(os.path.join(dirpath, name), self.root))
                if len(found) >= _MAX_COPY_FILES:
                    log.warning("scratch copy of %s stopped at %d files", self.root, _MAX_COPY_FILES)
                    return found
        return found

    def _copy(self, paths: Iterable[str]) -> None:
        for rel in paths:
            if "__pycache__" in rel.split("/") or rel.endswith(".pyc"):
                continue  # compiled from the user's text: stale for an edit of the same size and second
            source, target = self.root / rel, self.tree / rel
            if not source.exists() and not source.is_symlink():  # deleted in the working tree
                target.unlink(missing_ok=True)
                continue
            if source.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.unlink(missing_ok=True)
                target.symlink_to(os.readlink(source))
            elif source.is_file() and source.stat().st_size <= _MAX_FILE_BYTES:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)

    def _inside(self, rel: str) -> Path:
        target = (self.tree / rel).resolve()
        if not target.is_relative_to(self.tree.resolve()):
            raise VerifyError(f"{rel} is outside the workspace")
        return target

    def _write(self, rel: str, text: str | None) -> None:
        target = self._inside(rel)
        if text is None:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def add(self, rel: str, text: str | None) -> None:
        """Write (None: delete) a file of the base: kept across candidates (a test the node runs, not an edit)."""
        self._write(rel, text)

    def read(self, rel: str) -> str | None:
        try:
            return self._inside(rel).read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return None

    def apply(self, edits: Iterable[EditLike]) -> str | None:
        """Lay ``edits`` over the base (the previous candidate's are taken back first); None, or why they do
        not apply (a file that no longer holds the text the edit was made from)."""
        self.reset()
        edits = list(edits)
        for edit in edits:
            try:
                text = apply_edit(edit, self.read(edit.path))
            except StaleEdit:
                self.reset()
                return f"{edit.path} does not hold the text the edit was made from"
            self._write(edit.path, text)
            self._applied.append(edit)
        return None

    def reset(self) -> None:
        """Take back the applied edits: the copy is the base again."""
        for edit in reversed(self._applied):
            self._write(edit.path, edit.old_text)
        self._applied = []

    def remove(self) -> None:
        """The copy gone. ``rmtree`` that ignores errors can leave the folder when something still writes in it
        (a cancelled turn's check process not yet ended): tried again a few times. (A cancelled turn's test found
        the folder left once on a loaded machine; the cause was not pinned down.)"""
        for attempt in range(5):
            shutil.rmtree(self.folder, ignore_errors=True)
            if not self.folder.exists():
                return
            time.sleep(0.2 * (attempt + 1))


def python_env(tree: Path, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a check in ``tree``: the copy's ``src/`` and root first on ``PYTHONPATH`` (ahead of an
    editable install's path to the user's tree), no bytecode written (a candidate's file can have the size and
    second of the one before it)."""
    first = [str(tree / "src")] if (tree / "src").is_dir() else []
    first.append(str(tree))
    rest = [p if os.path.isabs(p) else str(tree / p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**env, "PYTHONPATH": os.pathsep.join(dict.fromkeys([*first, *rest])), "PYTHONDONTWRITEBYTECODE": "1"}
