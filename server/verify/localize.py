"""Where a fix belongs, before any candidate is drawn (the localization step of Agentless-style repair): the
source frames of the failing run's traceback, innermost first, each with the function it ran in."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

__all__ = ["Frame", "frames", "is_test_path", "printed_frames"]

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


def printed_frames(output: str, root: Path, patterns: tuple[re.Pattern[str], ...] = (_PYTEST, _PYTHON, _NODE)
                   ) -> list[Frame]:
    """Every frame the output prints that is a file of the workspace, in printed order (a pattern without a
    ``line`` group gives line 0; one without ``func``, ``<module>``)."""
    found: list[Frame] = []
    resolved = root.resolve()
    for raw in output.splitlines():
        match = next((m for pattern in patterns if (m := pattern.match(raw))), None)
        if not match:
            continue
        path = Path(match.group("path"))
        try:
            rel = (path.resolve() if path.is_absolute() else (resolved / path).resolve()).relative_to(resolved)
        except ValueError:  # the standard library, site-packages: not the workspace's code
            continue
        text = rel.as_posix()
        if "site-packages" in text or not (resolved / rel).is_file():
            continue
        groups = match.groupdict()
        found.append(Frame(path=text, line=int(groups["line"]) if groups.get("line") else 0,
                           function=groups.get("func") or "<module>"))
    return found


def frames(terminal: str, root: Path) -> list[Frame]:
    """The workspace's non-test frames the terminal output shows, innermost (last printed) first, each once."""
    unique: dict[tuple[str, str], Frame] = {}
    for frame in reversed(printed_frames(terminal, root)):
        if not is_test_path(frame.path):
            unique.setdefault((frame.path, frame.function), frame)
    return list(unique.values())
