"""Golden files: compare rendered text with a checked-in file.

``CONTENOX_UPDATE_GOLDEN=1`` rewrites the file instead (review the diff). CI must never rewrite goldens,
so the variable is refused when ``CI`` is set.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest


def updating() -> bool:
    """Whether this run rewrites golden files; fails the test when asked to under CI."""
    if os.environ.get("CONTENOX_UPDATE_GOLDEN") != "1":
        return False
    if os.environ.get("CI"):
        pytest.fail("CONTENOX_UPDATE_GOLDEN=1 is refused when CI is set: CI must compare golden files, "
                    "never rewrite them", pytrace=False)
    return True


def check_golden(path: Path, text: str) -> None:
    """Assert ``text`` equals the golden file at ``path`` (or rewrite it, see ``updating``)."""
    if updating():
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; run with CONTENOX_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, "".join(
        difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "actual"))
