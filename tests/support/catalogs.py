"""One-model catalogs for the store and Hub tests."""

from __future__ import annotations

from contenox.runtime_ov.catalog import Catalog, CatalogEntry, Source
from contenox.runtime_ov.profile import Profile


def catalog_with(*sources: Source, name: str = "tiny-ir") -> Catalog:
    """A catalog whose only (and default) model ``name`` is a tiny OpenVINO IR with these sources."""
    profile = Profile(id=name, family="tiny", format="openvino-ir", weights="ir", default_context=1024,
                      max_tested_context=2048)
    return Catalog(version=1, default=name,
                   models=[CatalogEntry(name=name, description="a test model", sources=list(sources),
                                        profile=profile)])
