"""Persisted workspace records and prefixes survive restarts and torn writes."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.node.paths import workspace_key, workspace_root
from contenox.node.store import SavedPrefix, WorkspaceStore


def test_record_and_prefix_round_trip(tmp_path: Path) -> None:
    store = WorkspaceStore(tmp_path / "state")
    root = tmp_path / "repo"
    key = workspace_key(root)
    record = store.new_record(root, key)
    store.save(record)
    store.save_prefix(key, SavedPrefix(model="qwen2.5-coder-0.5b", model_digest="m1", tokenizer_digest="t1",
                                       ids=[1, 2, 3]))

    again = WorkspaceStore(tmp_path / "state")
    assert again.load(key) == record
    assert again.load_prefix(key, "qwen2.5-coder-0.5b", "m1", "t1") == [1, 2, 3]
    assert [r.key for r in again.load_all()] == [key]


def test_corrupt_files_are_skipped(tmp_path: Path) -> None:
    store = WorkspaceStore(tmp_path / "state")
    key = "repo-0123456789ab"
    (store.base / key).mkdir(parents=True)
    (store.base / key / "workspace.json").write_bytes(b"{not json")
    (store.base / key / "prefix.json").write_bytes(b"[1, 2,")
    assert store.load(key) is None
    assert store.load_prefix(key, "m", "d", "t") == []
    assert store.load_all() == []


def test_workspace_root_is_the_git_root_or_the_directory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert workspace_root(repo / "a" / "b") == repo.resolve()
    assert workspace_root(plain) == plain.resolve()
    assert workspace_key(repo) != workspace_key(tmp_path / "other" / "repo")
    assert workspace_key(repo).startswith("repo-")


def test_a_prefix_saved_for_another_model_is_not_rewarmed(tmp_path: Path, caplog) -> None:
    """Regression: a Qwen prefix re-warmed into SmolLM2 after switching models bricked the engine."""
    store = WorkspaceStore(tmp_path / "state")
    key = "repo-0123456789ab"
    store.save_prefix(key, SavedPrefix(model="qwen2.5-coder-0.5b", model_digest="m1", tokenizer_digest="t1",
                                       ids=[151643, 2, 3]))
    with caplog.at_level("INFO"):
        assert store.load_prefix(key, "smollm2-135m", "m2", "t2") == []
    assert "its saved prefix is for qwen2.5-coder-0.5b, the engine runs smollm2-135m" in caplog.text
    (store.base / key / "prefix.json").write_bytes(b"[1, 2, 3]")  # the format before ids carried their model
    assert store.load_prefix(key, "smollm2-135m", "m2", "t2") == []


def test_an_earlier_layouts_records_move_into_the_workspace_folder(tmp_path: Path) -> None:
    """Records once lived in state/node/workspaces/<key>/, apart from the journal in state/workspaces/<key>/:
    a node's start moves them beside it, once, and the sessions resume."""
    from contenox.config import Config
    from contenox.node import Node
    from contenox.node.paths import workspace_dir
    from contenox.planner import Journal

    config = Config(home=str(tmp_path / "home"))
    legacy = config.state_dir / "node" / "workspaces"
    root = tmp_path / "repo"
    key = workspace_key(root)
    old = WorkspaceStore(legacy)
    record = old.new_record(root, key)
    old.save(record)
    old.save_prefix(key, SavedPrefix(model="m", model_digest="d", tokenizer_digest="t", ids=[7, 8]))
    (legacy / key / ".workspace.json.999999999.tmp").write_bytes(b'{"root": ')  # a torn write of a dead node
    other = "other-0123456789ab"  # a workspace whose newer record is already in its folder: that one wins
    old.save(msgspec.structs.replace(record, key=other, root="/old"))
    newer = WorkspaceStore(workspace_dir(config, other).parent)
    newer.save(msgspec.structs.replace(record, key=other, root="/new"))
    journal = workspace_dir(config, key) / "turns.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_bytes(b"")

    node = Node(config)
    node.recover_state()
    assert not (config.state_dir / "node").exists()  # the old folder is gone
    assert node.store.load(key) == record and node.store.load_prefix(key, "m", "d", "t") == [7, 8]
    assert node.store.load(other) is not None and node.store.load(other).root == "/new"  # type: ignore[union-attr]
    assert sorted(p.name for p in workspace_dir(config, key).iterdir()) == ["prefix.json", "turns.jsonl",
                                                                            "workspace.json"]
    assert Journal(workspace_dir(config, key)).count() == 0
    node.recover_state()  # once: nothing more to move
    assert node.store.load(key) == record
