"""Model profiles: strict parsing, errors that name the field, round trips through disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from contenox.errors import ProfileError
from contenox.runtime_ov.catalog import load_catalog
from contenox.runtime_ov.profile import (
    PROFILE_FILENAME,
    Profile,
    decode_profile,
    encode_profile,
    read_profile,
    write_profile,
)

VALID: dict[str, Any] = {
    "id": "tiny-model",
    "family": "llama",
    "format": "gguf",
    "weights": "model.gguf",
    "default_context": 2048,
    "max_tested_context": 4096,
    "kv_precision": "u8",
    "sparse_attention": False,
    "prefix_caching": True,
    "cache_block_size": 32,
    "device_preference": ["GPU", "CPU"],
    "model_digest": "a" * 64,
    "tokenizer_digest": "b" * 64,
    "chat_template_digest": "c" * 64,
    "warning": "small",
}

_DROP = object()
"""Marks a field to leave out."""


def _decode(**changes: Any) -> Profile:
    data = {**VALID, **changes}
    return decode_profile(msgspec.json.encode({k: v for k, v in data.items() if v is not _DROP}), source="p.json")



def test_valid_profile_decodes_every_field() -> None:
    profile = _decode()
    assert profile.id == "tiny-model"
    assert profile.format == "gguf"
    assert profile.max_tested_context == 4096
    assert profile.device_preference == ["GPU", "CPU"]
    assert profile.kv_precision == "u8"
    assert profile.warning == "small"


def test_optional_fields_have_conservative_defaults() -> None:
    required = {k: VALID[k] for k in ("id", "family", "format", "weights", "default_context", "max_tested_context")}
    profile = decode_profile(msgspec.json.encode(required))
    assert profile.kv_precision == "auto"
    assert profile.prefix_caching is True
    assert profile.cache_block_size == 32
    assert profile.device_preference == ["CPU"]
    assert profile.model_digest == "" and profile.warning is None


def test_round_trip_through_disk(tmp_path: Path) -> None:
    profile = _decode()
    write_profile(tmp_path, profile)
    assert (tmp_path / PROFILE_FILENAME).read_bytes() == encode_profile(profile)
    assert read_profile(tmp_path) == profile


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"contexts": 4096}, "contexts", "unknown field"),
        ({"default_context": "2048"}, "default_context", "Expected `int`"),
        ({"prefix_caching": "yes"}, "prefix_caching", "Expected `bool`"),
        ({"format": "onnx"}, "format", "Invalid enum value 'onnx'"),
        ({"kv_precision": "u4"}, "kv_precision", "Invalid enum value 'u4'"),
        ({"device_preference": ["TPU"]}, "device_preference", "Invalid enum value 'TPU'"),
        ({"device_preference": []}, "device_preference", "at least one device"),
        ({"weights": _DROP}, "weights", "missing required field"),
        ({"default_context": 8192}, "default_context", "larger than max_tested_context (8192 > 4096)"),
        ({"max_tested_context": 0}, "max_tested_context", "must be > 0"),
        ({"cache_block_size": -32}, "cache_block_size", "must be > 0"),
        ({"model_digest": "abc123"}, "model_digest", "not a sha256 hex digest"),
        ({"tokenizer_digest": "G" * 64}, "tokenizer_digest", "not a sha256 hex digest"),
        ({"id": "My Model"}, "id", "not a lowercase model name"),
    ],
)
def test_invalid_field_is_named(changes: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(ProfileError) as info:
        _decode(**changes)
    err = info.value
    assert err.details["field"] == field
    assert err.message.startswith(f"p.json: profile field {field!r}")
    assert says in err.message
    assert err.kind == "profile_error"


def test_not_an_object_and_not_json() -> None:
    with pytest.raises(ProfileError, match=r"^p\.json: not a profile") as info:
        decode_profile(b"[1, 2]", source="p.json")
    assert info.value.details["field"] is None
    with pytest.raises(ProfileError, match=r"^p\.json: not valid JSON"):
        decode_profile(b'{"id": ', source="p.json")


def test_read_profile_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="profile missing") as info:
        read_profile(tmp_path)
    assert info.value.details["path"] == str(tmp_path / PROFILE_FILENAME)
    (tmp_path / PROFILE_FILENAME).write_text('{"id": "x", "bogus": true}')
    with pytest.raises(ProfileError) as bad:
        read_profile(tmp_path)
    assert bad.value.message.startswith(str(tmp_path / PROFILE_FILENAME))
    assert bad.value.details["field"] == "bogus"


def test_constructing_an_invalid_profile_in_code_fails_too() -> None:
    with pytest.raises(ProfileError) as info:
        Profile(id="x", family="f", format="gguf", weights="w", default_context=10, max_tested_context=5)
    assert info.value.details["field"] == "default_context"


def test_every_catalog_profile_is_valid_and_tested_within_limits() -> None:
    for entry in load_catalog().models:
        profile = decode_profile(encode_profile(entry.profile))
        assert profile == entry.profile
        assert profile.id == entry.name
        assert profile.default_context <= profile.max_tested_context
