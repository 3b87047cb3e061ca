"""Weights are verified against the digest recorded at install, under a key a byte flip cannot keep."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import contenox.runtime_ov.verify as verify_module
from contenox.errors import ChecksumMismatch
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.verify import check_recorded, verify_weights
from support.weights import copy_model, flip_keeping_mtime


def test_a_flip_with_the_mtime_kept_is_not_trusted_and_is_refused_by_name(
        default_model: InstalledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 28, defect 3): the record was keyed on size and mtime, so flipped bytes whose mtime was
    put back passed as verified and loaded."""
    model = copy_model(default_model, tmp_path / "model", ir=False)
    assert check_recorded(model) is False  # never verified: no record
    assert verify_weights(model)  # the intact copy: hashed and recorded
    assert (tmp_path / "model" / ".verified.json").is_file()

    def no_hashing(path: Path, progress: object = None) -> str:
        raise AssertionError("the check before a load must not hash the weights")

    monkeypatch.setattr(verify_module, "file_sha256", no_hashing)
    assert check_recorded(model) is True
    flip_keeping_mtime(model.weights)
    assert check_recorded(model) is False  # the ctime moved: the record is for other bytes
    monkeypatch.undo()

    with pytest.raises(ChecksumMismatch, match="changed since they were installed") as info:
        verify_weights(model)
    assert "contenox model pull smollm2-135m --force" in info.value.message
    assert info.value.details["model"] == "smollm2-135m"
    with pytest.raises(ChecksumMismatch, match="smollm2-135m"):  # the failure is recorded: refused at once
        check_recorded(model)


def test_a_record_of_the_old_format_is_checked_again(default_model: InstalledModel, tmp_path: Path) -> None:
    model = copy_model(default_model, tmp_path / "model", ir=False)
    info = model.weights.stat()
    (tmp_path / "model" / ".verified.json").write_bytes(msgspec.json.encode(
        {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "digest": model.profile.model_digest}))
    assert check_recorded(model) is False


def test_a_stopped_check_records_nothing(default_model: InstalledModel, tmp_path: Path) -> None:
    import threading

    model = copy_model(default_model, tmp_path / "model", ir=False)
    stop = threading.Event()
    stop.set()
    assert verify_weights(model, stop) is False
    assert not (tmp_path / "model" / ".verified.json").exists()
