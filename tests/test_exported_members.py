"""Each package's public surface (httpx's tests/test_exported_members.py): every name in ``__all__`` is
there, ``__all__`` is sorted, and ``from package import *`` works.

Sorted means isort-style, the order ruff's RUF022 keeps: CONSTANTS, then CamelCase classes, then the rest.
"""

from __future__ import annotations

import importlib
import importlib.util

import pytest

PACKAGES = ["contenox.runtime_ov", "contenox.planner", "contenox.workspace", "contenox.bench", "contenox.node",
            "contenox.lsp", "contenox.acp"]
PRESENT = [name for name in PACKAGES if importlib.util.find_spec(name) is not None]


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_the_packages_are_there() -> None:
    assert {"contenox.runtime_ov", "contenox.planner", "contenox.workspace", "contenox.bench"} <= set(PRESENT)


@pytest.mark.parametrize("name", PRESENT)
def test_all_names_are_exported_and_sorted(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert exported, f"{name} has an empty __all__"
    assert [n for n in exported if not hasattr(package, n)] == []
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"


@pytest.mark.parametrize("name", PRESENT)
def test_star_import_works(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    assert set(importlib.import_module(name).__all__) <= set(namespace)
