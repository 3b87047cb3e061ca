"""Node state files: atomic writes, and missing or corrupt files read as None instead of raising."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.node.persist import read_json, sweep_temp_files, write_atomic


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
