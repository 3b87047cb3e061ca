"""Where a fix belongs, before any candidate is drawn (the localization step of Agentless-style repair): the
source frames of the failing run's traceback, innermost first, each with the function it ran in."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

__all__ = ["Frame", "frames", "is_test_path", "printed_frames"]

_PYTEST = re.compile(r"^\s*(?P<path>[^\s:]+\.py):(?P<line>\d+): in (?P<func>[\w<>]+)")
_PYTHON = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>]+)')
_NODE = re.compile(r"^\s*at (?:(?P<new>new )?(?:async )?(?P<func>[\w$.<>]+)(?: \[as [\w$]+\])? \()?"
                   r"(?P<path>[^\s()]+\.[cm]?[jt]sx?):(?P<line>\d+):\d+\)?")
"""A V8 stack frame (``at new SemVer (/p/classes/semver.js:38:13)``, ``at Comparator.parse (...)``,
``at /p/index.js:3:1``); V8 prints the innermost frame first."""
_SCRIPT = re.compile(r"\.[cm]?[jt]sx?$")
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
                           function=_function(groups)))
    return found


def _function(groups: dict[str, str | None]) -> str:
    """The name a frame's function is defined by: ``new SemVer`` ran SemVer's ``constructor``, ``Comparator.parse``
    is the method ``parse``; ``Object.<anonymous>`` (a CommonJS module's own code) and a frame without a name are
    the module's."""
    func = groups.get("func") or ""
    if groups.get("new"):
        return "constructor"
    if not func or "<anonymous>" in func:
        return "<module>"
    return func if "." not in func or "<" in func else func.rsplit(".", 1)[-1]


def frames(terminal: str, root: Path) -> list[Frame]:
    """The workspace's non-test frames the terminal output shows, innermost first, each once: a Python traceback
    prints it last, a V8 stack (JavaScript, TypeScript) first."""
    unique: dict[tuple[str, str], Frame] = {}
    printed = printed_frames(terminal, root)
    scripts = [f for f in printed if _SCRIPT.search(f.path)]
    for frame in [*reversed([f for f in printed if not _SCRIPT.search(f.path)]), *scripts]:
        if not is_test_path(frame.path):
            unique.setdefault((frame.path, frame.function), frame)
    return list(unique.values())
