"""Where the definitions an answer names are: a sentence after the answer, for the names it gave without their file.

The small models name functions and classes in backticks and leave out their files ("`parse_from_object` reads
the source...", the file never said), so a reader has to search for each. The node knows where each name is
defined: a name the answer presents as code that exactly one workspace file defines (``Class.method`` by the file
that defines the class) gets that file and line, in one sentence after the answer, marked as the node's. Nothing
the answer wrote changes; a name defined in several files, or not at all, is left out rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from contenox.answer.citations import cited_paths, cited_symbols

__all__ = ["LOCATIONS_LEAD", "Located", "locations", "without_locations"]

LOCATIONS_LEAD = "Where the names above are defined (found by Contenox): "
"""How the sentence begins (the eval reads the answer without it too)."""
MAX_LOCATIONS = 10


class Located(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int: ...


def locations(text: str, find: Callable[[str], Sequence[Located]],
              is_test: Callable[[str], bool]) -> tuple[str, list[str]]:
    """(the sentence, its entries) for the names ``text`` presents as code whose one defining file it does not name
    (by its path or a path it ends with; ``find``: the workspace's definitions of a name; a test's definition counts
    only for a name that is a test's); ('', []) when there are none."""
    cited = [path for path, _, _ in cited_paths(text)]
    entries: list[str] = []
    for name in cited_symbols(text):
        parts = name.split(".")
        found = list(find(parts[-1]))
        if not parts[-1].startswith("test"):
            found = [d for d in found if not is_test(d.path)]
        if len(parts) > 1 and len({d.path for d in found}) > 1:  # ``Class.method``: the class's file
            owners = {d.path for d in find(parts[-2])}
            found = [d for d in found if d.path in owners]
        files = {d.path for d in found}
        if len(files) != 1 or any(f == c or f.endswith("/" + c) for f in files for c in cited):
            continue
        first = min(found, key=lambda d: d.line)
        entries.append(f"`{name}` ({first.path}:{first.line})")
        if len(entries) >= MAX_LOCATIONS:
            break
    return (LOCATIONS_LEAD + ", ".join(entries) + ".", entries) if entries else ("", [])


def without_locations(text: str) -> str:
    """``text`` without the locations sentence :func:`locations` added at its end (what the model wrote)."""
    at = text.rfind("\n\n" + LOCATIONS_LEAD)
    return text[:at] if at >= 0 else text
