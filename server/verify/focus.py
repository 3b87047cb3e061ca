"""Focused repair, the Agentless split: localize the failing run to a function, then ask for that function alone.

A turn's own prompt holds thousands of tokens of retrieved code and an answer format; a small model asked there
for a fix often explains instead, or copies the lines it was shown. Agentless-style pipelines localize first
(file, then function) and give the repair step only the code to change and why it fails. This module finds the
places (the innermost source frames of the failing run; when the traceback shows only the test, the source
definitions the failing test calls) and writes the short prompt for one of them; the node draws the candidates
and resolves the rewritten function with its edit machinery (a whole quoted definition replaces its own).
Agentless localizes to global variables too: a module-level value of several lines that a place uses (a verbose
regex, a table) is a place of its own (:func:`values_used`), since no function's rewrite can reach it
(python-dotenv's ``${VAR:-default}`` syntax lives in the ``_posix_variable`` regex).
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from contenox.verify.localize import _PYTEST, _PYTHON, frames, is_test_path, printed_frames
from contenox.verify.trace import Ran, span_of

__all__ = [
    "FOCUS_SYSTEM",
    "LINE_SYSTEM",
    "LOCALIZE_SYSTEM",
    "Place",
    "blind",
    "entry_key",
    "failing_test_frames",
    "filled_lines",
    "focus_prompt",
    "for_language",
    "insertion_points",
    "language",
    "line_pick_prompt",
    "line_prompt",
    "localize_prompt",
    "pickable_lines",
    "places",
    "relevance",
    "values_used",
    "with_traced",
]

FOCUS_SYSTEM = ("You are a careful Python developer fixing a bug. You are shown the output of a failing check and "
                "one function from the project. Reply with the whole corrected function in one ```python code "
                "block: the same name and signature, every line of it, and nothing else after the block.")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (?P<path>[^\s:]+\.py)::(?:\w+::)*(?P<func>\w+)")
_CALL = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\s*\(")
_SUBSCRIPT = re.compile(r"(?<![\w.])(?P<del>del\s+)?[a-z_]\w*(?:\.\w+)*\[[^\]\n]*\](?P<set>\s*=(?!=))?")
"""``cache[key]`` (``__getitem__``), ``cache[key] = v`` (``__setitem__``), ``del cache[key]`` (``__delitem__``); a
capitalized name subscripted is a generic alias (``LRUCache[int, int]``), not an item."""
_CONTAINS = re.compile(r"(?<![\w.])(?:not\s+)?in\s+[\w.]+|\bassert(?:Not)?In\(")
_FOR_TARGET = re.compile(r"\bfor\s+[\w\s,()]+$")
_LEN = re.compile(r"(?<![\w.])len\(")
_CHAINED = re.compile(r"[)\]]\.([A-Za-z_]\w*)\s*\(")
"""A call on what a call returns: ``copy.copy(cache).popitem()``."""
_CLASS_NAME = re.compile(r"(?<![\w.])([A-Z]\w*)\b")
_BASES = re.compile(r"^\s*class\s+\w+\s*\(([^)]*)\)")
_IGNORED = set(dir(builtins)) | set(keyword.kwlist) | {"assert", "self", "cls", "super", "pytest", "raises", "mark",
                                                       "parametrize", "fixture", "approx"}
LOCALIZE_SYSTEM = ("You are a careful Python developer finding a bug. You are shown a failing check and the project "
                   "functions it runs through, numbered. Reply with the number of the one function that must change "
                   "for the check to pass.")
LINE_SYSTEM = ("You are a careful Python developer finding a bug. You are shown a failing check and one function "
               "from the project, its lines numbered. Reply with the number of the one line that must change for the "
               "check to pass.")
_LANGUAGES = (("Python", "python", re.compile(r"\.pyi?$")), ("TypeScript", "typescript", re.compile(r"\.[cm]?tsx?$")),
              ("JavaScript", "javascript", re.compile(r"\.[cm]?jsx?$")))


def language(path: str) -> tuple[str, str]:
    """The language of a source path, as a prompt names it and as a code fence does: ("Python", "python")."""
    return next(((name, fence) for name, fence, suffix in _LANGUAGES if suffix.search(path)), ("Python", "python"))


def for_language(system: str, path: str) -> str:
    """A system prompt written for Python (:data:`FOCUS_SYSTEM`, ...) as it reads for the place's language."""
    name, fence = language(path)
    return system.replace("```python", f"```{fence}").replace("Python", name)


_TRIVIAL_LINES = 2
_MAX_LINES = 80
"""A definition longer than this is not rewritten whole (the model would drop lines)."""

Locate = Callable[[str], list[tuple[str, int, int]]]
Read = Callable[[str], "str | None"]


class Place(msgspec.Struct, frozen=True, kw_only=True):
    """A function the fix may belong in."""

    path: str
    name: str
    start: int
    end: int
    """1-based, inclusive."""
    why: str
    """``frame of the failing run`` or ``called by test_x``."""
    suspicion: float = 0.0
    """How suspicious a trace of the failing tests made it (its most suspicious line's Ochiai; 0: not traced)."""
    lines: tuple[tuple[int, float], ...] = ()
    """Its lines the trace found most suspicious, most first, each with its suspicion (none: not traced)."""
    kind: str = "function"
    """``function`` (a def, a method) or ``value`` (a module-level assignment, :func:`values_used`)."""
    ran: tuple[int, ...] = ()
    """Its lines the failing run ran, by a trace (none: not traced). A line it never ran did not make it fail:
    a line-level repair picks among these (semver's caret line sits in one branch of ten)."""


def _module_values(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each module-level assignment of ``text`` to one name."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    values = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and node.end_lineno is not None:
            values.append((target.id, node.lineno, node.end_lineno))
    return values


def values_used(place: Place, text: str) -> list[Place]:
    """The module-level values of ``place``'s file (``text``) that it uses by name, each an assignment of more
    than one line (a verbose regex, a table: one line is read in the function's own prompt as well as anywhere),
    in the order the place first uses them."""
    values = {name: (a, b) for name, a, b in _module_values(text) if b > a}
    body = "\n".join(text.splitlines()[place.start - 1:place.end])
    used = sorted((m.start(), name) for name in values
                  if (m := re.search(rf"(?<![\w.]){re.escape(name)}\b", body)))
    return [Place(path=place.path, name=name, start=values[name][0], end=values[name][1], kind="value",
                  why=f"a module-level value `{place.name}` uses") for _, name in used]


def failing_test_frames(output: str, root: Path) -> list[tuple[str, int, str]]:
    """(path, line, function) of the test frames a failing run shows, in order, each test once; pytest's summary
    lines (``FAILED tests/x.py::test_y``) name a test without a line (0)."""
    found: dict[tuple[str, str], tuple[str, int, str]] = {}
    for frame in printed_frames(output, root, (_PYTEST, _PYTHON, _FAILED)):
        if is_test_path(frame.path):
            found.setdefault((frame.path, frame.function), (frame.path, frame.line, frame.function))
    return list(found.values())


def _span(locate: Locate, name: str, path: str, line: int | None = None) -> tuple[int, int] | None:
    spans = [(a, b) for p, a, b in locate(name) if p == path and (line is None or a <= line <= b)]
    return min(spans, key=lambda s: s[1] - s[0]) if spans else None


def _stub(read: Read | None, path: str, end: int) -> bool:
    """A definition whose last line is ``...`` or ends ``: ...`` (a ``typing.overload`` signature, a protocol's
    method): nothing to fix there."""
    lines = ((read(path) if read else None) or "").splitlines()
    last = lines[end - 1].strip() if 0 < end <= len(lines) else ""
    return last == "..." or last.endswith(": ...")


def _called(code: str) -> list[str]:
    """What ``code`` calls, in the order it is written: named calls and the special methods its operators run
    (``cache[key] = v`` runs ``__setitem__``, ``key in cache`` ``__contains__``, ``len(cache)`` ``__len__``)."""
    at = [(m.start(1), m.group(1)) for pattern in (_CALL, _CHAINED) for m in pattern.finditer(code)]
    for m in _SUBSCRIPT.finditer(code):
        at.append((m.start(), "__delitem__" if m.group("del") else "__setitem__" if m.group("set") else "__getitem__"))
    for m in _CONTAINS.finditer(code):
        line = code[code.rfind("\n", 0, m.start()) + 1:m.start()]
        if not _FOR_TARGET.search(line):  # ``for key in cache`` iterates, it does not ask
            at.append((m.start(), "__contains__"))
    at += [(m.start(), "__len__") for m in _LEN.finditer(code)]
    return [name for _, name in sorted(at, key=lambda item: item[0])]


Chain = list[tuple[str, int, int]]
"""A class the test uses and its bases, nearest first, each as (path, start, end) of its definition."""


def _chains(code: str, locate: Locate, read: Read) -> list[Chain]:
    """For each project class ``code`` names (``LRUCache[int, int](maxsize=2)``), the class and its project bases
    in the order Python looks a method up (depth first, each class once): a method the test calls on its object
    is the one the first of them defines."""
    chains: list[Chain] = []
    for name in dict.fromkeys(_CLASS_NAME.findall(code)):
        chain: Chain = []
        todo, seen = [name], set()
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            for path, start, end in locate(current):
                lines = ((read(path) or "").splitlines() if path.endswith(".py") and not is_test_path(path) else [])
                head = lines[start - 1] if 0 < start <= len(lines) else ""
                if not head.lstrip().startswith("class "):
                    continue
                chain.append((path, start, end))
                bases = _BASES.match(head)
                todo = [b.strip().split(".")[-1] for b in (bases.group(1).split(",") if bases else [])
                        if b.strip() and "=" not in b] + todo
                break
        if chain:
            chains.append(chain)
    return chains


def _resolved(defs: list[tuple[str, int, int]], chains: list[Chain]) -> list[tuple[str, int, int]]:
    """The definitions among ``defs`` a test's objects would run: for each class the test uses, the method of the
    first class in its lookup order that defines one; [] when no class of the test defines it."""
    picked: list[tuple[str, int, int]] = []
    for chain in chains:
        for path, start, end in chain:
            inside = [d for d in defs if d[0] == path and start < d[1] <= end]
            if inside:
                picked += [d for d in inside[:1] if d not in picked]
                break
    return picked


def _add_called(found: dict[tuple[str, str], Place], names: list[str], caller: str, test: str, locate: Locate,
                limit: int, caller_path: str = "", read: Read | None = None,
                chains: list[Chain] | None = None) -> list[Place]:
    """The project's definitions of ``names`` (what ``caller`` calls) added to ``found`` up to ``limit``; the new
    ones. A method that several classes define is the one of the classes the test uses (``chains``: the class,
    then its bases), when one of them defines it. Otherwise, a name defined in more than two places is narrowed
    to those in the caller's own file (a method the caller's class calls on itself: itsdangerous defines
    ``unsign`` once in signer.py and three times in timed.py, two of them overload stubs, which are never places);
    one still ambiguous, only in tests, or not in the project, is passed over."""
    added: list[Place] = []
    for name in dict.fromkeys(names):
        if len(found) >= limit:
            break
        if name[:1].isupper() and caller == test and (init := _constructor(name, locate, read)) is not None:
            # the test builds an object of the project's class (``Serializer(secret, digest_method=...)``, a
            # keyword the change is to add): its ``__init__`` runs the call
            if (init.path, f"__init__@{init.start}") not in found:
                found[(init.path, f"__init__@{init.start}")] = init
                added.append(init)
            continue
        if name in _IGNORED or name in (test, caller) or name[:1].isupper():  # a class (an exception raised)
            continue
        defs = [(p, a, b) for p, a, b in locate(name) if not is_test_path(p) and p.endswith(".py") and b - a < _MAX_LINES
                and not _stub(read, p, b)]
        special = name.startswith("__") and name.endswith("__")
        if (len(defs) > 1 or special) and chains and (resolved := _resolved(defs, chains)):
            defs = resolved
        elif special:  # ``x[0]`` runs the project's ``__getitem__`` only when x is of a class the test uses
            continue
        elif len(defs) > 2:
            defs = [d for d in defs if d[0] == caller_path]
        if caller != test:  # a call further down: a one- or two-line accessor (peek, has_next) is passed over
            defs = [d for d in defs if d[2] - d[1] >= _TRIVIAL_LINES]
        if not defs or len(defs) > 2:  # not the project's, or too ambiguous to guess
            continue
        for p, a, b in defs:  # (a method two classes define: both are candidates' places)
            if (p, f"{name}@{a}") not in found:
                found[(p, f"{name}@{a}")] = Place(path=p, name=name, start=a, end=b, why=f"called by {caller}")
                added.append(found[(p, f"{name}@{a}")])
    return added


def _constructor(name: str, locate: Locate, read: Read | None) -> Place | None:
    """The ``__init__`` of the project's one class ``name`` (Python, not a test's), as a place; None when there is
    no such class or it defines none of its own (an exception class that takes its base's)."""
    header = re.compile(rf"\s*class\s+{re.escape(name)}\b")

    def is_class(path: str, line: int) -> bool:
        lines = ((read(path) if read else None) or "").splitlines()
        return 0 < line <= len(lines) and header.match(lines[line - 1]) is not None

    classes = [(p, a, b) for p, a, b in locate(name) if not is_test_path(p) and p.endswith(".py") and is_class(p, a)]
    if len(classes) != 1:
        return None
    path, start, end = classes[0]
    inits = [(a, b) for p, a, b in locate("__init__") if p == path and start < a <= end and b - a < _MAX_LINES
             and not _stub(read, p, b)]  # (itsdangerous' Serializer has four overload signatures first)
    if not inits:
        return None
    a, b = min(inits)
    return Place(path=path, name="__init__", start=a, end=b, why=f"constructor of {name}, called by the test")


def places(outputs: list[str], roots: list[Path], locate: Locate, read: Read, limit: int = 2,
           hops: int = 1) -> list[Place]:
    """Where the fix may belong, most likely first: the failing run's innermost source frames (their function),
    then the source definitions the failing tests call (a traceback that ends in the test's own assertion): what
    the failing line calls, then what those call (``hops`` calls deep, their bodies below the def line), then the
    rest."""
    found: dict[tuple[str, str], Place] = {}
    for output, root in zip(outputs, roots, strict=True):
        for frame in frames(output, root):
            unwritten = language(frame.path)[1] == "python" and not frame.path.endswith(".py")  # no prompt for it
            if frame.function == "<module>" or unwritten:  # (nor is a module's own code a function to rewrite)
                continue
            span = _span(locate, frame.function, frame.path, frame.line)
            if span and span[1] - span[0] < _MAX_LINES:
                found.setdefault((frame.path, f"{frame.function}@{span[0]}"), Place(
                    path=frame.path, name=frame.function, start=span[0], end=span[1], why="frame of the failing run"))
    for output, root in zip(outputs, roots, strict=True):
        for path, line, function in failing_test_frames(output, root):
            if len(found) >= limit:
                break
            text = read(path)
            span = _span(locate, function, path, line or None)
            if not text or not span:
                continue
            lines = text.splitlines()
            body = "\n".join(lines[span[0] - 1:span[1]])
            failing = lines[line - 1] if span[0] <= line <= min(span[1], len(lines)) else ""
            chains = _chains(body, locate, read)

            # what the failing line calls first (``assert signer.validate(signed)``), then what that calls in turn,
            # ``hops`` calls deep (a bug often sits calls further than the assertion: its-bug-key-rotation's is in
            # validate -> unsign -> verify_signature), then what the rest of the test calls, as deep (dotenv's
            # failing line is ``assert list(result) == expected``: the call is on the line before).
            for code in (failing, body):
                frontier = _add_called(found, _called(code), function, function, locate, limit, read=read,
                                       chains=chains)
                for _ in range(hops):
                    following: list[Place] = []
                    for called in frontier:
                        source = read(called.path)
                        if source:
                            calls = _CALL.findall("\n".join(source.splitlines()[called.start:called.end]))
                            following += _add_called(found, calls, called.name, function, locate, limit, called.path,
                                                     read, chains)
                    frontier = following
    return list(found.values())[:limit]


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_COMMON = frozenset("the and for with that this from which what when where does should into its are was were has "
                    "have not but can you your our get set new why how code file function method value line check "
                    "test fails failing wrong fix find tell".split())


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in _COMMON}


def relevance(name: str, question: str) -> int:
    """How many words of the function's name (split at its camel humps and underscores) the question uses, a
    word matching another that begins the same way (``carets`` and ``caret``, ``comparePre`` and
    ``prerelease``: a common start of five characters, or all of the shorter word)."""
    asked = _words(question)
    return sum(1 for word in _words(name) if any(
        (short := min(len(word), len(other))) and word[:min(5, short)] == other[:min(5, short)]
        and (short >= 5 or word.startswith(other) or other.startswith(word)) for other in asked))


_TRACED_LINES = 8
"""A value's most suspicious lines kept, as a traced function's (:data:`contenox.verify.trace._LINES`)."""


def _ran_in(r: Ran) -> str:
    """Which tests ran it, in words ("ran in 2 of 3 failing tests and 4 passing")."""
    tests = "the failing test" if r.of == 1 else f"{r.failed} of {r.of} failing tests"
    return f"ran in {tests}" + (f" and {r.passed} passing" if r.passed else "")


def _traced_values(ran: list[Ran], read: Read | None) -> dict[tuple[str, int], Place]:
    """The module-level values whose lambdas the failing tests ran (a table of formatters: isodate's
    ``STRF_DT_MAP``, whose ``%w`` entry only the failing cases ran), each a place as suspicious as its most
    suspicious lambda, with their lines."""
    told: dict[tuple[str, int], Place] = {}
    texts: dict[str, list[tuple[str, int, int]]] = {}
    for r in ran:
        if r.name != "<lambda>" or read is None:
            continue
        if r.path not in texts:
            texts[r.path] = _module_values(read(r.path) or "")
        value = next(((name, a, b) for name, a, b in texts[r.path] if a <= r.line <= b), None)
        if value is None or value[2] - value[1] >= _MAX_LINES:
            continue
        name, a, b = value
        place = Place(path=r.path, name=name, start=a, end=b, kind="value", suspicion=r.suspicion or r.score,
                      why=f"a lambda of it {_ran_in(r)}", ran=r.ran,
                      lines=tuple((n, x) for n, x in r.lines if a <= n <= b))
        had = told.get((r.path, a))
        if had is not None:  # another entry of the same table: the most suspicious says why
            place = msgspec.structs.replace(
                had if had.suspicion >= place.suspicion else place, ran=tuple(sorted({*had.ran, *place.ran})),
                lines=tuple(sorted({*had.lines, *place.lines}, key=lambda item: (-item[1], item[0]))[:_TRACED_LINES]))
        told[(r.path, a)] = place
    return told


def blind(ran: list[Ran]) -> bool:
    """A trace that ranks no function above another: each function it ran, only the one failing test ran (a ``node
    -e`` check, a lone test, or passing tests that ran none of them), so it tells which functions ran, not which is
    wrong. No trace is not blind."""
    return bool(ran) and all(r.passed == 0 and r.of == 1 for r in ran)


def with_traced(found: list[Place], ran: list[Ran], locate: Locate, limit: int, question: str = "",
                read: Read | None = None) -> list[Place]:
    """The places found, told by a trace of the failing run: a place no failing test ran is dropped (of four
    same-named wrappers, the one that ran stays), except a frame the traceback printed; then the functions the
    trace adds; all of them ordered most suspicious first (a traceback's frame counts as most suspicious; ties in
    that order), the first ``limit`` kept. No trace (``ran`` empty): the places as
    found. A :func:`blind` trace says no function is more suspicious than another (suspicion 0: a frame the
    traceback printed comes first; the node orders the rest by :func:`relevance` to the question, then by the
    model's picks) and orders what it adds by nearness and :func:`relevance` to ``question``. A module-level lambda
    that ran tells its value (a table, read with ``read``), as a place of its own."""
    if not ran:
        return found
    # one failing run and no passing one (a ``node -e`` check, a lone test): every function it ran is as
    # suspicious as the next, so its lines say nothing, and the functions nearest the test come first (a Python
    # trace knows how near; V8's coverage does not), then those whose names use the question's words
    # (``replaceCaret`` for "the caret range"), ties in the order they ran
    tied = blind(ran)
    if tied and question:
        order = {id(r): k for k, r in enumerate(ran)}
        ran = sorted(ran, key=lambda r: (r.depth, -relevance(r.name.rsplit(".", 1)[-1], question), order[id(r)]))
    traced: dict[tuple[str, int], Place] = {} if tied else _traced_values(ran, read)
    for r in ran:
        span = span_of(r, locate)
        if span is None or span[1] - span[0] >= _MAX_LINES or (r.path, span[0]) in traced:
            continue
        below = "" if r.depth >= 99 else ", called by the test" if r.depth == 1 else f", {r.depth} calls below the test"
        traced[(r.path, span[0])] = Place(path=r.path, name=r.name.rsplit(".", 1)[-1], start=span[0], end=span[1],
                                          why=_ran_in(r) + below, suspicion=0.0 if tied else r.suspicion or r.score,
                                          lines=() if tied else tuple((n, x) for n, x in r.lines
                                                                       if span[0] <= n <= span[1]),
                                          ran=tuple(n for n in r.ran if span[0] <= n <= span[1]))
    kept = []
    for p in found:
        told = traced.get((p.path, p.start))
        if p.why == "frame of the failing run" and (told is None or tied):  # (a blind trace tells less than it)
            kept.append(msgspec.structs.replace(p, suspicion=1.0, ran=told.ran if told else ()))
        elif told is not None:
            kept.append(msgspec.structs.replace(p, suspicion=told.suspicion, lines=told.lines, ran=told.ran))
    have = {(p.path, p.start) for p in kept}
    # ordered before the cut: on h11 the calls read from the test filled the ten places, and the bug's function,
    # second by the trace, was cut with everything else the trace added
    return sorted([*kept, *(p for key, p in traced.items() if key not in have)], key=lambda p: -p.suspicion)[:limit]


_QUESTION_CHARS = 1500


def _failure(command: str, failing_output: str, test_code: str, *, tail_chars: int, test_note: str,
             question: str = "", fence: str = "python") -> list[str]:
    """The parts of a focused prompt that say why the check fails: the user's question (what should happen, in
    their words), the test when known, the output's tail."""
    tail = failing_output.strip()
    if len(tail) > tail_chars:
        tail = "...\n" + tail[-tail_chars:]
    parts = []
    if question.strip():
        asked = question.strip()
        asked = asked if len(asked) <= _QUESTION_CHARS else asked[:_QUESTION_CHARS] + " ..."
        parts.append("The user's report:\n> " + asked.replace("\n", "\n> "))
    if test_code.strip():
        parts.append(f"The failing test{test_note}:\n```{fence}\n{test_code.rstrip()}\n```")
    parts.append(f"`{command}` fails:\n```\n{tail}\n```")
    return parts


_LOCALIZE_LINES = 40
_LOCALIZE_CHARS = 9000


def localize_prompt(candidates: list[tuple[Place, str]], command: str, failing_output: str, test_code: str = "",
                    question: str = "") -> str:
    """The user message of a localization (Agentless's second step, done by the model): the user's question, the
    failing check, the test, and the places found, numbered, each with its code (its first 40 lines; all of them
    within ~9k characters). The answer is a number (:func:`~contenox.verify.grammar.choice_grammar`)."""
    fence = language(candidates[0][0].path)[1] if candidates else "python"
    parts = _failure(command, failing_output, test_code, tail_chars=2000, test_note="", question=question, fence=fence)
    budget = _LOCALIZE_CHARS // max(1, len(candidates))
    for number, (place, code) in enumerate(candidates, 1):
        lines = code.rstrip().splitlines()
        shown = "\n".join(lines[:_LOCALIZE_LINES])[:budget]
        more = "\n    ..." if shown != "\n".join(lines) else ""
        parts.append(f"[{number}] `{place.name}` in {place.path} (lines {place.start}-{place.end}):\n"
                     f"```{language(place.path)[1]}\n"
                     f"{shown}{more}\n```")
    parts.append(f"Which one of the {len(candidates)} functions above must change for `{command}` to pass? Reply "
                 "with its number only.")
    return "\n\n".join(parts)


def related_part(related: list[tuple[str, str]], fence: str = "python") -> list[str]:
    """The prompt part that shows, read-only, the other methods of the place's class the failing tests ran (a
    fix often restores what a sibling sets up or reads: ``cache_clear`` must reset what ``cache_info`` reports)."""
    if not related:
        return []
    cls = related[0][0].rsplit(".", 1)[0]
    code = "\n\n".join(text.rstrip() for _, text in related)
    return [f"Other methods of `{cls}` the failing test ran (for reference: leave them as they are):\n"
            f"```{fence}\n{code}\n```"]


def focus_prompt(place: Place, code: str, command: str, failing_output: str, test_code: str = "",
                 question: str = "", related: list[tuple[str, str]] | None = None) -> str:
    """The user message of a focused repair: the user's question (Agentless gives its repair step the issue's
    text; the failing output alone does not say what should happen), why it fails, the test when known, the
    other methods of its class the failing tests ran (``related``: qualified name, code), the function to
    rewrite."""
    fence = language(place.path)[1]
    parts = _failure(command, failing_output, test_code, tail_chars=2500, test_note=" (leave it as it is)",
                     question=question, fence=fence) + related_part(related or [], fence)
    parts.append(f"`{place.name}` in {place.path} (lines {place.start}-{place.end}):\n```{fence}\n{code.rstrip()}\n```")
    what = "definition" if place.kind == "value" else "function"
    parts.append(f"`{place.name}` as shown is what makes the check fail: a copy of it unchanged is no fix. Rewrite "
                 f"`{place.name}` so that the check passes, changing the line(s) that are wrong. Reply with the whole "
                 f"corrected {what} in one ```{fence} code block.")
    return "\n\n".join(parts)


_CLOSING = re.compile(r"^[\s)\]}>;,]*$")
_SCRIPT_COMMENT = re.compile(r"^\s*(?://|/\*|\*)")


def pickable_lines(code: str, path: str = "") -> list[int]:
    """The lines of ``code`` (a function; 0-based) a line-level repair may change: not blank, not a comment alone,
    not the docstring, not closing brackets alone (``})``). ``path``: the file's, for its language's comments."""
    lines = code.splitlines()
    if language(path)[1] != "python":
        return [i for i, line in enumerate(lines) if not _CLOSING.match(line) and not _SCRIPT_COMMENT.match(line)]
    docstring: set[int] = set()
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        tree = None
    if tree is not None and tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        first = tree.body[0].body[0] if tree.body[0].body else None
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
                and first.end_lineno is not None):
            docstring = set(range(first.lineno - 1, first.end_lineno))
    return [i for i, line in enumerate(lines)
            if line.strip() and not line.strip().startswith("#") and i not in docstring]


_ELEMENT_LINES = 6  # the most entries one fill puts in a table


def _entry_points(statement: ast.stmt) -> list[tuple[int, int]] | None:
    """Where an entry may be put in the literal a module value's assignment writes over several lines (a dict, a
    list, a tuple, a set): ``(after, line)``, the 1-based line an entry ends on (the line before the next one's
    start, or before the closing bracket's own line: an entry's brackets and comma are its own) and the line it
    starts on (whose indentation a new entry copies); none after an entry on the opening line or one the closing
    bracket follows on its line. None for any other statement."""
    value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
    if value is None or (value.end_lineno or value.lineno) <= value.lineno:
        return None
    if isinstance(value, ast.Dict):
        starts = [key if key is not None else item for key, item in zip(value.keys, value.values, strict=True)]
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        starts = list(value.elts)
    else:
        return None
    closing = value.end_lineno or value.lineno
    ends = [later.lineno - 1 for later in starts[1:]] + [closing - 1]
    return [(end, start.lineno) for start, end in zip(starts, ends, strict=True)
            if start.lineno > value.lineno and end >= (start.end_lineno or start.lineno)]


def insertion_points(code: str, path: str = "") -> list[tuple[int, int]]:
    """Where a line missing from ``code`` (a Python function) may go: ``(after, indent)``, the 0-based line the new
    line follows and its indentation's width; at the start and after each statement of every block of the body
    (not inside a statement that spans lines, not before the docstring), in order. For a module value that is a
    literal written over several lines (a table: ``UNITS = {...}``), after each of its entries, at the entries'
    indentation: an entry the table lacks. Other languages: none (their blocks are not parsed here)."""
    if language(path)[1] != "python":
        return []
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return []
    shift = len(code.splitlines()[0]) - len(code.splitlines()[0].lstrip())  # what the dedent took
    if tree.body and (entries := _entry_points(tree.body[0])) is not None:
        lines = code.splitlines()
        return sorted({(after - 1, len(lines[start - 1]) - len(lines[start - 1].lstrip())) for after, start in entries})
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    points: set[tuple[int, int]] = set()

    def block(statements: list[ast.stmt], docstring: bool = False) -> None:
        if not statements:
            return
        indent = statements[0].col_offset + shift
        if not docstring:
            points.add((statements[0].lineno - 2, indent))
        for statement in statements:
            points.add(((statement.end_lineno or statement.lineno) - 1, indent))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    block(inner)
            for handler in getattr(statement, "handlers", []) or []:
                block(handler.body)
            for case in getattr(statement, "cases", []) or []:
                block(case.body)

    body = tree.body[0].body
    first = body[0] if body else None
    docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                 and isinstance(first.value.value, str))
    block(body, docstring)
    return sorted(points)


_KEY = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[\w.+-]+)\s*:(?!=)""")
"""A dict entry's key at a line's start (a string, a name or a number), before its colon."""


def entry_key(line: str) -> str | None:
    """The key of the dict entry ``line`` begins (a string's value, however quoted; a name or number as written);
    None when it begins none."""
    match = _KEY.match(line)
    if match is None:
        return None
    key = match.group(1)
    return key[1:-1] if key[0] in "\"'" else key


def filled_lines(fill: str, indent: int, inserted: bool = False, elements: bool = False,
                 taken: Iterable[str] = ()) -> str:
    """What of a model's fill-in-the-middle fill goes in for one line, written after the line's ``indent`` (its
    width): the fill's first line (a fill that runs on into the code after it is cut there); for a line put in
    (``inserted``) that opens a block (``if ...:``), the block with it: the fill's next lines while they are
    indented deeper than ``indent`` ('' when none is: a header alone does not parse); for lines put in among a
    literal's elements (``elements``: a table's missing entries), the fill's next lines too while each is one more
    element at the same column (up to the first that closes the literal or sits elsewhere), each with its comma,
    less the dict entries whose key the literal holds already (``taken``) or an earlier one of the fill does (a
    key written twice is a linter's error, and the later entry silently wins: the 0.5B's fill of a units table
    wrote `"s": 1` and `"m": 60` again around the `"d"` it lacked). The fill's lines after the first carry their
    own indentation."""
    first, _, more = fill.partition("\n")
    first = first.rstrip()
    if inserted and elements:
        kept = [first]
        for line in more.split("\n")[:_ELEMENT_LINES - 1]:
            body = line.strip()
            if not body or len(line) - len(line.lstrip()) != indent or body[0] in ")]}":
                break
            kept.append(line.rstrip())
        if not first.strip() or first.strip()[0] in ")]}":
            return ""
        keys = set(taken)
        new: list[str] = []
        for number, line in enumerate(kept):
            if (key := entry_key(line)) is not None:
                if key in keys:
                    continue
                keys.add(key)
            # the first line goes in after the indentation the caller puts before it
            new.append(line.lstrip() if number and not new else line)
        # each entry ends with its comma (one the model left off before the next entry would not parse; a
        # trailing comma always does)
        return "\n".join(line if line.endswith((",", "(", "[", "{")) else f"{line}," for line in new)
    if not inserted or not first.endswith(":"):
        return first
    block: list[str] = []
    for line in more.split("\n"):
        if not line.strip() or len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line.rstrip())
    return "\n".join([first, *block]) if block else ""


def _numbered(place: Place, code: str) -> str:
    lines = code.rstrip().splitlines()
    width = len(str(place.start + len(lines)))
    return "\n".join(f"{place.start + i:>{width}} | {line}" for i, line in enumerate(lines))


def line_pick_prompt(place: Place, code: str, command: str, failing_output: str, test_code: str = "",
                     question: str = "") -> str:
    """The user message of a line-level localization (Agentless's edit locations, picked by the model): the
    failure as a focused prompt gives it, and the function with its file line numbers; the answer is one of
    them (:func:`~contenox.verify.grammar.number_grammar`)."""
    parts = _failure(command, failing_output, test_code, tail_chars=2500, test_note=" (leave it as it is)",
                     question=question, fence=language(place.path)[1])
    parts.append(f"`{place.name}` in {place.path}, its lines numbered as in the file:\n```\n{_numbered(place, code)}\n```")
    parts.append(f"Which line of `{place.name}` is wrong? Reply with its number only.")
    return "\n\n".join(parts)


def line_prompt(place: Place, code: str, index: int, command: str, failing_output: str, test_code: str = "",
                question: str = "", related: list[tuple[str, str]] | None = None) -> str:
    """The user message of a line-level repair: the focused prompt's failure, related methods and function, and
    the one line (``index``, 0-based in ``code``) that must change; the answer is the function with that line
    changed (:func:`~contenox.verify.grammar.line_repair`)."""
    fence = language(place.path)[1]
    parts = _failure(command, failing_output, test_code, tail_chars=2500, test_note=" (leave it as it is)",
                     question=question, fence=fence) + related_part(related or [], fence)
    parts.append(f"`{place.name}` in {place.path} (lines {place.start}-{place.end}):\n```{fence}\n{code.rstrip()}\n```")
    line = code.splitlines()[index].strip()
    parts.append(f"Line {place.start + index} of `{place.name}` is what makes the check fail:\n```{fence}\n{line}\n```\n"
                 f"Rewrite `{place.name}` with that line corrected. Reply with the whole corrected "
                 f"{'definition' if place.kind == 'value' else 'function'} in one ```{fence} code block.")
    return "\n\n".join(parts)
