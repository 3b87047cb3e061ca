"""The failing check run traced: a real pytest run in a real folder, with the tracer laid in through
``sitecustomize``; which functions each test ran, how suspicious each is, and the places it tells."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from contenox.verify import failed_test_ids, python_env, run_check
from contenox.verify.focus import Place, with_traced
from contenox.verify.trace import Ran, ran_functions, read_trace, trace_env

SHOP = '''\
class Cart:
    """A cart (its body runs at import: not a function the trace keeps)."""

    def __init__(self):
        self.items = []

    def add(self, price):
        self.items.append(price)

    def total(self):
        return _sum(self.items)

    def discounted(self):
        return _apply(self.total())


def _sum(items):
    return sum(items)


def _apply(total):
    return total * 0.5 if total > 100 else total * 1.1  # the bug: a small cart costs more
'''

TESTS = '''\
from shop import Cart


def test_total():
    cart = Cart()
    cart.add(3)
    assert cart.total() == 3


def test_small_discount():
    cart = Cart()
    cart.add(10)
    assert cart.discounted() == 10
'''


def _run(root: Path, trace: Path | None) -> tuple[object, dict[str, str]]:
    env = python_env(root, {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])})
    if trace is not None:
        env = trace_env(env, trace, root)
    return run_check("python -m pytest -q -p no:cacheprovider tests/test_shop.py", root, env=env, timeout_s=120), env


def test_the_failing_test_s_functions_rank_first_and_the_run_is_the_check_s_own(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "shop.py").write_text(SHOP)
    (root / "tests" / "test_shop.py").write_text(TESTS)
    (root / "sitecustomize.py").write_text(  # the project's own: it still runs, after the tracer
        "import pathlib\npathlib.Path(__file__).with_name('customized').write_text('yes')\n")
    plain, _ = _run(root, None)
    (root / "customized").unlink()
    traced, env = _run(root, tmp_path / "trace")
    assert traced.outcome == plain.outcome == "failed"
    failed = failed_test_ids(traced.output)
    assert failed == failed_test_ids(plain.output) == ("tests/test_shop.py::test_small_discount",)
    assert (root / "customized").read_text() == "yes"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path / "trace" / "site")
    assert not (root / "sitecustomize.pyc").exists() and sorted(p.name for p in root.iterdir()) == [
        "customized", "shop.py", "sitecustomize.py", "tests"]  # nothing of the tracer's in the project

    trace = read_trace(tmp_path / "trace")
    assert trace is not None and set(trace) >= {"tests/test_shop.py::test_total", "tests/test_shop.py::test_small_discount"}
    ran = ran_functions(trace, failed, run_failed=True)
    by_name = {r.name: r for r in ran}
    # what only the failing test ran is the most suspicious; what both ran, less; the test's own code, the class
    # body and what only the passing test ran are not listed
    assert [r.name for r in ran] == ["Cart.discounted", "_apply", "Cart.__init__", "Cart.add", "Cart.total", "_sum"]
    assert by_name["Cart.discounted"].score == 1.0 and by_name["_apply"].score == 1.0
    assert by_name["Cart.total"].score < 1.0 and by_name["Cart.total"].passed == 1
    assert (by_name["Cart.discounted"].depth, by_name["Cart.total"].depth, by_name["_sum"].depth) == (1, 2, 3)
    assert by_name["_apply"].path == "shop.py" and by_name["_apply"].line == 21
    assert "Cart" not in by_name and not any(r.name.startswith("test_") for r in ran)
    # not pytest by id: the whole failing run counts as the failing test
    assert {r.name for r in ran_functions(trace, (), run_failed=True)} >= {"_apply", "_sum", "Cart.total"}
    assert ran_functions(trace, (), run_failed=False) == []
    assert read_trace(tmp_path / "nothing") is None  # nothing written: not traced (a check that is not Python)


def _locate(name: str) -> list[tuple[str, int, int]]:
    spans = {"helper": [("a.py", 1, 3), ("b.py", 10, 14)], "frame": [("a.py", 20, 25)], "deep": [("c.py", 5, 9)],
             "__init__": [("c.py", 2, 3)]}
    return spans.get(name, [])


def test_a_trace_drops_the_places_no_failing_test_ran_and_adds_what_it_did() -> None:
    found = [Place(path="a.py", name="helper", start=1, end=3, why="called by test_x"),
             Place(path="b.py", name="helper", start=10, end=14, why="called by test_x"),
             Place(path="a.py", name="frame", start=20, end=25, why="frame of the failing run")]
    ran = [Ran(path="b.py", line=10, name="helper", failed=1, of=1, passed=0, score=1.0, depth=1),
           Ran(path="c.py", line=5, name="Deep.deep", failed=1, of=1, passed=0, score=1.0, depth=3),
           Ran(path="c.py", line=2, name="Deep.__init__", failed=1, of=1, passed=2, score=0.58, depth=2)]
    told = with_traced(found, ran, _locate, 10)
    # a.py's helper never ran: dropped; the traceback's frame stays; the trace adds deep and __init__
    assert [(p.path, p.name) for p in told] == [("b.py", "helper"), ("a.py", "frame"), ("c.py", "deep"),
                                                 ("c.py", "__init__")]
    assert told[2].why == "ran in the failing test, 3 calls below the test"
    assert told[3].why == "ran in the failing test and 2 passing, 2 calls below the test"
    assert with_traced(found, ran, _locate, 2) == told[:2]
    two = [msgspec.structs.replace(r, of=2) for r in ran]  # one of two failing tests ran each
    assert with_traced(found, two, _locate, 10)[2].why == "ran in 1 of 2 failing tests, 3 calls below the test"
    assert with_traced(found, [], _locate, 10) == found  # no trace: the places as found


CLAMP = '''\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return lo  # the bug: only the failing test reaches this line
    return x


def widen(x):
    return x * 1
'''

CLAMP_TESTS = '''\
from calc import clamp, widen


def test_low():
    assert clamp(-1, 0, 10) == 0


def test_mid():
    assert clamp(widen(5), 0, 10) == 5


def test_high():
    assert clamp(widen(11), 0, 10) == 10
'''


def _traced_project(tmp_path: Path, module: str, source: str, tests: str) -> tuple[Any, Any]:
    """A project of one module and its test file, its tests run traced: (the run, the trace read)."""
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / f"{module}.py").write_text(source)
    (root / "tests" / f"test_{module}.py").write_text(tests)
    env = python_env(root, {**os.environ, "PYTHONPATH": str(root),
                            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])})
    run = run_check(f"python -m pytest -q -p no:cacheprovider tests/test_{module}.py", root,
                    env=trace_env(env, tmp_path / "trace", root), timeout_s=120)
    return run, read_trace(tmp_path / "trace")


def test_a_function_every_test_runs_is_most_suspicious_by_the_line_only_the_failing_test_ran(tmp_path: Path) -> None:
    """``clamp`` runs in all three tests (function-level Ochiai 0.58), ``widen`` in the failing one and one
    passing (0.71): by functions alone ``widen`` would rank first; by lines, ``clamp``'s line 5, which only the
    failing test ran, is the most suspicious line of all."""
    run, trace = _traced_project(tmp_path, "calc", CLAMP, CLAMP_TESTS)
    assert run.outcome == "failed"
    assert trace is not None
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    clamp, widen = ran
    assert (clamp.name, widen.name) == ("clamp", "widen")
    assert clamp.score < widen.score and clamp.suspicion == 1.0 > widen.suspicion == widen.score
    assert clamp.lines[0] == (5, 1.0) and dict(clamp.lines)[4] < 1.0 and dict(clamp.lines)[2] < dict(clamp.lines)[4]
    assert 3 not in dict(clamp.lines)  # what only a passing test ran is not the failing tests'


def test_the_places_are_ordered_by_the_trace_s_suspicion_and_carry_their_suspicious_lines() -> None:
    found = [Place(path="b.py", name="helper", start=10, end=14, why="called by test_x")]
    ran = [Ran(path="c.py", line=5, name="Deep.deep", failed=1, of=1, passed=0, score=0.5, depth=3,
               lines=((7, 1.0), (6, 0.5), (40, 0.5)), suspicion=1.0),
           Ran(path="b.py", line=10, name="helper", failed=1, of=1, passed=3, score=0.5, depth=1,
               lines=((11, 0.5),), suspicion=0.5)]
    told = with_traced(found, ran, _locate, 10)
    assert [(p.name, p.suspicion) for p in told] == [("deep", 1.0), ("helper", 0.5)]
    assert told[0].lines == ((7, 1.0), (6, 0.5))  # its own lines only (40 lies outside its span)
    assert told[1].why == "called by test_x" and told[1].lines == ((11, 0.5),)


BOX = '''\
class Box:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v + 1  # the bug

    def __repr__(self):
        return "Box(%s)" % _show(self.v)


def _show(v):
    return str(v)
'''

BOX_TESTS = '''\
from box import Box


def test_equal():
    assert Box(1) == Box(1)


def test_repr():
    assert repr(Box(2)) == "Box(2)"
'''


def test_what_a_failure_s_report_calls_is_not_recorded_what_a_test_calls_is(tmp_path: Path) -> None:
    """pytest writes the failing assertion's message with ``repr``: ``Box.__repr__`` (and ``_show``, which it
    calls) ran in the failing test only for the report, so the failing test's record leaves them out; the test
    that calls ``repr`` itself records them."""
    run, trace = _traced_project(tmp_path, "box", BOX, BOX_TESTS)
    assert run.outcome == "failed" and "assert Box(1) == Box(1)" in run.output  # the report was written
    assert trace is not None
    names = {test: {key[2] for key in calls} for test, calls in trace.items()}
    assert names["tests/test_box.py::test_equal"] >= {"Box.__init__", "Box.__eq__", "test_equal"}
    assert not names["tests/test_box.py::test_equal"] & {"Box.__repr__", "_show"}
    assert names["tests/test_box.py::test_repr"] >= {"Box.__repr__", "_show"}
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    assert [r.name for r in ran] == ["Box.__eq__", "Box.__init__"]


PARSE = '''\
def parse(line):
    key, _, value = line.partition("=")
    return key, _strip(value)


def _strip(value):
    if " " in value:
        return value  # the bug: a comment after a spaced value is kept
    return value.strip()
'''

PARSE_TESTS = '''\
import pytest

from parse import parse


@pytest.mark.parametrize("line,expected", [
    ("a=b", ("a", "b")),
    ("c=d", ("c", "d")),
    ("e=f #note", ("e", "f")),
    ("g=h", ("g", "h")),
])
def test_parse(line, expected):
    assert parse(line) == expected
'''


def test_a_parametrized_test_s_passing_cases_count_as_passing_even_when_its_id_holds_spaces(tmp_path: Path) -> None:
    """One case of four fails, and its id (``test_parse[e=f #note-expected2]``) holds a space. Read whole from
    the summary line, it alone is the failing test: ``_strip``'s branch line, which only that case ran, is the
    most suspicious line and ``parse`` (every case runs it) is not. Counted by the test's function, all four
    cases would fail and every line would be equally suspicious."""
    run, trace = _traced_project(tmp_path, "parse", PARSE, PARSE_TESTS)
    assert run.outcome == "failed"
    assert trace is not None
    failed = failed_test_ids(run.output)
    assert failed == ("tests/test_parse.py::test_parse[e=f #note-expected2]",)
    ran = ran_functions(trace, failed, run_failed=True)
    assert [(r.name, r.failed, r.of, r.passed) for r in ran] == [("_strip", 1, 1, 3), ("parse", 1, 1, 3)]
    assert ran[0].lines[0] == (8, 1.0) and ran[0].suspicion == 1.0 > ran[1].suspicion
    # an id the trace does not hold as it is (cut short) still counts its function's cases
    cut = ran_functions(trace, ("tests/test_parse.py::test_parse[e=f",), run_failed=False)
    assert {(r.name, r.failed, r.of, r.passed) for r in cut} == {("_strip", 4, 4, 0), ("parse", 4, 4, 0)}


BAD = '''\
class BadData(Exception):
    def __init__(self, message):
        self.message = message

    def __str__(self):
        return _say(self.message)


def _say(message):
    return "bad data: " + message


def decode(text):
    if not text.endswith("="):
        raise BadData(text)  # the bug: unpadded input is refused
    return text.rstrip("=")
'''

BAD_TESTS = '''\
import pytest

from bad import decode


@pytest.mark.parametrize("text", ["YQ==", "Yg", "Yw=="])
def test_decode(text):
    assert decode(text)
'''


def test_an_exception_s_str_written_only_to_report_the_failure_is_not_recorded(tmp_path: Path) -> None:
    """The failing case raises ``BadData``; pytest prints it with ``str`` (through ``traceback``), which runs
    ``__str__`` and ``_say`` in the failing test alone: recorded, they would be the most suspicious of all. The
    exception's ``__init__`` and ``decode``, which the test's own run reached, are."""
    run, trace = _traced_project(tmp_path, "bad", BAD, BAD_TESTS)
    assert run.outcome == "failed" and "bad data: Yg" in run.output  # the report was written with __str__
    assert trace is not None
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    assert [(r.name, r.suspicion) for r in ran] == [("BadData.__init__", 1.0), ("decode", 1.0)]
    assert ran[1].lines[0] == (15, 1.0)  # the raise, which only the failing case reached


RANGE = """\
const isX = id => !id || id === 'x'

class Range {
  constructor (text) {
    this.text = text.trim()
  }

  upper () {
    return this.text.replace(/\\^(\\d+)/, (_, M) => {
      if (isX(M)) {
        return '*'
      }
      return `<${+M + 2}.0.0`
    })
  }
}

const unused = () => 1

module.exports = { Range, unused }
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_check_is_read_from_v8_s_coverage(tmp_path: Path) -> None:
    """The same traced run, a ``node -e`` check: V8 writes its block coverage where the tracer's environment says,
    and the project's functions that ran are read from it, each with its lines that ran: the callback's lines
    count as ``upper``'s, the branch never taken is not among them, a class's constructor is ``constructor``,
    the function never called and the check's own code are absent."""
    root = tmp_path / "project"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "range.js").write_text(RANGE, encoding="utf-8")
    check = ("node -e \"const assert = require('assert'); const { Range } = require('./lib/range'); "
             "assert.strictEqual(new Range(' ^1 ').upper(), '<2.0.0')\"")
    run = run_check(check, root, env=trace_env(dict(os.environ), tmp_path / "trace", root), timeout_s=120)
    assert run.outcome == "failed" and "AssertionError" in run.output
    assert read_trace(tmp_path / "trace") is None  # no tree given: Python's trace alone, and none was written
    trace = read_trace(tmp_path / "trace", root)
    assert trace is not None and list(trace) == [""]
    assert {key: sorted(lines) for key, (_, lines) in trace[""].items()} == {
        ("lib/range.js", 1, "isX"): [1],
        ("lib/range.js", 4, "constructor"): [4, 5, 6],
        ("lib/range.js", 8, "upper"): [8, 9, 10, 13, 14, 15],
    }
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    assert {r.name for r in ran} == {"isX", "constructor", "upper"} and all(r.of == 1 and r.passed == 0 for r in ran)
    assert next(r for r in ran if r.name == "upper").ran == (8, 9, 10, 13, 14, 15)  # every line that ran, not the 11-12 branch


EVENT = '''\
from dataclasses import dataclass


class Headers:
    def __init__(self, pairs):
        self.pairs = list(pairs)

    def __eq__(self, other):
        return self.pairs == other.pairs

    def __repr__(self):
        return "Headers(%r)" % self.pairs


@dataclass
class Request:
    target: str
    headers: Headers


def read(data):
    target, _, rest = data.partition(" ")
    return Request(target=target, headers=Headers(_pairs(rest)))


def _pairs(rest):
    return [tuple(p.split(":")) for p in rest.split(",")[:1]]  # the bug: only the first header is read
'''

EVENT_TESTS = '''\
from event import Headers, Request, read


def test_one_header():
    assert read("/a h:1") == Request(target="/a", headers=Headers([("h", "1")]))


def test_two_headers():
    assert read("/b h:1,k:2") == Request(target="/b", headers=Headers([("h", "1"), ("k", "2")]))
'''


def test_what_a_generated_repr_calls_for_the_failure_s_report_is_not_recorded(tmp_path: Path) -> None:
    """pytest writes the failing comparison of two dataclasses with their ``repr``: the dataclass's generated
    ``__repr__`` (code outside the project, called through ``dataclasses``' own wrapper) calls ``Headers.__repr__``,
    in the failing test alone and only for the report. On h11 such a ``__repr__`` ranked first of all, above the
    bug's function."""
    run, trace = _traced_project(tmp_path, "event", EVENT, EVENT_TESTS)
    assert run.outcome == "failed" and "Headers([('h', '1'), ('k', '2')])" in run.output  # written with __repr__
    assert trace is not None
    names = {test: {key[2] for key in calls} for test, calls in trace.items()}
    assert "Headers.__repr__" not in names["tests/test_event.py::test_two_headers"]
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    # what both tests ran, as suspicious as each other; recorded, the report's __repr__ would rank above them all
    assert [(r.name, r.suspicion) for r in ran] == [("read", 0.7071), ("_pairs", 0.7071), ("Headers.__init__", 0.7071),
                                                   ("Headers.__eq__", 0.7071)]


def test_the_places_kept_are_the_most_suspicious_not_the_first_found() -> None:
    """The calls read from the test fill the places (ten on h11, all ran by passing tests as well); a function
    the trace adds with a more suspicious line is kept over them, not cut for coming after them."""
    found = [Place(path="b.py", name="helper", start=10, end=14, why="called by test_x"),
             Place(path="c.py", name="__init__", start=2, end=3, why="called by test_x")]
    ran = [Ran(path="b.py", line=10, name="helper", failed=1, of=2, passed=5, score=0.3, depth=1, suspicion=0.3),
           Ran(path="c.py", line=2, name="Deep.__init__", failed=1, of=2, passed=5, score=0.3, depth=2,
               suspicion=0.3),
           Ran(path="c.py", line=5, name="Deep.deep", failed=2, of=2, passed=1, score=0.8, depth=3,
               lines=((7, 1.0),), suspicion=1.0)]
    assert [p.name for p in with_traced(found, ran, _locate, 2)] == ["deep", "helper"]
    assert [p.name for p in with_traced(found, ran, _locate, 3)] == ["deep", "helper", "__init__"]


TABLE = '''\
FORMATS = {
    "%d": lambda n: "%02d" % n,
    "%x": lambda n: "%x" % (n + 1),
    "%o": lambda n: "%o" % n,
}


def fmt(code, n):
    return FORMATS[code](n)
'''

TABLE_TESTS = '''\
import pytest

from table import fmt


@pytest.mark.parametrize("code,n,expected", [("%d", 7, "07"), ("%x", 255, "ff"), ("%o", 8, "10")])
def test_fmt(code, n, expected):
    assert fmt(code, n) == expected
'''


def test_a_table_whose_lambda_only_the_failing_case_ran_is_a_place_with_that_line_first(tmp_path: Path) -> None:
    """The ``%x`` entry's lambda, run by the failing case alone, is the most suspicious code of the run; a lambda
    has no definition to rewrite, so the table it is an entry of is the place (isodate's ``STRF_DT_MAP``: its
    ``%w`` entry was the bug, and no function the tests ran held it), its entry's line most suspicious."""
    run, trace = _traced_project(tmp_path, "table", TABLE, TABLE_TESTS)
    assert run.outcome == "failed"
    assert trace is not None
    ran = ran_functions(trace, failed_test_ids(run.output), run_failed=True)
    assert [(r.name, r.line, r.suspicion) for r in ran[:2]] == [("<lambda>", 3, 1.0), ("fmt", 8, 0.5774)]
    source = (tmp_path / "project" / "table.py").read_text()
    told = with_traced([], ran, lambda name: [("table.py", 8, 9)] if name == "fmt" else [], 10, "",
                       lambda path: source if path == "table.py" else None)
    assert [(p.name, p.kind, p.start, p.end, p.suspicion) for p in told] == [
        ("FORMATS", "value", 1, 5, 1.0), ("fmt", "function", 8, 9, 0.5774)]
    assert told[0].lines == ((3, 1.0),) and told[0].ran == (3,)  # the entries the failing case never ran: not its
    assert told[0].why == "a lambda of it ran in the failing test"
    # without the file's text the lambda tells nothing, and the functions stand as they were
    assert [p.name for p in with_traced([], ran, lambda name: [("table.py", 8, 9)] if name == "fmt" else [], 10)] \
        == ["fmt"]


def test_the_lambdas_of_one_table_make_one_place_as_suspicious_as_its_most_suspicious_entry() -> None:
    ran = [Ran(path="table.py", line=3, name="<lambda>", failed=2, of=2, passed=1, score=0.8, depth=3,
               lines=((3, 0.8),), suspicion=0.8, ran=(3,)),
           Ran(path="table.py", line=2, name="<lambda>", failed=2, of=2, passed=0, score=1.0, depth=3,
               lines=((2, 1.0),), suspicion=1.0, ran=(2,)),
           Ran(path="other.py", line=1, name="<lambda>", failed=1, of=2, passed=0, score=0.7, depth=2,
               lines=((1, 0.7),), suspicion=0.7, ran=(1,))]
    texts = {"table.py": TABLE, "other.py": "key = lambda item: item[0]\n"}
    told = with_traced([], ran, lambda name: [], 10, "", texts.get)
    assert [(p.path, p.name, p.suspicion, p.lines, p.ran) for p in told] == [
        ("table.py", "FORMATS", 1.0, ((2, 1.0), (3, 0.8)), (2, 3)), ("other.py", "key", 0.7, ((1, 0.7),), (1,))]
    assert told[0].why == "a lambda of it ran in 2 of 2 failing tests"
