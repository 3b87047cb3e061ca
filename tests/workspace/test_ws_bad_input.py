"""Bad input never stops the index; each case shows in the status."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.errors import PathOutsideWorkspace, WorkspaceError
from contenox.workspace import Workspace
from support.gitrepo import git, write
from support.wsrepo import count_tokens

OpenWs = Callable[..., Workspace]


def reasons(ws: Workspace) -> dict[str, str]:
    return {s.path: s.reason for s in ws.status().skipped}


def test_binary_non_utf8_huge_and_syntax_errors(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({
        "ok.py": "def ok():\n    return 1\n",
        "blob.bin": b"\x00\x01\x02binary",
        "latin.py": "def caf\xe9():\n    return '\xe9'\n".encode("latin-1"),
        "huge.py": "x = 1\n" * 400,
        "broken.py": "def fine():\n    pass\n\ndef broken(:\n",
    })
    ws = open_ws(root, max_file_bytes=1000)
    status = ws.status()
    assert reasons(ws) == {"blob.bin": "binary", "huge.py": "too_large"}
    assert status.non_utf8 == ("latin.py",)
    assert "broken.py" in status.partial  # (invalid UTF-8 also parses as an error node)
    assert {s.name for s in ws.find_symbol("fine")} == {"fine"}
    assert ws.find_symbol("ok")[0].path == "ok.py"
    with pytest.raises(WorkspaceError, match=r"latin.py is not UTF-8 text \(invalid byte 0xe9 at offset 7\)") as err:
        ws.read_text("latin.py")
    assert err.value.details["reason"] == "non_utf8"
    with pytest.raises(WorkspaceError, match=r"over the workspace\.max_file_bytes cap of 1000"):
        ws.read_text("huge.py")
    with pytest.raises(WorkspaceError, match="binary"):
        ws.read_text("blob.bin")
    with pytest.raises(WorkspaceError, match="does not exist"):
        ws.read_text("missing.py")
    assert [h.path for h in ws.search("x = 1")] == []  # huge file is not searched
    write(root, "huge.py", "def small():\n    pass\n")
    ws.refresh()
    assert ws.find_symbol("small") and "huge.py" not in reasons(ws)


def test_symlinks_outside_and_to_directories(tmp_path: Path, make_repo: Callable[..., Path],
                                             open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    outside = tmp_path / "outside"
    write(outside, "secret.py", "def secret():\n    pass\n")
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "inner_dir").symlink_to(root, target_is_directory=True)
    (root / "alias.py").symlink_to(root / "a.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    ws = open_ws(root)
    assert reasons(ws) == {"escape.py": "symlink_outside", "escape_dir": "symlink_outside",
                           "inner_dir": "symlink_dir", "dangling.py": "unreadable"}
    assert ws.find_symbol("secret") == []
    assert sorted(s.path for s in ws.find_symbol("a")) == ["a.py", "alias.py"]
    with pytest.raises(PathOutsideWorkspace):
        ws.read_text("escape.py")
    with pytest.raises(PathOutsideWorkspace):
        ws.read_text("../outside/secret.py")
    with pytest.raises(PathOutsideWorkspace):
        ws.read_text(outside / "secret.py")
    with pytest.raises(PathOutsideWorkspace):
        ws.set_overlay("../x.py", "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n", "locked.py": "def locked():\n    pass\n"})
    (root / "locked.py").chmod(0)
    ws = open_ws(root)
    assert reasons(ws) == {"locked.py": "unreadable"}
    assert ws.find_symbol("a")


def test_special_files_are_skipped(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    os.mkfifo(root / "pipe")
    ws = open_ws(root)
    assert reasons(ws) == {"pipe": "special"}


def test_submodule(tmp_path: Path, make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    lib = make_repo({"lib.py": "def lib():\n    pass\n"}, name="lib")
    root = make_repo({"main.py": "def main():\n    lib()\n"})
    git(root, "submodule", "add", "-q", str(lib), "vendor/lib")
    git(root, "commit", "-q", "-m", "submodule")
    ws = open_ws(root)
    assert reasons(ws) == {"vendor/lib": "submodule"}
    assert ws.find_symbol("lib") == [] and ws.find_symbol("main")
    assert ws.status().errors == ()


def test_empty_repository(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({}, commit=False)
    ws = open_ws(root)
    status = ws.status()
    assert status.is_git and status.empty_repo and status.head is None and status.branch == "main"
    assert status.files == 0 and ws.repo_map(100, count_tokens) == "" and ws.diff_text() == ""
    write(root, "first.py", "def first():\n    pass\n")
    assert [e.kind for e in ws.refresh()] == ["untracked"]
    assert "+def first():" in ws.diff_text()
    git(root, "add", "first.py")
    git(root, "commit", "-q", "-m", "first")
    kinds = [e.kind for e in ws.refresh()]
    assert "committed" in kinds and "staged" in kinds
    assert not ws.status().empty_repo and ws.diff_text() == ""


def test_detached_head(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    write(root, "a.py", "def a():\n    return 2\n")
    git(root, "commit", "-q", "-am", "second")
    first = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    ws = open_ws(root)
    git(root, "checkout", "-q", "--detach", first)
    events = ws.refresh()
    assert {e.kind for e in events} == {"modified", "staged", "committed"}
    status = ws.status()
    assert status.detached and status.branch is None and status.head == first


def test_corrupt_cache_is_rebuilt(make_repo: Callable[..., Path], open_ws: OpenWs, tmp_path: Path) -> None:
    root = make_repo()
    cache = tmp_path / "tags-cache"
    first = open_ws(root, cache=cache)
    expected = first.repo_map(500, count_tokens)
    entries = sorted(cache.rglob("*.msgpack"))
    assert len(entries) == first.status().tagged_files
    entries[0].write_bytes(b"\xff\x00garbage")
    entries[1].write_bytes(b"")
    second = open_ws(root, cache=cache)
    status = second.status()
    assert status.cache_rebuilt == 2 and status.cache_hits == len(entries) - 2
    assert second.repo_map(500, count_tokens) == expected
    third = open_ws(root, cache=cache)
    assert third.status().cache_hits == len(entries) and third.status().cache_rebuilt == 0


def test_unwritable_cache_dir_is_not_fatal(make_repo: Callable[..., Path], open_ws: OpenWs,
                                           tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    ws = open_ws(make_repo(), cache=blocker / "cache")
    assert ws.find_symbol("format_name")


def test_root_must_be_a_directory(tmp_path: Path, open_ws: OpenWs) -> None:
    with pytest.raises(WorkspaceError, match="not a directory"):
        open_ws(tmp_path / "missing")


def test_paths_through_a_symlinked_root(tmp_path: Path, make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    ws = open_ws(alias)
    assert ws.root == root.resolve()
    assert ws.read_text(alias / "a.py") == "def a():\n    pass\n"
    assert ws.relpath(alias / "sub" / ".." / "a.py") == "a.py"
    with pytest.raises(PathOutsideWorkspace):
        ws.relpath(alias)


def test_cache_is_pruned_of_stale_entries_and_versions(make_repo: Callable[..., Path], open_ws: OpenWs,
                                                       tmp_path: Path) -> None:
    from contenox.workspace._cache import TagCache

    root = make_repo()
    cache = tmp_path / "tags-cache"
    (cache / "tags-v0-old").mkdir(parents=True)
    ws = open_ws(root, cache=cache)
    assert not (cache / "tags-v0-old").exists()
    tags = TagCache(cache)
    live = {p.stem for p in cache.rglob("*.msgpack")}
    for i in range(5):
        tags.put(f"python-stale{i:02d}", ws._index.tags["app/models.py"])
    assert tags.prune(live, slack=10) == 0
    assert tags.prune(live, slack=2) == 5
    assert {p.stem for p in cache.rglob("*.msgpack")} == live


def test_hinted_refresh_reports_a_new_symlink_leaving_the_root(tmp_path: Path, make_repo: Callable[..., Path],
                                                                open_ws: OpenWs) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    ws = open_ws(root)
    outside = write(tmp_path / "outside", "x.py", "def x():\n    pass\n")
    (root / "link.py").symlink_to(outside)
    assert ws.refresh([root / "link.py"]) == []
    assert reasons(ws) == {"link.py": "symlink_outside"}


def test_outside_git_the_walk_stops_at_the_file_cap_nearest_files_first(tmp_path: Path, open_ws: OpenWs) -> None:
    root = tmp_path / "plain"  # no git repository: nothing but .gitignore files to skip build trees
    for depth in range(3):
        folder = root.joinpath(*[f"d{d}" for d in range(depth)])
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(4):
            (folder / f"m{depth}_{n}.py").write_text(f"def f{depth}_{n}():\n    return {n}\n")
    ws = open_ws(root, max_files_outside_git=6)
    status = ws.status()
    assert not status.is_git
    assert sorted(ws.indexed_paths()) == ["d0/m1_0.py", "d0/m1_1.py", *(f"m0_{n}.py" for n in range(4))]  # nearest first
    [capped] = [s for s in status.skipped if s.reason == "file_cap"]
    assert capped.path == "." and "stopped after 6 files" in capped.detail
    assert ws.index_notes() == (f"not a git repository: only part of {root} is indexed ({capped.detail})",)
    whole = open_ws(root, max_files_outside_git=100)
    assert len(whole.indexed_paths()) == 12 and whole.index_notes() == ()
    flat = tmp_path / "flat"  # the cap reached inside the last folder to walk: still named, never silent
    flat.mkdir()
    for n in range(5):
        (flat / f"f{n}.py").write_text(f"X{n} = {n}\n")
    capped = open_ws(flat, max_files_outside_git=3)
    assert sorted(capped.indexed_paths()) == ["f0.py", "f1.py", "f2.py"] and capped.index_notes()
    exact = open_ws(flat, max_files_outside_git=5)
    assert len(exact.indexed_paths()) == 5 and exact.index_notes() == ()  # all of them: nothing to say


def test_a_git_repository_is_never_capped(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo({f"m{n}.py": f"x = {n}\n" for n in range(8)})
    ws = open_ws(root, max_files_outside_git=3)
    assert len(ws.indexed_paths()) == 8 and ws.index_notes() == ()
