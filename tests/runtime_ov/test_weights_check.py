"""Weights OpenVINO would crash on are refused first with a structured error (a truncated GGUF made
OpenVINO's reader segfault the whole process: found by the benchmark's profile_mismatch case)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from contenox.errors import ProfileMismatch
from contenox.runtime_ov.engine import Engine
from contenox.runtime_ov.gguf_header import check_weights
from contenox.runtime_ov.reference import BarePipeline
from contenox.runtime_ov.store import InstalledModel


def _truncated_copy(model: InstalledModel, tmp_path: Path, keep: float) -> InstalledModel:
    target = tmp_path / "broken"
    target.mkdir()
    weights = target / model.profile.weights
    with model.weights.open("rb") as src, weights.open("wb") as dst:
        dst.write(src.read(int(model.weights.stat().st_size * keep)))
    return msgspec.structs.replace(model, path=str(target))


def test_the_real_model_passes(default_model: InstalledModel) -> None:
    check_weights(default_model.weights)


def test_truncated_weights_are_refused_before_openvino_opens_them(default_model: InstalledModel,
                                                                   tmp_path: Path) -> None:
    broken = _truncated_copy(default_model, tmp_path, keep=0.6)
    with pytest.raises(ProfileMismatch, match="truncated") as info:
        check_weights(broken.weights)
    assert info.value.details["needed"] > info.value.details["size"]
    with pytest.raises(ProfileMismatch, match="truncated"):
        Engine.start(broken)
    with pytest.raises(ProfileMismatch, match="truncated"):  # the bench's bare references check too
        BarePipeline(broken.weights, prefix_caching=False, chunk_tokens=64, cache_size_gb=1.0)


def test_a_cut_header_and_an_incomplete_ir_are_refused(default_model: InstalledModel, tmp_path: Path) -> None:
    with pytest.raises(ProfileMismatch, match="not a readable GGUF"):
        check_weights(_truncated_copy(default_model, tmp_path, keep=0.001).weights)
    ir = tmp_path / "ir"
    ir.mkdir()
    (ir / "openvino_model.xml").write_text("<net/>")
    with pytest.raises(ProfileMismatch, match=r"openvino_model\.bin"):
        check_weights(ir)
