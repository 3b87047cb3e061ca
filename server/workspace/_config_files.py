"""Project configuration as retrieval chunks, and the questions that call for it.

Code files are cut at their tree-sitter definitions; configuration defines nothing a question names, so
dependency lists and tool settings (``pyproject.toml``, ``setup.cfg``, ``requirements*.txt``,
``package.json``, ``Cargo.toml``, ``go.mod``...) were never retrieved. Here such files are cut at their
sections (``[tool.mypy]``; sections sharing their first two dotted parts stay together) or, without sections,
at blank lines, and :func:`calls_for_config` says whether a question is about what configuration holds:
dependencies, installing, supported versions, packaging, tool settings.
"""

from __future__ import annotations

import functools
import re

from contenox.workspace._chunks import MAX_LINES, Chunk

__all__ = ["CONFIG", "calls_for_config", "chunk_config", "config_format", "is_project_config"]

CONFIG = "<config>"
"""Name of a configuration chunk that is not a ``[section]``."""

_SECTIONED = frozenset({".toml", ".cfg", ".ini"})
_NAMES = frozenset({
    "pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "mypy.ini", ".flake8", ".pylintrc", "pylintrc",
    ".coveragerc", "ruff.toml", ".ruff.toml", "pipfile", "manifest.in", "package.json", "tsconfig.json",
    "jsconfig.json", "deno.json", "cargo.toml", "go.mod", ".pre-commit-config.yaml", "environment.yml",
    "environment.yaml",
})
_SECTIONED_NAMES = frozenset({".flake8", ".pylintrc", "pylintrc", ".coveragerc", "pipfile"})
_REQUIREMENTS = re.compile(r"(?:^|[-_.])(?:requirements|constraints)(?:[-_.][\w.-]*)?\.(?:txt|in)$")
_CODE_CONFIG = frozenset({"setup.py", "conf.py", "noxfile.py"})
"""Code files that configure the project (indexed as code, ranked as configuration too)."""
_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(?:[#;].*)?$")
_CONTENT = re.compile(r"[A-Za-z0-9_]")

_ASKS = re.compile(
    r"\b(?:depend(?:s|ed|ing|ency|encies)?|requirements?|install(?:s|ed|ing|ation)?|pip|npm|yarn|poetry|"
    r"extras?|pinned|pins?|packaging|metadata|config(?:ure[sd]?|uration|s)?|settings?|lint(?:er|ers|ing)?|"
    r"type[- ]?check(?:ed|er|ers|ing)?|mypy|ruff|flake8|pylint|isort|tox|nox|pre-commit|coverage|"
    r"classifiers?|build (?:system|backend)|entry[- ]points?|console[- ]scripts?|python_requires|"
    r"requires-python|pyproject|setup\.cfg|setup\.py|package\.json|cargo\.toml|go\.mod|"
    r"(?:python|node|py) ?\d(?:\.\d+)?|supported versions?)\b", re.IGNORECASE)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


@functools.lru_cache(maxsize=1 << 16)
def config_format(path: str) -> str | None:
    """``"sections"`` (TOML, INI, cfg), ``"lines"`` (JSON, YAML, requirements, go.mod...) for a project
    configuration file the code index does not cover, else None."""
    name = _name(path)
    dot = name.rfind(".")
    suffix = name[dot:] if dot > 0 else ""
    if suffix in _SECTIONED or name in _SECTIONED_NAMES:
        return "sections"
    if name in _NAMES or _REQUIREMENTS.search(name) or (
            "/requirements/" in f"/{path.lower()}" and suffix in (".txt", ".in")):
        return "lines"
    return None


def is_project_config(path: str) -> bool:
    """A configuration file, or a code file that configures the project (``setup.py``, Sphinx ``conf.py``)."""
    return config_format(path) is not None or _name(path) in _CODE_CONFIG


def calls_for_config(text: str) -> bool:
    """Whether a question is about what project configuration holds: dependencies, installing, supported
    versions, packaging metadata, tool settings; or names a configuration file."""
    return _ASKS.search(text) is not None


def _pieces(lines: list[str], start: int, end: int, name: str, out: list[Chunk]) -> None:
    """Lines start..end (1-based, blank edges trimmed) as chunks of at most MAX_LINES, cut at blank lines."""
    def blank(i: int) -> bool:
        return not lines[i - 1].strip()

    while start <= end and blank(start):
        start += 1
    while end >= start and blank(end):
        end -= 1
    while start <= end:
        stop = end
        if end - start + 1 > MAX_LINES:
            stop = start + MAX_LINES - 1
            cut = next((i for i in range(stop, start + MAX_LINES // 3, -1) if blank(i)), 0)
            stop = cut - 1 if cut else stop
        if any(_CONTENT.search(lines[i - 1]) for i in range(start, stop + 1)):
            out.append(Chunk(start=start, end=stop, name=name, kind="config", header=""))
        start = stop + 1
        while start <= end and blank(start):
            start += 1


def chunk_config(fmt: str, text: str) -> tuple[Chunk, ...]:
    """The chunks of a configuration file: one per group of sections with the same first two dotted parts
    (``[tool.towncrier]`` and its ``[[tool.towncrier.type]]`` tables), the lines before the first section,
    or (``lines`` format) blank-line pieces."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[Chunk] = []
    if fmt != "sections":
        _pieces(lines, 1, len(lines), CONFIG, out)
        return tuple(out)
    groups: list[tuple[str, str, int]] = [("", CONFIG, 1)]  # (group key, chunk name, first line)
    for number, line in enumerate(lines, start=1):
        found = _HEADER.match(line)
        if found is None:
            continue
        section = found.group(1).replace('"', "").replace("'", "")
        key = ".".join(section.split(".")[:2])
        if key != groups[-1][0]:
            groups.append((key, f"[{section}]", number))
    for i, (_, name, first) in enumerate(groups):
        last = groups[i + 1][2] - 1 if i + 1 < len(groups) else len(lines)
        _pieces(lines, first, last, name, out)
    return tuple(out)
