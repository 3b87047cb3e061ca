"""The call tree a how-does-it-work question gets: calls read from the source, resolved only where the source says
which definition they reach. A small real git repository shaped like the libraries the architecture tasks ask about:
a serializer whose method a subclass inherits through a mixin (Python's resolution order), ``super()``, overloads,
a method several classes define, an exception raised by class, and a JavaScript class built with ``new``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.workspace import RetrievalQuery, Workspace
from contenox.workspace._calls import asks_how_it_works

LIB = {
    "tok/signer.py": ("import typing\n\nfrom tok.errors import Expired\n\n\nclass Signer:\n"
                      "    def unsign(self, value):\n        return self.verify(value)\n\n"
                      "    def verify(self, value):\n        return derive(value)\n\n\n"
                      "class TimedSigner(Signer):\n    @typing.overload\n    def unsign(self, value: str): ...\n\n"
                      "    def unsign(self, value, max_age=None):\n        value = super().unsign(value)\n"
                      "        if max_age is not None and too_old(value, max_age):\n"
                      "            raise Expired(value)\n        return value\n\n\n"
                      "def derive(value):\n    return value\n\n\ndef too_old(value, max_age):\n    return False\n"),
    "tok/errors.py": "class BadData(Exception):\n    def __init__(self, message):\n        self.message = message\n\n\n"
                     "class Expired(BadData):\n    pass\n",
    "tok/serializer.py": ("from tok.signer import Signer, TimedSigner\n\n\nclass Serializer:\n"
                          "    signer = Signer\n\n    def loads(self, token):\n"
                          "        signer = self.make_signer()\n        return self.load_payload(signer.unsign(token))\n\n"
                          "    def make_signer(self):\n        return self.signer()\n\n"
                          "    def load_payload(self, data):\n        return data\n\n\n"
                          "class TimedSerializer(Serializer):\n    signer = TimedSigner\n\n"
                          "    def loads(self, token, max_age=None):\n        signer = self.make_signer()\n"
                          "        return self.load_payload(signer.unsign(token, max_age=max_age))\n\n\n"
                          "class UrlSafeMixin(Serializer):\n    def load_payload(self, data):\n"
                          "        return super().load_payload(unquote(data))\n\n\n"
                          "class UrlSafeTimedSerializer(UrlSafeMixin, TimedSerializer):\n    pass\n\n\n"
                          "def unquote(data):\n    return data\n"),
    "tok/typed.py": ("import typing\n\nfrom tok import serializer\n\nT = typing.TypeVar('T')\n\n\n"
                     "class Typed(serializer.Serializer, typing.Generic[T]):\n    def dump(self):\n"
                     "        return self.make_signer()\n"),
    "tests/test_serializer.py": ("from tok.serializer import UrlSafeTimedSerializer\n\n\ndef test_loads():\n"
                                 "    assert UrlSafeTimedSerializer().loads('x', max_age=5)\n\n\nclass TestA:\n"
                                 "    def test_same(self):\n        assert unquote('a')\n\n\nclass TestB:\n"
                                 "    def test_same(self):\n        assert too_old('b', 1) is False\n"),
    "js/range.js": ("const parseOptions = require('./opts')\n\nclass Range {\n  constructor (raw, options) {\n"
                    "    this.options = parseOptions(options)\n    this.set = this.parseRange(raw)\n  }\n\n"
                    "  parseRange (raw) {\n    return raw.split('||')\n  }\n\n  test (version) {\n"
                    "    return this.set.some(s => testSet(s, version))\n  }\n}\n\n"
                    "function testSet (set, version) {\n  return set === version\n}\n\nmodule.exports = Range\n"),
    "js/opts.js": "const parseOptions = options => options || {}\nfunction normalize (o) { return o }\n"
                  "module.exports = parseOptions\n",
    "js/satisfies.js": ("const Range = require('./range')\n\nfunction satisfies (version, range) {\n"
                        "  range = new Range(range)\n  return range.test(version)\n}\n\nmodule.exports = satisfies\n"),
}


@pytest.fixture
def ws(make_repo: Callable[..., Path], open_ws: Callable[..., Workspace]) -> Workspace:
    return open_ws(make_repo(LIB))


def tree(ws: Workspace, text: str, lines: int = 30, **fields: str) -> tuple[list[str], tuple[str, ...]]:
    text_out, roots = ws.call_tree(RetrievalQuery(text=text, **fields), lines)
    return text_out.split("\n") if text_out else [], roots


def test_a_method_named_on_a_subclass_starts_where_python_finds_it_and_self_calls_follow_the_subclass(
        ws: Workspace) -> None:
    lines, roots = tree(ws, "How does UrlSafeTimedSerializer.loads(token, max_age=60) get to the expiry check?")
    assert roots == ("TimedSerializer.loads",)  # the mixin comes first in the order, but does not define loads
    assert lines[0] == "TimedSerializer.loads (tok/serializer.py:21)"
    body = "\n".join(lines)
    # self.load_payload() on a UrlSafeTimedSerializer is the mixin's, which calls on to Serializer's through super()
    assert "  -> UrlSafeMixin.load_payload (tok/serializer.py:27)" in lines
    assert "    -> Serializer.load_payload (tok/serializer.py:14)" in lines
    assert "Serializer.make_signer" in body
    # signer.unsign(): two classes define it and the source does not say which: both, said so, each followed
    assert "  -> Signer.unsign (tok/signer.py:7) (one of 2 methods of that name: the object decides)" in lines
    assert any(line.startswith("  -> TimedSigner.unsign (tok/signer.py:18)") for line in lines)  # the overload's body
    assert "    -> Expired (tok/errors.py:6)" in lines  # raised by class: the class (what its constructor calls below)
    assert "too_old" in body and "derive" in body
    assert not any("test_" in line for line in lines)  # tests call the code; they are not in its tree


def test_a_call_already_in_the_tree_is_named_on_the_callers_line_not_repeated(ws: Workspace) -> None:
    lines, _ = tree(ws, "How does UrlSafeTimedSerializer.loads get there?")
    assert sum(1 for line in lines if line.lstrip().startswith("-> Signer.unsign ")) == 1
    # TimedSigner's super() call, on TimedSigner.unsign's own line
    assert "  -> TimedSigner.unsign (tok/signer.py:18) (one of 2 methods of that name: the object decides); " \
           "also calls Signer.unsign (shown in the tree)" in lines
    # ... so it costs no line of the budget: a tree cut at each size holds that many definitions
    for budget in range(2, len(lines) + 1):
        cut, _ = tree(ws, "How does UrlSafeTimedSerializer.loads get there?", lines=budget)
        assert len(cut) == budget and len({line.split(" (")[0] for line in cut}) == budget


def test_javascript_new_and_this_calls(ws: Workspace) -> None:
    lines, roots = tree(ws, "How is satisfies('1.2.3', '^1.0.0') evaluated?")
    assert roots == ("satisfies",)
    assert lines[:4] == ["satisfies (js/satisfies.js:3)", "  -> Range (js/range.js:3)",
                         "    -> parseOptions (js/opts.js:1)", "    -> Range.parseRange (js/range.js:9)"]
    assert "  -> Range.test (js/range.js:13)" in lines  # range.test(): only Range defines test
    assert "    -> testSet (js/range.js:18)" in lines


def test_the_line_budget_cuts_the_deepest_calls_first(ws: Workspace) -> None:
    lines, _ = tree(ws, "How does UrlSafeTimedSerializer.loads get there?", lines=4)
    assert len(lines) == 4
    assert all(line.count("  ") <= 1 for line in lines)  # the first level before anything below it


@pytest.mark.parametrize("text", [
    "Fix UrlSafeTimedSerializer.loads so that it checks max_age",  # asks for a change
    "What is UrlSafeTimedSerializer?",  # not how it works
    "How does it work?",  # names nothing the tree can start from
])
def test_no_tree_for_other_questions(ws: Workspace, text: str) -> None:
    assert tree(ws, text) == ([], ())


def test_a_trace_question_starts_at_the_test_it_names(ws: Workspace) -> None:
    lines, roots = tree(ws, "test_loads fails. Trace the test down to where the signature is checked.",
                        terminal="$ pytest\nFAILED tests/test_serializer.py::test_loads")
    assert roots == ("test_loads",)
    assert lines[:2] == ["test_loads (tests/test_serializer.py:4)", "  -> UrlSafeTimedSerializer (tok/serializer.py:31)"]
    # ``UrlSafeTimedSerializer().loads(...)``: the object is the one just built, so its class decides (two classes
    # define loads; the one Python finds first for it), and the calls below follow that class (the mixin's payload)
    assert "  -> TimedSerializer.loads (tok/serializer.py:21)" in lines
    assert not any("Serializer.loads (tok/serializer.py:7)" in line for line in lines)
    assert "    -> UrlSafeMixin.load_payload (tok/serializer.py:27)" in lines


def test_a_one_line_definition_is_its_own_body_and_a_built_object_decides_its_method(
        make_repo: Callable[..., Path], open_ws: Callable[..., Workspace]) -> None:
    # shaped like semver: ``lt`` an arrow function on one line, ``compare`` calling a method on a new SemVer (a
    # name several classes define, so only the construction says which)
    ws = open_ws(make_repo({
        "functions/lt.js": "const compare = require('./compare')\nconst lt = (a, b) => compare(a, b) < 0\n"
                           "module.exports = lt\n",
        "functions/compare.js": ("const SemVer = require('../classes/semver')\n"
                                 "const compare = (a, b) => new SemVer(a).compare(new SemVer(b))\n"
                                 "module.exports = compare\n"),
        "classes/semver.js": ("class SemVer {\n  constructor (v) {\n    this.v = v\n  }\n\n  compare (other) {\n"
                              "    return this.comparePre(other)\n  }\n\n  comparePre (other) {\n"
                              "    return compareIdentifiers(this.v, other.v)\n  }\n}\n\n"
                              "const compareIdentifiers = (a, b) => a === b ? 0 : a < b ? -1 : 1\n"
                              "module.exports = SemVer\n"),
        "classes/comparator.js": ("class Comparator {\n  compare (other) {\n    return 0\n  }\n\n"
                                  "  test (v) {\n    return true\n  }\n}\n"),
        "classes/range.js": ("const numeric = /^[0-9]+$/\n\nclass Range {\n  test (v) {\n"
                             "    return numeric.test(v) && /^x/.test(v)\n  }\n}\nmodule.exports = Range\n"),
        "functions/satisfies.js": ("const Range = require('../classes/range')\n"
                                   "const satisfies = (version, range) => {\n  range = new Range(range)\n"
                                   "  return range.test(version)\n}\nmodule.exports = satisfies\n"),
    }))
    lines, roots = tree(ws, "Trace lt() down to the comparison that decides it.")
    assert roots == ("lt",)
    assert lines == ["lt (functions/lt.js:2)", "  -> compare (functions/compare.js:2)",
                     "    -> SemVer (classes/semver.js:1)", "    -> SemVer.compare (classes/semver.js:6)",
                     "      -> SemVer.comparePre (classes/semver.js:10)",
                     "        -> compareIdentifiers (classes/semver.js:15)"]
    # a name given a built object calls its class's method (two classes define test); a regular expression's own
    # test() (a literal, or a name given one) reaches no definition of the workspace
    lines, _ = tree(ws, "How is satisfies('1.2.3', '^1.0.0') evaluated?")
    assert lines == ["satisfies (functions/satisfies.js:2)", "  -> Range (classes/range.js:3)",
                     "  -> Range.test (classes/range.js:4)"]


def test_a_named_definition_another_named_one_calls_is_shown_under_it(ws: Workspace) -> None:
    # ``too_old`` is named too, and ``TestB.test_same`` calls it: one tree, too_old under the test (it was two roots,
    # each dropped: the test's only call "already shown", too_old calling nothing)
    lines, roots = tree(ws, "TestB::test_same fails: too_old('b', 1) is not False. Trace the test down to the code.")
    assert roots == ("TestB.test_same",)
    assert lines == ["TestB.test_same (tests/test_serializer.py:14)", "  -> too_old (tok/signer.py:29)"]


def test_a_test_named_with_its_class_starts_there_where_other_classes_have_one_of_that_name(ws: Workspace) -> None:
    lines, roots = tree(ws, "tests/test_serializer.py::TestB::test_same fails. Trace it down to the code.")
    assert roots == ("TestB.test_same",)
    assert lines == ["TestB.test_same (tests/test_serializer.py:14)", "  -> too_old (tok/signer.py:29)"]


def test_bases_written_with_their_module_or_type_parameters(ws: Workspace) -> None:
    lines, _ = tree(ws, "How does Typed.dump work?")
    assert lines == ["Typed.dump (tok/typed.py:9)", "  -> Serializer.make_signer (tok/serializer.py:11)"]


def test_off(ws: Workspace) -> None:
    assert tree(ws, "How does UrlSafeTimedSerializer.loads get to the expiry check?", lines=0) == ([], ())


def test_which_questions_ask_how_code_works() -> None:
    assert asks_how_it_works("Walk me through what happens between load_dotenv() and os.environ being updated")
    assert asks_how_it_works("How is satisfies('1.2.3', '^1.0.0') evaluated, from parsing to comparing?")
    assert asks_how_it_works("test_digests fails. Trace the test down to the code that computes the signing key")
    assert not asks_how_it_works("How do I add a flag to the parser?")  # asks for a change
    assert not asks_how_it_works("Is range parsing cached?")
    # a change asked for, not the same verb saying what the code does
    assert not asks_how_it_works("How does parse() work? Then add a flag for strict mode.")
    assert not asks_how_it_works("Trace test_x down to the bug and fix it.")
    assert not asks_how_it_works("Walk me through load(); I need to change how it reads files.")
    assert asks_how_it_works("Walk me through what Connection.send(Response(...)) does: where does the state machine "
                             "move, and which code writes the bytes?")
    assert asks_how_it_works("How does the cache update its entries when one expires?")
