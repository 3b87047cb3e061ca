"""The failing check run traced: which of the workspace's functions each test ran.

A traceback names the frames a failure passed through, and reading the test names what it calls; neither sees a
constructor run by a descriptor, a method reached through a decorator's wrapper, or which of four same-named
wrappers ran. The check's first run (the workspace as it is, before any candidate) is therefore run with a
profiler laid in through ``sitecustomize`` (a folder of the node's, first on ``PYTHONPATH``; a project's own
``sitecustomize`` still runs after it): every call of a function defined under the scratch copy is recorded, per
pytest test (``PYTEST_CURRENT_TEST``), and written when the process ends. Nothing else changes: the same command,
in the same copy, with the same consent; the output is the check's own.

The functions the failing tests ran are ranked as spectrum-based fault localization does (AutoCodeRover uses it
for the same step): Ochiai's ``failed(f) / sqrt(failed * (failed(f) + passed(f)))``, then the order first run.

A JavaScript check is traced by V8 itself: ``NODE_V8_COVERAGE`` (set on the same run) makes every Node process
write its precise block coverage when it ends; :func:`read_trace` reads the functions of the scratch copy that
ran, and their lines, as the whole run's (a ``node -e`` check names no tests: the run is the failing test).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from contenox.verify.localize import _SCRIPT, _TEST, is_test_path

__all__ = ["TRACER", "Calls", "Key", "Ran", "ran_functions", "read_node_coverage", "read_trace", "span_of",
           "trace_env"]

_TRACER = '''\
# Written by contenox for one traced check run (the node's own folder, never the project's): records which
# functions of the project each test calls (and their lines that ran), and writes them when the process ends.
import os as _os
import sys as _sys


def _contenox_trace():
    out, root = _os.environ.get("CONTENOX_TRACE_OUT"), _os.environ.get("CONTENOX_TRACE_ROOT")
    if not out or not root:
        return
    import atexit
    import json
    import re
    import threading

    root = _os.path.realpath(root) + _os.sep
    environ, files, ran = _os.environ, {}, {}
    test_path = re.compile(TEST_PATTERN).search

    def rel(filename):
        try:
            return files[filename]
        except KeyError:
            real = _os.path.realpath(filename) if filename and not filename.startswith("<") else ""
            files[filename] = found = real[len(root):] if real.startswith(root) else None
            return found

    rendering = re.compile(RENDERING_PATTERN).search
    renders, quiet = {}, [0]

    def renderer(filename):
        try:
            return renders[filename]
        except KeyError:
            renders[filename] = found = bool(rendering(filename))
            return found

    def unrecorded(frame, event, arg):
        if event == "return":
            quiet[0] -= 1
        return unrecorded

    def tracer(frame, event, arg):
        if event != "call" or quiet[0]:
            return None
        code = frame.f_code
        if not code.co_flags & 1:  # not a function's code (CO_OPTIMIZED): a class body, a module
            return None
        path, caller = rel(code.co_filename), frame.f_back
        if caller is not None and renderer(caller.f_code.co_filename) and rel(caller.f_code.co_filename) is None \
                and (path is None or not test_path(path)):
            # a failure's report calling the project (repr, ==), or code between (a dataclass's generated
            # ``__repr__``), and all it calls: not the test's run
            quiet[0] += 1
            return unrecorded
        if path is None:
            return None
        test = environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        seen = ran.get(test)
        if seen is None:
            ran[test] = seen = {}
        key = (path, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))
        entry = seen.get(key)
        if entry is None:  # how many calls below the test's own code (99: none above it)
            depth, caller = 1, frame.f_back
            while caller is not None and depth < 99:
                where = rel(caller.f_code.co_filename)
                if where is not None and test_path(where):
                    break
                depth, caller = depth + 1, caller.f_back
            seen[key] = entry = (depth if caller is not None else 99, set())
        if test_path(path):
            return None
        lines = entry[1]

        def local(frame, event, arg):  # the lines each function of the project ran (a test's own: not needed)
            if event == "line":
                lines.add(frame.f_lineno)
            return local
        return local

    def dump():
        _sys.settrace(None)
        threading.settrace(None)
        try:
            with open(_os.path.join(out, "%d.json" % _os.getpid()), "w") as fh:
                json.dump({test: [[*key, depth, sorted(lines)] for key, (depth, lines) in seen.items()]
                           for test, seen in ran.items()}, fh)
        except Exception:
            pass

    atexit.register(dump)
    threading.settrace(tracer)
    _sys.settrace(tracer)


def _contenox_next():
    import importlib.machinery
    import importlib.util

    here = _os.path.dirname(_os.path.abspath(__file__))
    path = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


try:
    _contenox_trace()
except Exception:
    pass
try:
    _contenox_next()
except Exception:
    pass
'''

_RENDERING = re.compile(r"[/\\](?:_pytest[/\\](?:_io|assertion|_code)[/\\][^/\\]+|unittest[/\\]util\.py|reprlib\.py|pprint\.py"
                        r"|traceback\.py)$")
"""Where a failure's report is written (pytest's assertion messages, safe repr and exception info, unittest's
``safe_repr``, ``reprlib``, ``pprint``, ``traceback``'s formatting): what they call in the project renders the
failure, and is not recorded. An exception's ``__str__``, called only to print the failing test's error, ranked
first of all on itsdangerous' base64 task (its own line ran in the failing test alone) before ``traceback`` was
one of them."""
TRACER = _TRACER.replace("TEST_PATTERN", repr(_TEST.pattern)).replace("RENDERING_PATTERN", repr(_RENDERING.pattern))
"""The ``sitecustomize`` laid in: the tracer, with the pattern of test paths (calls are counted from the test)."""
_PARAMS = re.compile(r"\[.*$")
"""A test id's parameters, from their opening bracket (to the end: an id cut short has no closing one)."""


class Ran(msgspec.Struct, frozen=True, kw_only=True):
    """A function of the workspace the failing tests ran."""

    path: str
    line: int
    """The code object's first line (a decorated function's first decorator)."""
    name: str
    """Its qualified name (``LRUCache.__getitem__``, ``cached.<locals>.decorator``)."""
    failed: int
    """Failing tests that ran it."""
    of: int
    """Failing tests in all."""
    passed: int
    """Passing tests that ran it."""
    score: float
    """Ochiai's suspiciousness."""
    depth: int
    """The fewest calls between a failing test's own code and it (1: the test calls it; 99: not under a test)."""
    lines: tuple[tuple[int, float], ...] = ()
    """Its lines the failing tests ran, most suspicious first (each line's own Ochiai), up to eight."""
    suspicion: float = 0.0
    """Its most suspicious line's score (``score`` when no lines were recorded): a function every test runs can
    still hold the one line only the failing tests reach."""
    ran: tuple[int, ...] = ()
    """Every line of it the failing tests ran (none recorded: not known)."""


def trace_env(env: Mapping[str, str], folder: Path, tree: Path) -> dict[str, str]:
    """``env`` with the tracer first on ``PYTHONPATH``, recording calls of functions under ``tree`` into
    ``folder/out``, and V8's coverage written into ``folder/v8`` (all made afresh)."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "site").mkdir(parents=True)
    (folder / "out").mkdir()
    (folder / "site" / "sitecustomize.py").write_text(TRACER, encoding="utf-8")
    path = [str(folder / "site"), *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return {**env, "PYTHONPATH": os.pathsep.join(path), "CONTENOX_TRACE_OUT": str(folder / "out"),
            "CONTENOX_TRACE_ROOT": str(tree), "NODE_V8_COVERAGE": str(folder / "v8")}


Key = tuple[str, int, str]
"""(path, first line, qualified name) of a function."""
Calls = tuple[int, frozenset[int]]
"""A function's depth below a test and its lines that ran in it."""


def read_trace(folder: Path, tree: Path | None = None) -> dict[str, dict[Key, Calls]] | None:
    """test id -> the functions it ran, in the order first run, each with its depth below the test and its lines
    that ran (every process of the run merged; ``""``: calls outside any pytest test). None when no process wrote
    one (not Python, or the tracer could not load). With ``tree`` (the copy the run ran in), a run that traced no
    Python but ran Node is read from V8's coverage (:func:`read_node_coverage`)."""
    written = sorted((folder / "out").glob("*.json"))
    if not written:
        return read_node_coverage(folder / "v8", tree) if tree is not None else None
    merged: dict[str, dict[Key, Calls]] = {}
    for file in written:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        for test, keys in data.items():
            seen = merged.setdefault(str(test), {})
            for entry in keys if isinstance(keys, list) else ():
                if isinstance(entry, list) and len(entry) == 5 and isinstance(entry[4], list):
                    key = (str(entry[0]), int(entry[1]), str(entry[2]))
                    depth, lines = seen.get(key, (99, frozenset()))
                    seen[key] = (min(depth, int(entry[3])), lines | {int(n) for n in entry[4]})
    return merged


_NAMED = re.compile(r"^(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?\*?\s*(constructor)\b")


def _line_starts(text: str) -> list[int]:
    """Each line's first offset in UTF-16 code units (V8's offsets count them)."""
    starts, at = [0], 0
    for line in text.splitlines(keepends=True):
        at += len(line.encode("utf-16-le")) // 2
        starts.append(at)
    return starts


def read_node_coverage(folder: Path, tree: Path | None) -> dict[str, dict[Key, Calls]] | None:
    """The functions of ``tree``'s scripts (not a test's, not ``node_modules``') that V8's block coverage
    (``NODE_V8_COVERAGE``, every process merged) saw run, as one whole run (test id ``""``): each named function
    with its lines that ran, in the order the processes loaded their scripts, each script's in source order; an
    anonymous function's lines (a callback) count as the named function around it; a class's constructor is
    named ``constructor``, as the index names it. None when no process wrote coverage of the copy."""
    if tree is None or not folder.is_dir():
        return None
    root = tree.resolve()
    ran: dict[Key, Calls] = {}
    for file in sorted(folder.glob("*.json")):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for script in data.get("result", []) if isinstance(data, dict) else []:
            url = str(script.get("url", "")) if isinstance(script, dict) else ""
            if not url.startswith("file://"):
                continue
            try:
                rel = Path(url[len("file://"):]).resolve().relative_to(root).as_posix()
                text = (root / rel).read_text(encoding="utf-8")
            except (ValueError, OSError, UnicodeDecodeError):
                continue
            if not _SCRIPT.search(rel) or "node_modules/" in rel or is_test_path(rel):
                continue
            for key, lines in _script_functions(rel, text, script.get("functions") or []).items():
                depth, seen = ran.get(key, (99, frozenset()))
                ran[key] = (depth, seen | lines)
    return {"": ran} if ran else None


def _script_functions(path: str, text: str, functions: list[dict[str, Any]]) -> dict[Key, frozenset[int]]:
    """One script's coverage: each named function that ran, with the lines whose first character's innermost
    range ran (a block that did not run, a nested function never called: not its lines)."""
    starts = _line_starts(text)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset)

    ranges: list[tuple[int, int, int]] = []  # (start, end, count) of every function and block
    named: list[tuple[int, int, str]] = []   # (start, end, name) of the named functions that ran
    for function in functions:
        spans = [(int(r["startOffset"]), int(r["endOffset"]), int(r["count"])) for r in function.get("ranges", [])
                 if isinstance(r, dict) and {"startOffset", "endOffset", "count"} <= r.keys()]
        if not spans:
            continue
        ranges += spans
        start, end, count = spans[0]
        name = str(function.get("functionName") or "")
        if count <= 0 or not name or start == 0:  # never called, anonymous, or the module's own code
            continue
        head = text[start:start + 60] if len(text) == len(text.encode("utf-16-le")) // 2 else ""
        if _NAMED.match(head):
            name = "constructor"
        named.append((start, end, name.split()[-1]))
    ran: dict[Key, frozenset[int]] = {}
    lines_text = text.splitlines()
    for start, end, name in named:
        inner = [(a, b) for a, b, _ in named if start <= a and b <= end and (a, b) != (start, end)]
        lines = set()
        for number in range(line_of(start), min(line_of(max(start, end - 1)), len(lines_text)) + 1):
            first = starts[number - 1] + len(lines_text[number - 1]) - len(lines_text[number - 1].lstrip())
            if not lines_text[number - 1].strip() or any(a <= first < b for a, b in inner):
                continue
            around = [r for r in ranges if r[0] <= max(first, start) < r[1]]
            if around and min(around, key=lambda r: r[1] - r[0])[2] > 0:
                lines.add(number)
        ran[(path, line_of(start), name)] = frozenset(lines)
    return ran


_LINES = 8


def _ochiai(failed: int, passed: int, failing: int) -> float:
    return round(failed / math.sqrt(failing * (failed + passed)), 4)


def ran_functions(trace: Mapping[str, Mapping[Key, Calls]], failed_ids: tuple[str, ...],
                  run_failed: bool) -> list[Ran]:
    """The non-test functions the failing tests ran (a module-level lambda, a table's entry, as ``<lambda>``: the
    table is the place, :func:`~contenox.verify.focus.with_traced`), most suspicious first: by their most suspicious line
    (Ochiai over lines), then the function's own Ochiai, then nearest the test's own code, then in the order
    first run. The failing tests are those ``failed_ids`` names, by their whole id, so a parametrized test's passing
    cases count as passing; an id the trace does not hold as it is counts every case of its function; when none of
    them was traced (not pytest) and the run failed, the whole run is the failing test."""
    def bare(test: str) -> str:
        return _PARAMS.sub("", test)

    exact = {t for t in failed_ids if t in trace}
    failed_bare = {bare(t) for t in failed_ids if t not in exact}
    failing = [t for t in trace if t and (t in exact or bare(t) in failed_bare)]
    if not failing and run_failed:
        failing = list(trace)
    passing = [t for t in trace if t and t not in failing]
    if not failing:
        return []
    first: dict[Key, int] = {}
    depth: dict[Key, int] = {}
    counts: dict[Key, list[int]] = {}
    line_counts: dict[Key, dict[int, list[int]]] = {}
    for test in failing:
        for key, (below, lines) in trace[test].items():
            if not is_test_path(key[0]) and (key[2] == "<lambda>" or not key[2].rsplit(".", 1)[-1].startswith("<")):
                first.setdefault(key, len(first))
                depth[key] = min(depth.get(key, 99), below)
                counts.setdefault(key, [0, 0])[0] += 1
                for n in lines:
                    line_counts.setdefault(key, {}).setdefault(n, [0, 0])[0] += 1
    for test in passing:
        for key, (_, lines) in trace[test].items():
            if key in counts:
                counts[key][1] += 1
                for n in lines:
                    if n in line_counts.get(key, {}):
                        line_counts[key][n][1] += 1
    ran = []
    for k, (f, p) in counts.items():
        score = _ochiai(f, p, len(failing))
        suspicious = sorted(((n, _ochiai(lf, lp, len(failing))) for n, (lf, lp) in line_counts.get(k, {}).items()),
                            key=lambda item: (-item[1], item[0]))[:_LINES]
        ran.append(Ran(path=k[0], line=k[1], name=k[2], failed=f, of=len(failing), passed=p, depth=depth[k],
                       score=score, lines=tuple(suspicious), suspicion=suspicious[0][1] if suspicious else score,
                       ran=tuple(sorted(n for n, (lf, _) in line_counts.get(k, {}).items() if lf))))
    return sorted(ran, key=lambda r: (-r.suspicion, -r.score, r.depth, first[(r.path, r.line, r.name)]))


def span_of(ran: Ran, locate: Callable[[str], list[tuple[str, int, int]]]) -> tuple[int, int] | None:
    """The definition's lines in the index (its def line may sit below the decorators the code object starts
    at)."""
    name = ran.name.rsplit(".", 1)[-1]
    spans = [(a, b) for path, a, b in locate(name) if path == ran.path and a <= ran.line + 20 and b >= ran.line]
    return min(spans, key=lambda s: abs(s[0] - ran.line)) if spans else None
