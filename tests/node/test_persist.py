"""Node state files: atomic writes, missing or corrupt files read as None, modes an earlier version left readable."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from contenox.config import Config
from contenox.node.persist import read_json, sweep_temp_files, tighten_modes, write_atomic
from support.nodekit import RawConnection


class Record(msgspec.Struct):
    name: str


def test_write_then_read_round_trips_without_leftovers(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "record.json"
    write_atomic(path, msgspec.json.encode(Record(name="a")))
    write_atomic(path, msgspec.json.encode(Record(name="b")))
    assert read_json(path, Record) == Record(name="b")
    assert sorted(p.name for p in path.parent.iterdir()) == ["record.json"]


def test_missing_corrupt_and_mistyped_files_read_as_none(tmp_path: Path) -> None:
    assert read_json(tmp_path / "absent.json", Record) is None
    (tmp_path / "torn.json").write_bytes(b'{"name": "a')
    assert read_json(tmp_path / "torn.json", Record) is None
    (tmp_path / "typed.json").write_bytes(b'{"name": 3}')
    assert read_json(tmp_path / "typed.json", Record) is None


def test_the_sweep_removes_temp_files_of_dead_writers_only(tmp_path: Path) -> None:
    import os
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    path = tmp_path / "ws" / "record.json"
    write_atomic(path, msgspec.json.encode(Record(name="kept")))
    orphan = path.with_name(f".record.json.{dead.pid}.tmp")
    orphan.write_bytes(b'{"name": "to')
    live = path.with_name(f".record.json.{os.getppid()}.tmp")  # a writer still running
    live.write_bytes(b"{")
    mine = path.with_name(f".record.json.{os.getpid()}.tmp")
    mine.write_bytes(b"{")
    other = tmp_path / "ws" / ".notes.tmp"  # not a write_atomic temp name
    other.write_bytes(b"x")
    assert sweep_temp_files(tmp_path) == [orphan]
    assert not orphan.exists() and live.exists() and mine.exists() and other.exists()
    assert read_json(path, Record) == Record(name="kept")


def _mode(path: Path) -> int:
    return os.lstat(path).st_mode & 0o777


def _readable_layout(root: Path) -> list[Path]:
    """What an earlier version left: state and logs folders 0755, transcripts, sessions and the log 0644."""
    made = [root / "state" / "workspaces" / "abc" / "turns.jsonl", root / "state" / "acp" / "sessions" / "s1.json",
            root / "logs" / "node.log"]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        path.chmod(0o644)
    for folder in {p.parent for p in made} | {root / "state", root / "logs", root / "state" / "workspaces",
                                              root / "state" / "acp"}:
        folder.chmod(0o755)
    return made


def test_tighten_modes_makes_files_0600_and_folders_0700_and_leaves_symlinks_alone(tmp_path: Path) -> None:
    files = _readable_layout(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    outside.chmod(0o644)
    (tmp_path / "state" / "link").symlink_to(outside)
    changed = tighten_modes(tmp_path / "state")
    assert all(_mode(f) == 0o600 for f in files[:2])
    assert _mode(tmp_path / "state") == _mode(tmp_path / "state" / "workspaces" / "abc") == 0o700
    assert _mode(outside) == 0o644 and _mode(files[2]) == 0o644  # not under state/, not through the link
    assert set(changed) == {*files[:2], tmp_path / "state", *(p for p in (tmp_path / "state").rglob("*")
                                                                 if p.is_dir() and not p.is_symlink())}
    assert tighten_modes(tmp_path / "state") == []  # once tightened, nothing changes


@pytest.mark.slow
def test_the_node_makes_an_upgraded_install_private_at_start_up_and_says_so(node_config: Config) -> None:
    root = Path(node_config.home)
    files = _readable_layout(root)
    conn = RawConnection(node_config)  # starts the node
    try:
        assert "result" in conn.request(1, "status")
    finally:
        conn.close()
    assert [_mode(f) for f in files] == [0o600] * 3
    assert _mode(root / "state") == _mode(root / "logs") == _mode(root / "state" / "acp" / "sessions") == 0o700
    log = (root / "logs" / "node.log").read_text()
    assert "private" in log and "turns.jsonl" in log and "node.log" in log
    assert _mode(root / "state" / ".private-v1") == 0o600  # done once: later starts skip the walk
