"""The scratch copy: HEAD, the uncommitted changes and unsaved buffers, edits laid and taken back; the user's
files and the repository untouched; imports resolve to the copy even with an editable install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from contenox.errors import VerifyError
from contenox.verify import EditLike, ScratchTree, python_env, run_check
from support.gitrepo import git, make_repo, write

PKG = {
    "src/calc/__init__.py": "",
    "src/calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    ".gitignore": "build/\n",
}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git/" not in str(p.relative_to(root)) + "/"
            and not str(p.relative_to(root)).startswith(".git/")}


def test_copy_holds_head_uncommitted_and_buffers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PKG)
    write(repo, "src/calc/ops.py", "def add(a, b):\n    return a - b  # edited, not committed\n")
    write(repo, "notes.txt", "untracked\n")
    write(repo, "build/out.bin", "ignored\n")
    git(repo, "rm", "-q", "tests/test_ops.py")
    scratch = ScratchTree(repo, tmp_path / "state" / "scratch")
    scratch.build({"src/calc/__init__.py": "VERSION = 'buffer'\n"})
    tree = scratch.tree
    assert (tree / "src/calc/ops.py").read_text().endswith("# edited, not committed\n")
    assert (tree / "notes.txt").read_text() == "untracked\n"
    assert not (tree / "build").exists()
    assert not (tree / "tests/test_ops.py").exists()
    assert (tree / "src/calc/__init__.py").read_text() == "VERSION = 'buffer'\n"


def test_edits_apply_reset_and_leave_the_repository_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PKG)
    before = _snapshot(repo)
    status = git(repo, "status", "--porcelain")
    worktrees = git(repo, "worktree", "list")
    scratch = ScratchTree(repo, tmp_path / "state" / "scratch")
    scratch.build()
    fix = EditLike(path="src/calc/ops.py", old_text=PKG["src/calc/ops.py"],
                   new_text="def add(a, b):\n    return a + b\n")
    assert scratch.apply([fix]) is None
    assert scratch.read("src/calc/ops.py") == fix.new_text
    stale = EditLike(path="src/calc/ops.py", old_text="something else\n", new_text="x\n")
    assert scratch.apply([stale]) == "src/calc/ops.py does not hold the text the edit was made from"
    assert scratch.read("src/calc/ops.py") == PKG["src/calc/ops.py"]  # the first candidate taken back
    new_file = EditLike(path="src/calc/extra.py", old_text=None, new_text="X = 1\n")
    assert scratch.apply([new_file]) is None
    scratch.reset()
    assert scratch.read("src/calc/extra.py") is None
    with pytest.raises(VerifyError):
        scratch.apply([EditLike(path="../escape.py", old_text=None, new_text="x\n")])
    scratch.remove()
    assert _snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "worktree", "list") == worktrees
    assert not (tmp_path / "state" / "scratch").exists()


def test_imports_resolve_to_the_copy_not_an_editable_install(tmp_path: Path) -> None:
    """An editable install puts the user's src/ on sys.path through a .pth file: the check in the copy must
    import the copy's code (the candidate's fix), never the user's."""
    repo = make_repo(tmp_path / "repo", PKG)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "__editable__calc.pth").write_text(str(repo / "src") + "\n")
    python = venv / "bin" / "python"
    probe = f"{python} -c \"import calc.ops, sys; sys.exit(0 if calc.ops.add(2, 3) == 5 else 1)\""
    user = run_check(probe, repo, env={"PATH": "/usr/bin:/bin"})
    assert (user.outcome, user.exit_code) == ("failed", 1), user.output  # the user's buggy tree
    scratch = ScratchTree(repo, tmp_path / "state" / "scratch")
    scratch.build()
    assert scratch.apply([EditLike(path="src/calc/ops.py", old_text=PKG["src/calc/ops.py"],
                                   new_text="def add(a, b):\n    return a + b\n")]) is None
    run = run_check(probe, scratch.tree, env=python_env(scratch.tree, {"PATH": "/usr/bin:/bin"}))
    assert run.outcome == "passed", run.output
    assert (repo / "src/calc/ops.py").read_text() == PKG["src/calc/ops.py"]


def test_outside_git_the_tree_is_copied(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "a.py", "A = 1\n")
    write(root, "node_modules/dep/index.js", "module.exports = 1\n")
    scratch = ScratchTree(root, tmp_path / "scratch")
    scratch.build()
    assert (scratch.tree / "a.py").read_text() == "A = 1\n"
    assert (scratch.tree / "node_modules").is_symlink()
