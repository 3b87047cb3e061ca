"""Node state files: atomic writes, and missing or corrupt files read as None instead of raising."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.node.persist import read_json, write_atomic


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
