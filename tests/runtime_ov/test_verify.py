"""Weights are verified at load against the digest recorded at install (cached by size and mtime)."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

import contenox.runtime_ov.verify as verify_module
from contenox.errors import ChecksumMismatch
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.verify import verify_weights


def test_flipped_bytes_are_caught_at_load_and_a_good_file_is_hashed_once(
        default_model: InstalledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: weights with 64 KiB flipped loaded and answered (verified only at pull time)."""
    copy = tmp_path / "model"
    shutil.copytree(default_model.path, copy, symlinks=False, ignore=shutil.ignore_patterns(".verified.json"))
    model = msgspec.structs.replace(default_model, path=str(copy))
    verify_weights(model)  # the intact copy: hashed and remembered
    assert (copy / ".verified.json").is_file()

    def no_hashing(path: Path, progress: object = None) -> str:
        raise AssertionError("a warm start must not hash the weights again")

    monkeypatch.setattr(verify_module, "file_sha256", no_hashing)
    verify_weights(model)
    monkeypatch.undo()

    weights = model.weights
    data = bytearray(weights.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 65536] = bytes(b ^ 0xFF for b in data[middle:middle + 65536])
    weights.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatch, match="changed since they were installed"):
        verify_weights(model)
