"""Focused repair's localization and prompt (no model): the failing run's source frames, else what the failing
test calls; the short prompt holds the failing output, the test and the function to rewrite."""

from __future__ import annotations

from pathlib import Path

import msgspec

from contenox.verify.focus import Place, failing_test_frames, focus_prompt, localize_prompt, places
from contenox.verify.grammar import choice_grammar

SRC = "def helper(x):\n    return x - 1\n\n\ndef unrelated():\n    return 0\n"
TEST = "from util import helper, unrelated\n\n\ndef test_helper():\n    assert helper(1) == 2\n"
DEFS = {"helper": [("util.py", 1, 2)], "unrelated": [("util.py", 5, 6)], "test_helper": [("tests/test_util.py", 4, 5)],
        "len": [("vendored/compat.py", 1, 3)]}



def _places_in(root: Path, defs: dict[str, list[tuple[str, int, int]]], output: str, limit: int = 2,
               hops: int = 1) -> list[Place]:
    """:func:`places` for one failing ``output`` in ``root``, the symbol index being ``defs``."""
    return places([output], [root], lambda name: defs.get(name, []), lambda path: (root / path).read_text(),
                  limit=limit, hops=hops)

def _tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "util.py").write_text(SRC)
    (tmp_path / "tests" / "test_util.py").write_text(TEST)
    return tmp_path


def _locate(name: str) -> list[tuple[str, int, int]]:
    return DEFS.get(name, [])


def test_a_traceback_ending_in_the_test_is_localized_to_what_the_test_calls(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    short = "tests/test_util.py:5: in test_helper\n    assert helper(1) == 2\nE   assert 0 == 2\n"
    summary = "FAILED tests/test_util.py::test_helper - assert 0 == 2\n1 failed in 0.01s"
    assert failing_test_frames(short, root) == [("tests/test_util.py", 5, "test_helper")]
    assert failing_test_frames(summary, root) == [("tests/test_util.py", 0, "test_helper")]

    def read(path: str) -> str | None:
        return (root / path).read_text()

    for output in (short, summary):
        (place,) = places([output], [root], _locate, read)
        assert (place.path, place.name, place.start, place.end) == ("util.py", "helper", 1, 2)
        assert place.why == "called by test_helper"


def test_a_source_frame_comes_first(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    output = ('Traceback (most recent call last):\n  File "tests/test_util.py", line 5, in test_helper\n'
              '    assert helper(1) == 2\n  File "util.py", line 6, in unrelated\n    return 0\nValueError\n')
    found = places([output], [root], _locate, lambda p: (root / p).read_text())
    assert [(p.name, p.why) for p in found] == [("unrelated", "frame of the failing run"),
                                               ("helper", "called by test_helper")]
    assert places([""], [root], _locate, lambda p: None) == []


def test_the_focused_prompt_holds_the_failure_the_test_and_the_function() -> None:
    from contenox.verify.focus import Place

    place = Place(path="util.py", name="helper", start=1, end=2, why="called by test_helper")
    text = focus_prompt(place, "def helper(x):\n    return x - 1", "pytest -q", "E   assert 0 == 2\n" * 400,
                        "def test_helper():\n    assert helper(1) == 2")
    assert text.startswith("The failing test (leave it as it is):\n```python\ndef test_helper():")
    assert "`pytest -q` fails:\n```\n...\n" in text  # a long output keeps its tail
    assert "`helper` in util.py (lines 1-2):\n```python\ndef helper(x):\n    return x - 1\n```" in text
    assert text.endswith("Reply with the whole corrected function in one ```python code block.")
    # the user's question first, quoted: what should happen, which the failing output does not say
    asked = focus_prompt(place, "def helper(x):\n    return x - 1", "pytest -q", "E   assert 0 == 2\n",
                         question="helper(1) should be 2.\nFix it.")
    assert asked.startswith("The user's report:\n> helper(1) should be 2.\n> Fix it.\n\n`pytest -q` fails:")
    long = focus_prompt(place, "def helper(x):\n    return x - 1", "pytest -q", "", question="x" * 5000)
    assert "> " + "x" * 1500 + " ...\n" in long and "x" * 1501 not in long


def test_the_function_grammar_starts_with_the_def_line_and_ends_with_the_fence() -> None:
    from contenox.verify import function_grammar

    grammar = function_grammar("    def verify(self, value):   ")
    assert grammar.splitlines()[0] == 'root ::= "```python\\n" "    def verify(self, value):\\n" body{0,120} "```"'
    assert 'body ::= ([^`\\n] [^\\n]*)? "\\n"' in grammar


def test_a_javascript_place_is_asked_for_in_javascript() -> None:
    from contenox.verify import function_grammar
    from contenox.verify.focus import FOCUS_SYSTEM, for_language, language, pickable_lines

    assert function_grammar("const f = (x) => {", "javascript").splitlines()[0] == (
        'root ::= "```javascript\\n" "const f = (x) => {\\n" body{0,120} "```"')
    assert language("classes/range.js") == ("JavaScript", "javascript") and language("a.mts")[0] == "TypeScript"
    assert language("pkg/mod.py") == ("Python", "python")
    system = for_language(FOCUS_SYSTEM, "classes/range.js")
    assert "JavaScript developer" in system and "```javascript code block" in system and "Python" not in system
    place = Place(path="lib/a.js", name="f", start=3, end=7, why="ran in the failing test")
    code = "const f = (x) => {\n  // why\n  return x\n    .trim()\n})\n"
    assert "```javascript\nconst f" in focus_prompt(place, code, "node -e 1", "AssertionError")
    assert pickable_lines(code, "lib/a.js") == [0, 2, 3]  # not a comment, not closing brackets alone
    assert pickable_lines("def f():\n    # c\n    return 1\n") == [0, 2]


def test_a_missing_line_may_go_after_each_whole_statement_of_each_block_never_inside_one_or_the_docstring() -> None:
    """cachetools' ``cache_clear`` lost the line that zeroes its counters after ``self.cache.clear()``; itsdangerous'
    ``base64_decode`` lost its padding line after a call that spans two lines."""
    from contenox.verify.focus import insertion_points

    method = "    def cache_clear(self):\n        with self.cache_lock:\n            self.cache.clear()\n"
    assert insertion_points(method, "src/cachetools/_decorator.py") == [(0, 8), (1, 12), (2, 8), (2, 12)]
    function = ('def base64_decode(string):\n    """Doc.\n\n    More."""\n'
                '    string = want_bytes(string,\n                        errors="ignore")\n\n'
                '    try:\n        return decode(string)\n    except ValueError as e:\n        raise BadData() from e\n')
    points = insertion_points(function)
    assert (5, 4) in points and (4, 4) not in points  # after the call's last line, not inside it
    assert (3, 4) in points and (0, 4) not in points and (1, 4) not in points  # after the docstring, not before
    assert (7, 8) in points and (9, 8) in points and (10, 4) in points  # into try, into except, after try
    assert insertion_points("const f = () => {\n  return 1\n}\n", "lib/a.js") == []
    assert insertion_points("def broken(:\n    pass\n") == []


def test_an_entry_a_table_lacks_may_go_after_each_of_its_entries_and_a_fill_brings_as_many_as_it_writes() -> None:
    """A trial's feature ("support seconds and days") was two entries of a units table: a line put in goes after
    each entry (a multi-line one's last line) at the entries' column, never on the opening line; a fill keeps
    the entries it writes at that column and stops at the table's end or at anything else."""
    from contenox.verify.focus import filled_lines, insertion_points

    table = 'UNITS = {\n    "h": 3600,\n    "m": (\n        60\n    ),\n    **EXTRA,\n}'
    assert insertion_points(table, "units.py") == [(1, 4), (4, 4), (5, 4)]  # after "h", "m"'s last line, the spread
    assert insertion_points("NAMES: list[str] = [\n  'a',\n  'b']\n", "names.py") == [(1, 2)]  # 'b' shares the bracket's line
    assert insertion_points("PAIR = (1,\n        2)\n", "pair.py") == []  # after the first: on the opening line
    assert insertion_points("    PAIR = (\n        1,\n    )\n", "pair.py") == [(1, 8)]  # indented as the file has it
    assert insertion_points('ONE = {"a": 1}\n', "one.py") == [] and insertion_points("X = f(\n    1)\n") == []
    assert filled_lines('"s": 1,\n    "d": 86400,\n}\n', 4, inserted=True, elements=True) == '"s": 1,\n    "d": 86400,'
    assert filled_lines('"s": 1,\n        "d": 86400,', 4, inserted=True, elements=True) == '"s": 1,'
    # the trial's 0.5B wrote "s", "d", "w" and "y", the last without its comma, before the table's "m": none parsed
    assert filled_lines('"s": 1,\n    "d": 86400\n    "y": 365 * 86400', 4, inserted=True, elements=True) == \
        '"s": 1,\n    "d": 86400,\n    "y": 365 * 86400,'
    assert filled_lines('"s": 1,\n    "d": 86400,', 4, inserted=True) == '"s": 1,'  # a function's line: one
    assert filled_lines("}\n", 4, inserted=True, elements=True) == ""
    # on top of `"s": 1`, the 0.5B's passing fill wrote "s" and "m" again around the "d" the table lacked: a key the
    # table holds, or the fill wrote before, is left out (however it is quoted)
    assert filled_lines('"s": 1,\n    "m": 60,\n    "d": 86400,\n    \'s\': 1,', 4, inserted=True, elements=True,
                        taken=["h", "s", "m"]) == '"d": 86400,'
    assert filled_lines('"d": 1,\n    "d": 2,', 4, inserted=True, elements=True) == '"d": 1,'
    assert filled_lines('"h": 1,\n    "m": 2', 4, inserted=True, elements=True, taken=["h", "m"]) == ""
    assert filled_lines("1,\n    1,", 4, inserted=True, elements=True, taken=["1"]) == "1,\n    1,"  # no keys: a list's


def test_the_frames_of_a_node_stack_are_places_innermost_first(tmp_path: Path) -> None:
    """semver's load crash: V8 prints ``new SemVer`` (where it threw) first, then ``Comparator.parse`` (where the
    bug is), then ``new Comparator``; each is its definition's place, the module's own frame is none."""
    for rel in ("classes/semver.js", "classes/comparator.js", "ranges/subset.js"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n" * 80)
    stack = (f"TypeError: Invalid Version: 0\n    at new SemVer ({tmp_path}/classes/semver.js:38:13)\n"
             f"    at Comparator.parse ({tmp_path}/classes/comparator.js:51:21)\n"
             f"    at new Comparator ({tmp_path}/classes/comparator.js:23:10)\n"
             f"    at Object.<anonymous> ({tmp_path}/ranges/subset.js:71:39)\n")
    spans = {"constructor": [("classes/comparator.js", 8, 32), ("classes/semver.js", 8, 77)],
             "parse": [("classes/comparator.js", 34, 53)]}
    found = _places_in(tmp_path, spans, stack, limit=5)
    assert [(p.path, p.name, p.start, p.why) for p in found] == [
        ("classes/semver.js", "constructor", 8, "frame of the failing run"),
        ("classes/comparator.js", "parse", 34, "frame of the failing run"),
        ("classes/comparator.js", "constructor", 8, "frame of the failing run")]


def test_one_failing_run_alone_orders_what_it_ran_by_the_question_s_words() -> None:
    """A ``node -e`` check: one run, no passing one, every function as suspicious as the next. The functions the
    trace adds are ordered by the question's words their names use (ties as they ran), and no line is said to
    be suspicious; with passing runs beside it, the spectrum's order stands."""
    from contenox.verify.focus import blind, relevance, with_traced
    from contenox.verify.trace import Ran

    question = "Numeric prerelease identifiers must sort first. Trace lt() down to the comparison."
    assert relevance("compareIdentifiers", question) == 2 and relevance("comparePre", question) == 2
    assert relevance("replaceCaret", question) == 0 and relevance("parseRange", "the caret range") == 1

    def ran(name: str, line: int, passed: int = 0) -> Ran:
        return Ran(path="lib/s.js", line=line, name=name, failed=1, of=1, passed=passed, score=1.0, depth=99,
                   lines=((line + 1, 1.0),), suspicion=1.0)

    spans = {"parseOptions": (1, 5), "compareMain": (10, 20), "comparePre": (30, 40), "compareIdentifiers": (50, 60)}

    def locate(name: str) -> list[tuple[str, int, int]]:
        return [("lib/s.js", *spans[name])] if name in spans else []

    traced = [ran("parseOptions", 1), ran("compareMain", 10), ran("comparePre", 30), ran("compareIdentifiers", 50)]
    assert blind(traced) and not blind([]) and not blind([*traced, ran("compareIdentifiers", 50, passed=1)])
    found = with_traced([], traced, locate, 3, question)
    assert [p.name for p in found] == ["comparePre", "compareIdentifiers", "compareMain"]
    assert all(p.lines == () and p.suspicion == 0.0 for p in found)  # no function more suspicious than another
    frame = Place(path="lib/s.js", name="compareMain", start=10, end=20, why="frame of the failing run")
    assert [(p.name, p.suspicion) for p in with_traced([frame], traced, locate, 3, question)] == [
        ("compareMain", 1.0), ("comparePre", 0.0), ("compareIdentifiers", 0.0)]  # a frame the stack printed first
    near = msgspec.structs.replace(traced[0], depth=1)  # a Python trace knows what the test calls itself
    assert [p.name for p in with_traced([], [near, *traced[1:]], locate, 2, question)] == ["parseOptions", "comparePre"]
    told = with_traced([], [*traced[:3], ran("compareIdentifiers", 50, passed=1)], locate, 3, question)
    assert [p.name for p in told] == ["parseOptions", "compareMain", "comparePre"] and told[0].lines == ((2, 1.0),)


def test_what_the_failing_line_calls_comes_before_the_rest_of_the_test(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "signer.py").write_text("def sign(v):\n    return v\n\n\ndef validate(v):\n    return False\n")
    (tmp_path / "tests" / "test_s.py").write_text(
        "from signer import sign, validate\n\n\ndef test_keys():\n    signed = sign(1)\n    assert validate(signed)\n")
    defs = {"sign": [("signer.py", 1, 2)], "validate": [("signer.py", 5, 6)], "test_keys": [("tests/test_s.py", 4, 6)]}
    output = "tests/test_s.py:6: in test_keys\n    assert validate(signed)\nE   assert False\n"
    found = _places_in(tmp_path, defs, output, limit=1)
    assert [p.name for p in found] == ["validate"]  # not sign, which the test calls first


def test_what_the_called_function_calls_comes_next(tmp_path: Path) -> None:
    """One hop further (the test asserts validate, the bug is in the verify_signature it calls): what the failing
    line's function calls comes before the rest of the test."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "signer.py").write_text(
        "def sign(v):\n    return v\n\n\ndef validate(v):\n    return verify_signature(v) and len(v)\n\n\n"
        "def verify_signature(v):\n    ok = False\n    return ok\n")
    (tmp_path / "tests" / "test_s.py").write_text(
        "from signer import sign, validate\n\n\ndef test_keys():\n    signed = sign(1)\n    assert validate(signed)\n")
    defs = {"sign": [("signer.py", 1, 2)], "validate": [("signer.py", 5, 6)],
            "verify_signature": [("signer.py", 9, 11)], "test_keys": [("tests/test_s.py", 4, 6)]}
    output = "tests/test_s.py:6: in test_keys\n    assert validate(signed)\nE   assert False\n"
    found = _places_in(tmp_path, defs, output)
    assert [(p.name, p.why) for p in found] == [("validate", "called by test_keys"),
                                               ("verify_signature", "called by validate")]
    three = _places_in(tmp_path, defs, output, limit=3)
    assert [p.name for p in three] == ["validate", "verify_signature", "sign"]


def test_two_calls_deep_past_functions_defined_twice(tmp_path: Path) -> None:
    """its-bug-key-rotation's shape: the test asserts ``validate``, which calls ``unsign``, which calls
    ``verify_signature`` (the bug); ``validate`` is defined in two classes, ``unsign`` three times (each caller
    gets its own file's); a two-line accessor further down (``peek``) is passed over. One hop stops before the
    bug; two hops reach it."""
    (tmp_path / "tests").mkdir()
    signer = ("class Signer:\n    def validate(self, v):\n        return self.unsign(v)\n\n"
              "    def unsign(self, v):\n        v = self.peek(v)\n        return self.verify_signature(v)\n\n"
              "    def verify_signature(self, v):\n        ok = False\n        return ok\n\n"
              "    def peek(self, v):\n        return v\n")
    timed = ("class Timed:\n    def validate(self, v):\n        return self.unsign(v)\n\n"
             "    def unsign(self, v):\n        v = v\n        return v\n\n"
             "    def unsign(self, v, t): ...\n\n    def unsign(self, v, t, u):\n        v = v\n        return v\n")
    (tmp_path / "signer.py").write_text(signer)
    (tmp_path / "timed.py").write_text(timed)
    (tmp_path / "tests" / "test_s.py").write_text("def test_keys(s):\n    assert s.validate(1)\n")
    defs = {"validate": [("signer.py", 2, 3), ("timed.py", 2, 3)],
            "unsign": [("signer.py", 5, 7), ("timed.py", 5, 7), ("timed.py", 9, 9),  # four: each caller's own,
                       ("timed.py", 11, 13)],  # never a stub (``def unsign(self, v, t): ...``, an overload)
            "verify_signature": [("signer.py", 9, 11)], "peek": [("signer.py", 13, 14)],  # a two-line accessor
            "test_keys": [("tests/test_s.py", 1, 2)]}
    output = "tests/test_s.py:2: in test_keys\n    assert s.validate(1)\nE   assert False\n"

    def found(**kw: int) -> list[str]:
        return [f"{p.name}@{p.path}" for p in _places_in(tmp_path, defs, output, **kw)]

    assert "verify_signature@signer.py" not in found(limit=8)
    assert [(p.name, p.start) for p in _places_in(tmp_path, defs, output, limit=8, hops=2)
            if p.path == "timed.py"] == [("validate", 2), ("unsign", 5), ("unsign", 11)]
    assert found(limit=8, hops=2) == ["validate@signer.py", "validate@timed.py", "unsign@signer.py", "unsign@timed.py",
                                      "unsign@timed.py", "verify_signature@signer.py"]


def test_the_localization_prompt_numbers_the_places_and_its_answer_is_a_number() -> None:
    a = Place(path="signer.py", name="validate", start=2, end=3, why="called by test_keys")
    b = Place(path="signer.py", name="verify_signature", start=8, end=60, why="called by unsign")
    long_body = "def verify_signature(self, v):\n" + "    x = 1\n" * 58 + "    return False"
    text = localize_prompt([(a, "def validate(self, v):\n    return self.unsign(v)"), (b, long_body)], "pytest -q",
                           "E   assert False\n", "def test_keys(s):\n    assert s.validate(1)")
    assert "[1] `validate` in signer.py (lines 2-3):\n```python\ndef validate(self, v):" in text
    assert "[2] `verify_signature` in signer.py (lines 8-60):" in text
    assert text.count("    x = 1") == 39 and "\n    ...\n```" in text  # a long function shows its first lines
    assert text.endswith("Which one of the 2 functions above must change for `pytest -q` to pass? Reply with its "
                         "number only.")
    assert choice_grammar(3) == 'root ::= "3" | "2" | "1"'


def test_an_operator_on_an_object_of_a_project_class_reaches_the_method_it_runs(tmp_path: Path) -> None:
    """cachetools' shape: the test reads ``cache[key]`` on an ``LRUCache``, and the bug is in
    ``LRUCache.__getitem__``; four classes define ``__getitem__`` or ``popitem``. The method is the one Python
    would run on the test's object: its class's, else its base's (``__setitem__`` is only ``Cache``'s); a chained
    call (``copy.copy(cache).popitem()``) is followed too. A subscript on no object of the project's adds nothing."""
    (tmp_path / "tests").mkdir()
    src = ("class Cache:\n    def __getitem__(self, key):\n        return self.data[key]\n\n"          # 1-3
           "    def __setitem__(self, key, value):\n        self.data[key] = value\n\n"                 # 5-6
           "    def popitem(self):\n        return self.data.popitem()\n\n\n"                           # 8-9
           "class LRUCache(Cache):\n    def __getitem__(self, key):\n        value = Cache.__getitem__(self, key)\n"
           "        self.order.move_to_end(key, last=False)\n        return value\n\n"                  # 12-16
           "    def popitem(self):\n        key = next(iter(self.order))\n        return key, self[key]\n\n\n"  # 18-20
           "class FIFOCache(Cache):\n    def __getitem__(self, key):\n        return Cache.__getitem__(self, key)\n\n"
           "    def popitem(self):\n        key = next(iter(self.data))\n        return key, self[key]\n")  # 23-29
    (tmp_path / "cache.py").write_text(src)
    (tmp_path / "tests" / "test_lru.py").write_text(
        "import copy\nfrom cache import LRUCache\n\n\ndef test_lru():\n    cache = LRUCache()\n    cache[1] = 1\n"
        "    cache[1]\n    assert (1, 1) == copy.copy(cache).popitem()\n\n\n"
        "def test_list():\n    values = [1]\n    assert values[0] == 1 and 1 in values and len(values) == 1\n")
    defs = {"Cache": [("cache.py", 1, 9)], "LRUCache": [("cache.py", 12, 20)], "FIFOCache": [("cache.py", 23, 29)],
            "__getitem__": [("cache.py", 2, 3), ("cache.py", 13, 16), ("cache.py", 24, 25)],
            "__setitem__": [("cache.py", 5, 6)], "popitem": [("cache.py", 8, 9), ("cache.py", 18, 20), ("cache.py", 27, 29)],
            "test_lru": [("tests/test_lru.py", 5, 9)], "test_list": [("tests/test_lru.py", 12, 14)]}

    def found(output: str) -> list[tuple[str, int]]:
        return [(p.name, p.start) for p in _places_in(tmp_path, defs, output, limit=8)]

    assert found("tests/test_lru.py:9: in test_lru\n    assert (1, 1) == copy.copy(cache).popitem()\nE   assert False\n"
                 ) == [("popitem", 18), ("__setitem__", 5), ("__getitem__", 13)]
    assert found("tests/test_lru.py:14: in test_list\n    assert values[0] == 1\nE   assert False\n") == []


def test_the_multi_line_module_values_a_place_uses_are_places_of_their_own() -> None:
    from contenox.verify.focus import values_used

    text = ('import re\n\nTABLE = {\n    "a": 1,\n}\n_ONE = re.compile(r"x")\n_pattern: re.Pattern[str] = re.compile(\n'
            '    r"""(?P<v>[0-9])""",\n)\n\n\ndef parse(s):\n    m = _pattern.match(s) or _ONE.match(s)\n'
            '    return TABLE[m.group(0)], self._pattern\n')
    place = Place(path="v.py", name="parse", start=12, end=14, why="called by test_parse")
    used = values_used(place, text)
    assert [(v.name, v.start, v.end, v.kind) for v in used] == [("_pattern", 7, 9, "value"), ("TABLE", 3, 5, "value")]
    assert used[0].why == "a module-level value `parse` uses"  # one-line _ONE: in the function's prompt already
    assert values_used(place, "def parse(:\n") == []


def test_a_test_that_builds_an_object_of_a_project_class_reaches_its_constructor(tmp_path: Path) -> None:
    """The 1.5B's test of a new ``digest_method`` keyword failed at ``Serializer(secret, digest_method=...)``
    (a TypeError raised by the call itself, no frame inside): the place is ``Serializer.__init__``, before what the
    rest of the test calls. A class that defines no ``__init__`` of its own (an exception) adds nothing, nor does a
    class built further down than the test."""
    (tmp_path / "tests").mkdir()
    src = ("class BadData(Exception):\n    pass\n\n\n"                                             # 1-2
           "class Serializer:\n    def __init__(self, secret, salt=b''):\n        self.secret = secret\n"
           "        self.salt = salt\n\n    def dumps(self, obj):\n        return Signer(self.secret).sign(obj)\n\n\n"
           "class Signer:\n    def __init__(self, key):\n        self.key = key\n\n"                      # 14-16
           "    def sign(self, value):\n        return value\n\n\n"                                  # 18-19
           "class Typed:\n    @overload\n    def __init__(self, key: str) -> None: ...\n\n"          # 22-24
           "    def __init__(self, key):\n        self.key = key\n")                                  # 26-27
    (tmp_path / "ser.py").write_text(src)
    (tmp_path / "tests" / "test_ser.py").write_text(
        "from ser import BadData, Serializer, Typed\n\n\ndef test_digest():\n"
        "    s = Serializer('k', digest_method='sha256')\n    assert s.dumps(1) == 1 and BadData('x')\n"
        "    assert Typed('k', digest_method='sha256')\n")
    defs = {"BadData": [("ser.py", 1, 2)], "Serializer": [("ser.py", 5, 11)], "Signer": [("ser.py", 14, 19)],
            "__init__": [("ser.py", 6, 8), ("ser.py", 15, 16)], "dumps": [("ser.py", 10, 11)],
            "sign": [("ser.py", 18, 19)], "test_digest": [("tests/test_ser.py", 4, 7)], "Typed": [("ser.py", 22, 27)]}
    defs["__init__"] += [("ser.py", 24, 24), ("ser.py", 26, 27)]
    output = ("tests/test_ser.py:5: in test_digest\n    s = Serializer('k', digest_method='sha256')\n"
              "E   TypeError: Serializer.__init__() got an unexpected keyword argument 'digest_method'\n")
    found = _places_in(tmp_path, defs, output, limit=8)
    assert [(p.name, p.start, p.why) for p in found][:2] == [
        ("__init__", 6, "constructor of Serializer, called by the test"), ("dumps", 10, "called by test_digest")]
    assert all(p.start not in (1, 15) for p in found)  # BadData has no __init__; Signer(...) is built by dumps
    assert ("__init__", 26) in [(p.name, p.start) for p in found]  # Typed's own, past its overload signature
