"""Where a fix belongs, before any candidate is drawn (the localization step of Agentless-style repair): the
source frames of the failing run's traceback, innermost first, each with the function it ran in."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

__all__ = ["Frame", "frames", "is_test_path"]

_PYTEST = re.compile(r"^\s*(?P<path>[^\s:]+\.py):(?P<line>\d+): in (?P<func>[\w<>]+)")
_PYTHON = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>]+)')
_NODE = re.compile(r"^\s*at (?:(?P<func>[\w$.<>]+) \()?(?P<path>[^\s()]+\.[cm]?[jt]sx?):(?P<line>\d+):\d+\)?")
_TEST = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(?:test|spec)\.\w+$|conftest\.py$)")


class Frame(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    """Root-relative."""
    line: int
    function: str


def is_test_path(path: str) -> bool:
    return bool(_TEST.search(path))


def frames(terminal: str, root: Path) -> list[Frame]:
    """The workspace's non-test frames the terminal output shows, innermost (last printed) first, each once."""
    found: list[Frame] = []
    resolved = root.resolve()
    for raw in terminal.splitlines():
        match = _PYTEST.match(raw) or _PYTHON.match(raw) or _NODE.match(raw)
        if not match:
            continue
        path = Path(match.group("path"))
        try:
            rel = (path.resolve() if path.is_absolute() else (resolved / path).resolve()).relative_to(resolved)
        except ValueError:  # the standard library, site-packages: not the workspace's code
            continue
        text = rel.as_posix()
        if is_test_path(text) or "site-packages" in text or not (resolved / rel).is_file():
            continue
        found.append(Frame(path=text, line=int(match.group("line")), function=match.group("func") or "<module>"))
    unique: dict[tuple[str, str], Frame] = {}
    for frame in reversed(found):
        unique.setdefault((frame.path, frame.function), frame)
    return list(unique.values())
