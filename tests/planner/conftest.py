"""Planner fixtures: a planner factory on the real SmolLM2 tokenizer (``tokenizer``, tests/conftest.py), each
planner with a block model standing for the engine's cache (:class:`support.cache_mirror.MirroredPlanner`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from contenox.config import PlannerConfig
from contenox.planner import Planner
from contenox.runtime_ov.profile import Profile
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.tokenizer import Tokenizer
from support.cache_mirror import MirroredPlanner


@pytest.fixture(scope="session")
def profile(default_model: InstalledModel) -> Profile:
    return default_model.profile


PlannerFactory = Callable[..., Planner]


@pytest.fixture
def make_planner(tokenizer: Tokenizer, profile: Profile, tmp_path: Path) -> PlannerFactory:
    def make(state: str = "state", *, profile_changes: dict[str, object] | None = None,
             **config: object) -> Planner:
        prof = msgspec.structs.replace(profile, **(profile_changes or {}))
        return MirroredPlanner(tokenizer, prof, PlannerConfig(**config), tmp_path / state,  # type: ignore[arg-type]
                               backend_version="test")
    return make
