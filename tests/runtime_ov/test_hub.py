"""Pulling an OpenVINO IR repository through huggingface_hub from a local stand-in Hub."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from contenox.errors import ChecksumMismatch, ModelNotFound, ModelSourceUnavailable
from contenox.runtime_ov.catalog import HubSource
from contenox.runtime_ov.digests import model_digests
from contenox.runtime_ov.store import ModelStore
from support.catalogs import catalog_with
from support.hub_standin import HubStandin
from support.tiny_models import build_ir

REPO = "Test/tiny-int4-ov"


class RecordingProgress:
    def __init__(self) -> None:
        self.labels: list[str] = []
        self.advanced = 0
        self.open = 0

    def start(self, label: str, total: int | None) -> None:
        self.labels.append(label)
        self.open += 1

    def advance(self, amount: int) -> None:
        self.advanced += amount

    def finish(self) -> None:
        self.open -= 1


def pins(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


@pytest.fixture(scope="module")
def repo_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return build_ir(tmp_path_factory.mktemp("repo"))


@pytest.fixture
def hub(repo_files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStandin]:
    with HubStandin({REPO: repo_files}) as standin:
        monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
        yield standin


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".partial-"))


def test_pull_from_the_standin_hub(tmp_path: Path, hub: HubStandin, repo_files: dict[str, bytes]) -> None:
    store = ModelStore(tmp_path / "models", catalog_with(HubSource(repo=REPO, files=pins(repo_files))))
    progress = RecordingProgress()
    model = store.pull("tiny-ir", progress)

    ir = Path(model.path) / "ir"
    assert model.weights == ir
    assert {p.name: p.read_bytes() for p in ir.iterdir()} == repo_files  # and nothing else (no .cache)
    assert sorted(p.name for p in Path(model.path).iterdir()) == ["contenox-openvino.json", "ir", "source.json"]
    assert model.profile.format == "openvino-ir"
    assert model.profile.weights == "ir"
    digests = model_digests(ir)
    assert model.profile.model_digest == digests.model_digest
    assert model.profile.chat_template_digest == digests.chat_template_digest
    assert model.source == f"Hugging Face Hub {REPO}@main"
    assert [m.name for m in store.list()] == ["tiny-ir"]
    assert leftovers(store.root) == []

    # HF_ENDPOINT was honoured: the stand-in served the revision, the listing and every file
    commit = hub.commits[REPO]
    assert f"GET /api/models/{REPO}/revision/main" in hub.requests
    assert f"GET /api/models/{REPO}/tree/{commit}" in hub.requests
    for name in repo_files:
        assert f"GET /{REPO}/resolve/{commit}/{name}" in hub.requests

    assert progress.labels[0] == f"download {REPO}@main from {hub.endpoint}"
    assert any(label.startswith("verify sha256 of") for label in progress.labels)
    assert progress.advanced >= sum(len(d) for d in repo_files.values())
    assert progress.open == 0


def test_downloaded_ir_runs_in_openvino(tmp_path: Path, hub: HubStandin, repo_files: dict[str, bytes]) -> None:
    import openvino as ov

    model = ModelStore(tmp_path / "models", catalog_with(HubSource(repo=REPO))).pull("tiny-ir")
    compiled = ov.Core().compile_model(str(model.weights / "openvino_model.xml"), "CPU")
    x = np.ones((1, 65536), dtype=np.float32)
    y = compiled(x)[0]
    assert y.shape == (1, 65536) and (y >= 0).all() and (y > 0).any()  # relu(x * weights)


def test_checksum_mismatch_names_expected_and_actual(tmp_path: Path, hub: HubStandin,
                                                     repo_files: dict[str, bytes]) -> None:
    wrong = {**pins(repo_files), "openvino_model.bin": "0" * 64}
    store = ModelStore(tmp_path / "models", catalog_with(HubSource(repo=REPO, files=wrong)))
    with pytest.raises(ChecksumMismatch) as info:
        store.pull("tiny-ir")
    actual = hashlib.sha256(repo_files["openvino_model.bin"]).hexdigest()
    err = info.value
    assert f"expected {'0' * 64}, got {actual}" in err.message
    assert "openvino_model.bin" in err.message
    assert err.details == {"model": "tiny-ir", "expected": "0" * 64, "actual": actual}
    with pytest.raises(ModelNotFound):
        store.get("tiny-ir")
    assert store.list() == []
    assert leftovers(store.root) == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (HubSource(repo="Test/missing-ov"), "repository not found at "),
        (HubSource(repo=REPO, revision="v9"), "revision 'v9' not found at "),
        (HubSource(repo=REPO, files={"openvino_tokenizer.xml": "1" * 64}),
         "pinned file openvino_tokenizer.xml is not in the repository"),
    ],
    ids=["no-repo", "no-revision", "pinned-file-missing"],
)
def test_hub_failures_are_one_line_errors(tmp_path: Path, hub: HubStandin, source: HubSource, reason: str) -> None:
    store = ModelStore(tmp_path / "models", catalog_with(source))
    with pytest.raises(ModelSourceUnavailable) as info:
        store.pull("tiny-ir")
    message = info.value.message
    assert message.startswith(f"cannot pull tiny-ir; tried {source.describe()}: ")
    assert reason in message
    assert "\n" not in message
    assert leftovers(store.root) == []


def test_a_repository_without_ir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HubStandin({"Test/gguf-only": {"model.gguf": b"GGUF...", "README.md": b"hi"}}) as standin:
        monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
        store = ModelStore(tmp_path / "models", catalog_with(HubSource(repo="Test/gguf-only")))
        with pytest.raises(ModelSourceUnavailable, match=r"not an OpenVINO IR repository"):
            store.pull("tiny-ir")
    assert store.list() == []
