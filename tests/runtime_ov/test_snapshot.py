"""KV snapshots on the real SmolLM2 (stateful IR converted once from its GGUF into the test cache)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from contenox.errors import IncompatibleSnapshot
from contenox.runtime_ov import InstalledModel, Tokenizer
from contenox.runtime_ov.converted import convert
from contenox.runtime_ov.snapshot import MAGIC, StatefulKV, read_snapshot, token_hash

pytestmark = pytest.mark.slow  # a stateful-IR KV built once per module (~4 s) and real round trips


@pytest.fixture(scope="module")
def ir_dir(default_model: InstalledModel) -> Path:
    return convert(default_model)


@pytest.fixture(scope="module")
def kv(default_model: InstalledModel, ir_dir: Path) -> Iterator[StatefulKV]:
    yield StatefulKV(default_model, ir_dir)


@pytest.fixture
def prompt(tokenizer: Tokenizer) -> list[int]:
    return tokenizer.encode("def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n" * 4)


def test_round_trip_continues_identically(kv: StatefulKV, default_model: InstalledModel, tmp_path: Path,
                                          prompt: list[int]) -> None:
    kv.reset()
    kv.feed(prompt[:-1])
    info = kv.save(tmp_path / "a.kv")
    assert info.token_count == len(prompt) - 1 and info.bytes > 0
    original = kv.generate(prompt[-1:], 16)
    header, _ = read_snapshot(tmp_path / "a.kv")
    assert header.model_digest == default_model.profile.model_digest
    assert header.tokenizer_digest == default_model.profile.tokenizer_digest
    assert header.profile_id == default_model.profile.id and header.kv_precision == "float32"
    assert header.token_hash == token_hash(prompt[:-1])

    fresh = StatefulKV(default_model, Path(), _compiled=kv._compiled)
    restored = fresh.restore(tmp_path / "a.kv")
    assert restored.token_count == info.token_count and fresh.tokens == prompt[:-1]
    assert fresh.generate(prompt[-1:], 16) == original


def test_fork_branches_a_stream(kv: StatefulKV, tokenizer: Tokenizer, prompt: list[int]) -> None:
    kv.reset()
    kv.feed(prompt)
    branch = kv.fork()
    a_suffix = tokenizer.encode(" # iterative version")
    b_suffix = tokenizer.encode(" # recursive version")
    a = kv.generate(a_suffix, 8)
    b = branch.generate(b_suffix, 8)
    assert branch.tokens[:len(prompt)] == prompt and kv.tokens[:len(prompt)] == prompt
    kv.reset()
    kv.feed(prompt)
    assert kv.generate(b_suffix, 8) == b  # the branch continued exactly like a fresh stream
    kv.reset()
    kv.feed(prompt)
    assert kv.generate(a_suffix, 8) == a


def _saved(kv: StatefulKV, prompt: list[int], path: Path) -> bytes:
    kv.reset()
    kv.feed(prompt)
    kv.save(path)
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["flip_payload", "truncate", "magic", "header"])
def test_corrupt_snapshot_is_incompatible(kv: StatefulKV, tmp_path: Path, prompt: list[int], damage: str) -> None:
    path = tmp_path / "c.kv"
    data = bytearray(_saved(kv, prompt, path))
    if damage == "flip_payload":
        data[-100] ^= 0xFF
    elif damage == "truncate":
        del data[-1000:]
    elif damage == "magic":
        data[:len(MAGIC)] = b"X" * len(MAGIC)
    else:
        data[len(MAGIC) + 10] = ord("}")
    path.write_bytes(bytes(data))
    with pytest.raises(IncompatibleSnapshot):
        kv.restore(path)
    kv.reset()
    assert kv.generate(prompt, 2)  # still usable


def test_snapshot_of_another_model_is_incompatible(kv: StatefulKV, default_model: InstalledModel,
                                                   tmp_path: Path, prompt: list[int]) -> None:
    path = tmp_path / "m.kv"
    _saved(kv, prompt, path)
    other_profile = msgspec.structs.replace(default_model.profile, model_digest="0" * 64)
    other = msgspec.structs.replace(default_model, profile=other_profile)
    with pytest.raises(IncompatibleSnapshot, match="model_digest") as info:
        StatefulKV(other, Path(), _compiled=kv._compiled).restore(path)
    assert info.value.details["field"] == "model_digest"


def test_state_shapes_that_do_not_fit_are_incompatible(kv: StatefulKV, tmp_path: Path, prompt: list[int]) -> None:
    path = tmp_path / "s.kv"
    data = _saved(kv, prompt, path)
    header, payload = read_snapshot(path)
    states = [msgspec.structs.replace(s, shape=[1, 6, s.shape[2] // 2, 64]) for s in header.states]
    encoded = msgspec.json.encode(msgspec.structs.replace(header, states=states))
    path.write_bytes(MAGIC + len(encoded).to_bytes(8, "little") + encoded + payload)
    assert path.read_bytes() != data
    with pytest.raises(IncompatibleSnapshot, match="shape"):
        kv.restore(path)
