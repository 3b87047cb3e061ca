"""Change events from real git operations and edits, and the segments they invalidate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from contenox.workspace import ChangeEvent, Workspace
from support.gitrepo import git, write

OpenWs = Callable[..., Workspace]


def by_kind(events: list[ChangeEvent]) -> dict[tuple[str, str], ChangeEvent]:
    return {(e.kind, e.path): e for e in events}


def test_open_reports_nothing_and_second_refresh_is_empty(make_repo: Callable[..., Path],
                                                          open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    assert ws.refresh() == []
    status = ws.status()
    assert status.is_git and status.branch == "main" and status.head and not status.detached
    assert status.tagged_files == 6 and status.languages == {"go": 1, "javascript": 1, "python": 3,
                                                              "typescript": 1}


def test_body_edit_invalidates_pins_and_diff_not_map(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    models = (root / "app/models.py").read_text()
    write(root, "app/models.py", models.replace("self.name = name", "self.name = name or 'anonymous'"))
    events = ws.refresh()
    assert events == [ChangeEvent(kind="modified", path="app/models.py", segments=("pins", "diff"))]
    assert "+        self.name = name or 'anonymous'" in ws.diff_text()


def test_definition_edit_invalidates_map(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    write(root, "app/models.py", (root / "app/models.py").read_text() + "\n\ndef slugify(name):\n    return name\n")
    assert ws.refresh() == [ChangeEvent(kind="modified", path="app/models.py",
                                        segments=("repo_map", "pins", "diff"))]
    assert [s.path for s in ws.find_symbol("slugify")] == ["app/models.py"]


def test_untracked_staged_committed(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    write(root, "app/extra.py", "def extra():\n    return 1\n")
    assert ws.refresh() == [ChangeEvent(kind="untracked", path="app/extra.py",
                                        segments=("repo_map", "pins", "diff"))]
    assert "+def extra():" in ws.diff_text()
    git(root, "add", "app/extra.py")
    events = ws.refresh()
    assert [(e.kind, e.path) for e in events] == [("staged", "app/extra.py")]
    git(root, "commit", "-q", "-m", "extra")
    head_before = ws.status().head
    events = ws.refresh()
    assert [(e.kind, e.segments) for e in events] == [("committed", ("diff",))]
    assert ws.status().head != head_before
    assert ws.diff_text() == ""


def test_staging_a_modification_keeps_the_diff(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    write(root, "README.md", "# demo\nmore\n")
    ws.refresh()
    diff = ws.diff_text()
    git(root, "add", "README.md")
    assert ws.refresh() == [ChangeEvent(kind="staged", path="README.md", segments=())]
    assert ws.diff_text() == diff


def test_deleted_and_renamed(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    (root / "web/app.js").unlink()
    git(root, "mv", "app/cli.py", "app/main.py")
    events = by_kind(ws.refresh())
    assert events[("deleted", "web/app.js")].segments == ("repo_map", "pins", "diff")
    renamed = events[("renamed", "app/main.py")]
    assert renamed.old_path == "app/cli.py"
    assert ("staged", "app/main.py") in events and ("staged", "app/cli.py") in events
    assert [s.path for s in ws.find_symbol("main")] == ["app/main.py"]


def test_instruction_files(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    write(root, ".cursorrules", "be brief\n")
    write(root, "CLAUDE.md", "claude\n")
    ws = open_ws(root)
    write(root, "AGENTS.md", "agents\n")
    write(root, ".github/copilot-instructions.md", "copilot\n")
    events = ws.refresh()
    assert all("instructions" in e.segments for e in events) and len(events) == 2
    assert ws.instructions() == [("AGENTS.md", "agents\n"), ("CLAUDE.md", "claude\n"),
                                 (".github/copilot-instructions.md", "copilot\n"), (".cursorrules", "be brief\n")]


def test_hinted_refresh_sees_only_hinted_paths(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    write(root, "README.md", "changed\n")
    write(root, "app/new.py", "def new():\n    pass\n")
    events = ws.refresh([root / "app/new.py"])
    assert [(e.kind, e.path) for e in events] == [("untracked", "app/new.py")]
    assert [(e.kind, e.path) for e in ws.refresh()] == [("modified", "README.md")]


def test_moved_directory_with_hint_rescans(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    (root / "web").rename(root / "frontend")
    events = ws.refresh([root / "web", root / "frontend"])
    assert {(e.kind, e.path, e.old_path) for e in events} == {
        ("renamed", "frontend/app.js", "web/app.js"), ("renamed", "frontend/client.ts", "web/client.ts")}


def test_overlays_win_over_disk(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    for n in range(5):  # a burst of keystrokes: one re-index at the next refresh
        ws.set_overlay("app/models.py", f"def typed_{n}():\n    pass\n")
    assert ws.read_text("app/models.py") == "def typed_4():\n    pass\n"
    events = ws.refresh()
    assert events == [ChangeEvent(kind="modified", path="app/models.py", segments=("repo_map", "pins", "diff"))]
    assert [s.name for s in ws.find_symbol("typed_4")] == ["typed_4"] and ws.find_symbol("typed_3") == []
    assert [h.path for h in ws.search("typed_4")] == ["app/models.py"]
    assert ws.status().overlays == ("app/models.py",)
    ws.set_overlay(root / "app/models.py", None)
    assert ws.refresh()[0].kind == "modified"
    assert ws.find_symbol("typed_4") == [] and ws.find_symbol("format_name")
    assert "format_name" in ws.read_text("app/models.py")


def test_overlay_for_a_new_unsaved_file(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    ws.set_overlay("app/draft.py", "def draft():\n    pass\n")
    assert [(e.kind, e.path) for e in ws.refresh()] == [("untracked", "app/draft.py")]
    ws.set_overlay("app/draft.py", None)
    assert [(e.kind, e.path) for e in ws.refresh()] == [("deleted", "app/draft.py")]


def test_plain_folder_uses_content_hashing(tmp_path: Path, open_ws: OpenWs) -> None:
    root = tmp_path / "plain"
    write(root, "a.py", "def a():\n    return b()\n")
    write(root, "b.py", "def b():\n    return 1\n")
    write(root, ".gitignore", "skip/\n")
    write(root, "skip/c.py", "def c():\n    pass\n")
    ws = open_ws(root)
    status = ws.status()
    assert not status.is_git and status.head is None and status.tagged_files == 2
    assert ws.diff_text() == ""
    write(root, "b.py", "def b():\n    return 1\n")  # same content, new mtime: no event
    assert ws.refresh() == []
    write(root, "b.py", "def b():\n    return 2\n")
    write(root, "new.py", "x = 1\n")
    assert ws.refresh() == [ChangeEvent(kind="modified", path="b.py", segments=("pins",)),
                            ChangeEvent(kind="added", path="new.py", segments=("repo_map", "pins"))]


def test_root_in_a_subdirectory_of_a_repository(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    repo = make_repo()
    ws = open_ws(repo / "app")
    status = ws.status()
    assert status.is_git and status.languages == {"python": 3}
    write(repo, "app/models.py", (repo / "app/models.py").read_text() + "\nEXTRA = 1\n")
    write(repo, "web/other.js", "function other() {}\n")
    assert [(e.kind, e.path) for e in ws.refresh()] == [("modified", "models.py")]
    assert "+EXTRA = 1" in ws.diff_text() and "other.js" not in ws.diff_text()
    git(repo, "add", "app/models.py")
    assert [(e.kind, e.path) for e in ws.refresh()] == [("staged", "models.py")]


def test_prepare_builds_the_graph_once(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    ws.prepare()
    graph = ws._index.compiled()
    ws.prepare()
    assert ws._index.compiled() is graph
    assert ws.repo_map(200, lambda s: len(s)) and ws._index.compiled() is graph


def test_diff_files_and_hunks(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    write(root, "app/models.py", (root / "app/models.py").read_text().replace("name.title()", "name.upper()"))
    (root / "web/app.js").unlink()
    write(root, "notes.md", "one\ntwo\n")
    files = {f.path: f for f in ws.diff_files()}
    assert sorted(files) == ["app/models.py", "notes.md", "web/app.js"]
    models = files["app/models.py"]
    assert (models.status, models.additions, models.deletions) == ("modified", 1, 1)
    [hunk] = models.hunks
    assert (hunk.old_start, hunk.new_start) == (7, 7) and hunk.header.startswith("@@ -7,4 +7,4 @@")
    assert files["web/app.js"].status == "deleted" and files["notes.md"].status == "untracked"
    assert files["notes.md"].additions == 2
