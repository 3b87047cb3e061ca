"""Typed config: fully defaulted; a bad value is named by key and replaced by its default."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from contenox.config import CompletionConfig, Config, config_path, contenox_home, load_config, render_config
from contenox.errors import ConfigError


def _write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = config_path(home)
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_gives_every_default(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.warnings == ()
    assert config.engine.cache_size_gb == 2.0
    assert config.model.default == "qwen2.5-coder-0.5b"
    assert config.models_dir == tmp_path.resolve() / "models"
    assert config.state_dir == tmp_path.resolve() / "state"


def test_contenox_home_overrides_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTENOX_HOME", str(tmp_path / "elsewhere"))
    assert contenox_home() == tmp_path / "elsewhere"
    _write(tmp_path / "elsewhere", "[model]\ndefault = \"smollm2-135m\"\n")
    assert load_config().model.default == "smollm2-135m"
    monkeypatch.delenv("CONTENOX_HOME")
    assert contenox_home() == Path.home() / ".contenox"


def test_good_values_are_read(tmp_path: Path) -> None:
    _write(tmp_path, "[engine]\ncache_size_gb = 4\nchunk_tokens = 128\n[planner]\nrepo_map_tokens = 512\n")
    config = load_config(tmp_path)
    assert config.warnings == ()
    assert config.engine.cache_size_gb == 4.0
    assert config.engine.chunk_tokens == 128
    assert config.planner.repo_map_tokens == 512
    assert config.engine.max_num_seqs == 8  # untouched keys keep their default


def test_bad_value_warns_naming_key_and_default(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _write(tmp_path, "[engine]\ncache_size_gb = \"lots\"\nchunk_tokens = 64\n")
    with caplog.at_level(logging.WARNING, logger="contenox.config"):
        config = load_config(tmp_path)
    assert config.engine.cache_size_gb == 2.0  # the default, not a crash
    assert config.engine.chunk_tokens == 64  # the good key beside it still applies
    assert len(config.warnings) == 1
    warning = config.warnings[0]
    assert warning.startswith("engine.cache_size_gb:")
    assert "using default 2.0" in warning
    assert "engine.cache_size_gb" in caplog.text


def test_out_of_range_value_uses_default(tmp_path: Path) -> None:
    _write(tmp_path, "[engine]\nchunk_tokens = 0\n[completion]\ncontext_tokens = -5\n")
    config = load_config(tmp_path)
    assert config.engine.chunk_tokens == 256
    assert config.completion.context_tokens == CompletionConfig().context_tokens
    assert config.warnings == (
        "engine.chunk_tokens: must be > 0, got 0; using default 256",
        f"completion.context_tokens: must be >= 0, got -5; using default {CompletionConfig().context_tokens}",
    )


def test_a_retired_key_is_read_and_dropped_without_a_warning(tmp_path: Path) -> None:
    _write(tmp_path, "[workspace]\ndebounce_ms = 150\n[planner]\nalign_blocks = true\n")
    config = load_config(tmp_path)
    assert config.warnings == () and not hasattr(config.workspace, "debounce_ms")


def test_unknown_key_and_section_are_named_and_ignored(tmp_path: Path) -> None:
    _write(tmp_path, "[engine]\ncache_sise_gb = 3\n[telemetry]\nenabled = true\n")
    config = load_config(tmp_path)
    assert config.engine.cache_size_gb == 2.0
    assert config.warnings == ("engine.cache_sise_gb: unknown key; ignored", "telemetry: unknown section; ignored")


def test_section_that_is_not_a_table(tmp_path: Path) -> None:
    _write(tmp_path, "engine = 5\n")
    config = load_config(tmp_path)
    assert config.engine.chunk_tokens == 256
    assert config.warnings == ("engine: expected a table, got int; using defaults",)


def test_invalid_toml_falls_back_to_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "[engine\ncache_size_gb = 3\n")
    config = load_config(tmp_path)
    assert config.engine.cache_size_gb == 2.0
    assert len(config.warnings) == 1
    assert config.warnings[0].startswith(f"{path.resolve()}: not valid TOML")


def test_strict_raises_config_error_naming_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "[engine]\nmax_new_tokens = \"many\"\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, strict=True)
    assert "engine.max_new_tokens" in info.value.message
    assert info.value.details["path"] == str(path.resolve())
    assert info.value.kind == "config_error"


def test_rendered_config_loads_back_without_warnings(tmp_path: Path) -> None:
    text = render_config(load_config(tmp_path))
    assert "[engine]" in text and "cache_size_gb = 2.0" in text
    _write(tmp_path, text)
    config = load_config(tmp_path, strict=True)
    assert config.warnings == ()
    for section in ("model", "engine", "node", "planner", "workspace"):
        assert getattr(config, section) == getattr(Config(), section)


def test_rendered_strings_are_escaped(tmp_path: Path) -> None:
    _write(tmp_path, '[node]\nsocket_dir = "/tmp/a \\"quoted\\" dir"\n')
    config = load_config(tmp_path)
    assert config.node.socket_dir == '/tmp/a "quoted" dir'
    _write(tmp_path / "again", render_config(config))
    assert load_config(tmp_path / "again", strict=True).node.socket_dir == '/tmp/a "quoted" dir'


def test_retired_key_written_by_an_older_init_is_dropped_quietly(tmp_path: Path) -> None:
    _write(tmp_path, "[planner]\nalign_blocks = false\nmax_history_turns = 4\n")
    config = load_config(tmp_path, strict=True)
    assert config.warnings == ()
    assert config.planner.max_history_turns == 4


@pytest.mark.parametrize(("before", "after"), [
    ("", '[model]\ndefault = "alt"\n'),
    ('# mine\n[model]\ndefault = "smollm2-135m"  # fast\ndevice = "CPU"\n\n[engine]\nmax_new_tokens = 8\n',
     '# mine\n[model]\ndefault = "alt"\ndevice = "CPU"\n\n[engine]\nmax_new_tokens = 8\n'),
    ('[model]\ndevice = "CPU"\n[engine]\nmax_new_tokens = 8\n',
     '[model]\ndevice = "CPU"\ndefault = "alt"\n[engine]\nmax_new_tokens = 8\n'),
    ('[engine]\nmax_new_tokens = 8\n', '[engine]\nmax_new_tokens = 8\n\n[model]\ndefault = "alt"\n'),
    ('[engine]\n# default = "x"\n[model]\n', '[engine]\n# default = "x"\n[model]\ndefault = "alt"\n'),
])
def test_set_default_model_changes_that_line_only(tmp_path: Path, before: str, after: str) -> None:
    from contenox.config import set_default_model

    if before:
        (tmp_path / "config.toml").write_text(before, encoding="utf-8")
    assert set_default_model(tmp_path, "alt") == tmp_path / "config.toml"
    assert (tmp_path / "config.toml").read_text(encoding="utf-8") == after
    assert load_config(tmp_path, strict=True).model.default == "alt"


def test_the_serving_engine_backend_is_read_and_an_unknown_backend_is_named(tmp_path: Path) -> None:
    _write(tmp_path, '[engine]\nbackend = "openai"\nurl = "http://gpu-box:8080/v1"\ntoken_prompt = true\n'
                     'api_key_env = "TEAM_KEY"\nretries = -1\n')
    config = load_config(tmp_path)
    assert config.engine.backend == "openai" and config.engine.url == "http://gpu-box:8080/v1"
    assert config.engine.token_prompt and config.engine.api_key_env == "TEAM_KEY"
    assert config.warnings == ("engine.retries: must be >= 0, got -1; using default 3",)
    _write(tmp_path, '[engine]\nbackend = "vllm"\n')
    config = load_config(tmp_path)
    assert config.engine.backend == "openvino"
    assert config.warnings == ("engine.backend: Invalid enum value 'vllm'; using default 'openvino'",)
