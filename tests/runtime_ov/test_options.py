"""One set of engine defaults: EngineOptions takes every shared field's default from EngineConfig."""

from __future__ import annotations

import msgspec

from contenox.config import EngineConfig
from contenox.runtime_ov import EngineOptions

_NODE_ONLY = {"process", "backend", "url", "model", "api_key_env", "api_key_file", "token_prompt", "timeout_s",
              "retries", "cache_key_field", "affinity_header", "prefix_hash_header", "grammar_field"}
"""Where the engine runs is the node's choice, not an option of the engine; the serving engine's settings are
ServedOptions' (``backend = "openai"``; tests/runtime_ov/test_served_engine.py)."""


def test_engine_options_defaults_agree_with_the_config() -> None:
    config = {k: v for k, v in msgspec.structs.asdict(EngineConfig()).items() if k not in _NODE_ONLY}
    options = msgspec.structs.asdict(EngineOptions())
    assert set(config) <= set(options)
    assert {name: options[name] for name in config} == config
    assert EngineOptions() == EngineOptions.from_config(EngineConfig())


def test_from_config_carries_every_config_field() -> None:
    engine = EngineConfig(cache_size_gb=3.0, chunk_tokens=128, max_num_seqs=2, max_new_tokens=64,
                          repetition_penalty=1.0, threads=3)
    options = EngineOptions.from_config(engine, device="CPU")
    fields = {k: v for k, v in msgspec.structs.asdict(engine).items() if k not in _NODE_ONLY}
    assert {name: getattr(options, name) for name in fields} == fields
    assert options.device == "CPU"
