"""One set of engine defaults: EngineOptions takes every shared field's default from EngineConfig."""

from __future__ import annotations

import msgspec

from contenox.config import EngineConfig
from contenox.runtime_ov import EngineOptions


def test_engine_options_defaults_agree_with_the_config() -> None:
    config = msgspec.structs.asdict(EngineConfig())
    options = msgspec.structs.asdict(EngineOptions())
    assert set(config) <= set(options)
    assert {name: options[name] for name in config} == config
    assert EngineOptions() == EngineOptions.from_config(EngineConfig())


def test_from_config_carries_every_config_field() -> None:
    engine = EngineConfig(cache_size_gb=3.0, chunk_tokens=128, max_num_seqs=2, max_new_tokens=64,
                          repetition_penalty=1.0, threads=3)
    options = EngineOptions.from_config(engine, device="CPU")
    assert {name: getattr(options, name) for name in msgspec.structs.asdict(engine)} == msgspec.structs.asdict(engine)
    assert options.device == "CPU"
