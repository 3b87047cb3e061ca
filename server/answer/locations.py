"""Where the definitions an answer names are: a sentence after the answer, for the names it gave without their file;
and, after an answer to how code works, the calls it goes through.

The small models name functions and classes in backticks and leave out their files ("`parse_from_object` reads
the source...", the file never said), so a reader has to search for each. The node knows where each name is
defined: a name the answer presents as code that exactly one workspace file defines (``Class.method`` by the file
that defines the class) gets that file and line, in one sentence after the answer, marked as the node's. Nothing
the answer wrote changes; a name defined in several files, or not at all, is left out rather than guessed.

A question about how code works ("Walk me through what happens between load_dotenv() and os.environ") is answered by
the small models with the first function or two; the node reads the rest from the source: the calls the definitions
the question names make, a few levels deep (``contenox.workspace.call_tree``), shown after the answer as the node's
(:func:`calls_section`), each with its file and line, so the path is there even where the model stopped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from contenox.answer.citations import cited_paths, cited_symbols

__all__ = ["CALLS_LEAD", "LOCATIONS_LEAD", "Located", "calls_section", "locations", "without_calls",
           "without_node_sentences"]

LOCATIONS_LEAD = "Where the names above are defined (found by Contenox): "
"""How the sentence begins (the eval reads the answer without it too)."""
CALLS_LEAD = "The calls "
CALLS_FOUND = " makes, read from the source by Contenox (not run):"
"""How the call tree after a how-it-works answer begins and ends its first line (:func:`calls_section`)."""
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


def calls_section(tree: str, roots: Sequence[str]) -> str:
    """The call tree a how-it-works question's answer is followed by (``tree``: the workspace's rendered call tree
    from ``roots``, the definitions the question names), marked as the node's; '' when it shows no call."""
    if "-> " not in tree or not roots:  # (a definition that calls nothing the source resolves: nothing to add)
        return ""
    named = ", ".join(f"`{root}`" for root in roots)
    return f"{CALLS_LEAD}{named}{CALLS_FOUND}\n\n```text\n{tree.rstrip()}\n```"


def without_node_sentences(text: str) -> str:
    """``text`` without what the node added at its end (what the model wrote): the locations sentence
    (:func:`locations`) and the call tree (:func:`calls_section`)."""
    found = [at for at in (text.rfind("\n\n" + LOCATIONS_LEAD), _calls_at(text)) if at >= 0]
    return text[:min(found)] if found else text


def without_calls(text: str) -> str:
    """``text`` without the call tree the node added at its end (:func:`calls_section`), the rest kept."""
    at = _calls_at(text)
    return text[:at] if at >= 0 else text


def _calls_at(text: str) -> int:
    calls = re.search(r"\n\n" + re.escape(CALLS_LEAD) + r"[^\n]*" + re.escape(CALLS_FOUND) + r"\n", text)
    return calls.start() if calls is not None else -1
