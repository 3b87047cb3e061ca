"""Model, tokenizer and chat-template digests of GGUF files and IR directories."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import gguf
import pytest

from contenox.errors import ProfileMismatch
from contenox.runtime_ov.catalog import load_catalog
from contenox.runtime_ov.digests import file_sha256, model_digests
from contenox.runtime_ov.gguf_header import gguf_metadata, read_gguf_header
from contenox.runtime_ov.store import InstalledModel
from support.tiny_models import TEMPLATE, build_gguf, build_ir


def test_file_sha256_streams_and_reports_progress(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # a bit over two chunks
    path = tmp_path / "blob"
    path.write_bytes(data)
    seen: list[int] = []
    assert file_sha256(path, seen.append) == hashlib.sha256(data).hexdigest()
    assert sum(seen) == len(data) and len(seen) == 3


def test_gguf_digests(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    build_gguf(path, context=3072)
    digests = model_digests(path)
    assert digests.model_digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert digests.chat_template_digest == hashlib.sha256(TEMPLATE.encode()).hexdigest()
    assert digests.context_length == 3072
    assert model_digests(path, model_digest="f" * 64).model_digest == "f" * 64  # a digest just verified


def test_metadata_reader_agrees_with_the_gguf_package(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    build_gguf(path, tokens=("<unk>", "héllo", "\u2581world", "<|im_start|>"))
    ours = gguf_metadata(path)
    theirs = {name: f.contents() for name, f in gguf.GGUFReader(str(path)).fields.items()
              if not name.startswith("GGUF.")}
    assert ours == theirs
    assert ours["tokenizer.ggml.tokens"] == ["<unk>", "héllo", "\u2581world", "<|im_start|>"]
    assert ours["tiny.flag"] is True


def test_tensor_index_agrees_with_the_gguf_package(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    build_gguf(path, alignment=64)
    header = read_gguf_header(path)
    reader = gguf.GGUFReader(str(path))
    assert header.alignment == reader.alignment == 64
    assert [(t.name, list(t.dims), t.ggml_type) for t in header.tensors] == [
        (t.name, t.shape.tolist(), int(t.tensor_type)) for t in reader.tensors]
    for ours, theirs in zip(header.tensors, reader.tensors, strict=True):
        assert header.data_offset + ours.offset == theirs.data_offset
        data = header.tensor_bytes(ours, int(theirs.n_bytes))
        assert data.tobytes() == theirs.data.tobytes()


def test_truncated_gguf_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    build_gguf(path)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ProfileMismatch, match=r"cut\.gguf: not a readable GGUF file"):
        model_digests(cut)


def test_tokenizer_digest_follows_the_vocabulary_not_the_weights(tmp_path: Path) -> None:
    build_gguf(tmp_path / "base.gguf")
    build_gguf(tmp_path / "other-weights.gguf", seed=7)
    build_gguf(tmp_path / "other-vocab.gguf", tokens=("<unk>", "a", "c", "<|im_start|>"))
    build_gguf(tmp_path / "other-template.gguf", template="{{ messages }}")
    base = model_digests(tmp_path / "base.gguf")
    weights = model_digests(tmp_path / "other-weights.gguf")
    vocab = model_digests(tmp_path / "other-vocab.gguf")
    template = model_digests(tmp_path / "other-template.gguf")
    assert weights.model_digest != base.model_digest
    assert weights.tokenizer_digest == base.tokenizer_digest
    assert vocab.tokenizer_digest != base.tokenizer_digest
    assert vocab.chat_template_digest == base.chat_template_digest
    assert template.chat_template_digest != base.chat_template_digest
    assert template.tokenizer_digest == base.tokenizer_digest  # the template has its own digest


def test_ir_digests(tmp_path: Path) -> None:
    build_ir(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b" / "README.md").write_text("changed docs")
    config = json.loads((tmp_path / "b" / "config.json").read_text())
    (tmp_path / "b" / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 32768}))
    build_ir(tmp_path / "c", seed=3)
    a, b, c = (model_digests(tmp_path / n) for n in "abc")
    assert a.model_digest == b.model_digest  # docs and config do not change the model
    assert c.model_digest != a.model_digest  # other weights do
    assert a.chat_template_digest == hashlib.sha256(TEMPLATE.encode()).hexdigest()
    assert a.context_length is None and b.context_length == 32768
    (tmp_path / "b" / "openvino_tokenizer.xml").write_text("<net/>")
    assert model_digests(tmp_path / "b").tokenizer_digest != a.tokenizer_digest


def test_unreadable_models_are_translated(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF but not really")
    with pytest.raises(ProfileMismatch, match="not a readable GGUF file") as info:
        model_digests(fake)
    assert info.value.__cause__ is not None  # the gguf package's error, kept as the cause
    (tmp_path / "ir").mkdir()
    (tmp_path / "ir" / "config.json").write_text("{}")
    with pytest.raises(ProfileMismatch, match=r"no openvino_model\.xml"):
        model_digests(tmp_path / "ir")


def test_default_model_matches_its_pinned_digests(default_model: InstalledModel) -> None:
    pinned = load_catalog().resolve("smollm2-135m").profile
    digests = model_digests(default_model.weights)
    assert digests.model_digest == pinned.model_digest
    assert digests.tokenizer_digest == pinned.tokenizer_digest
    assert digests.chat_template_digest == pinned.chat_template_digest
    assert digests.context_length == 8192
