"""Whether a candidate's edited file still parses (checked before the check command runs)."""

from __future__ import annotations

import shutil

import pytest

from contenox.verify import code_unchanged, undefined_names, unparsable

BEFORE = "def f(x):\n    return x - 1\n"


def test_a_python_file_that_no_longer_parses_is_named_with_the_parser_s_words() -> None:
    said = unparsable("src/util.py", BEFORE, "def f(x):\n    return x - 1  <== Corrected line\n")
    assert said is not None and said.startswith("src/util.py, line 2: invalid syntax")
    assert said.endswith("\n    return x - 1  <== Corrected line")
    indented = unparsable("util.py", BEFORE, "def f(x):\n    y = x\n  return y\n")
    assert indented is not None and "unindent does not match any outer indentation level" in indented


def test_what_parses_what_is_not_python_and_what_did_not_parse_before_is_left_to_the_check() -> None:
    assert unparsable("util.py", BEFORE, "def f(x):\n    return x + 1\n") is None
    assert unparsable("util.py", BEFORE, "def f(x):\n    return x is 1\n") is None  # a warning is not an error
    assert unparsable("util.ts", "f()", "f(") is None  # neither Python nor JavaScript: the check decides
    assert unparsable("util.py", BEFORE, None) is None  # deleted
    assert unparsable("new.py", None, "def (") is not None  # a new file that does not parse
    assert unparsable("py2.py", "print 'x'\n", "print 'y'\n") is None  # did not parse here before either
    assert unparsable("nul.py", BEFORE, "x = 1\0\n") is not None


def test_a_javascript_file_that_no_longer_parses_is_named_with_node_s_words() -> None:
    """semver's candidates: ``node --check`` parses the edited file (a temporary copy; nothing runs)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    before = "function f (x) {\n  return x - 1\n}\nmodule.exports = f\n"
    said = unparsable("classes/range.js", before, before.replace("x - 1", "x - 1  <== Corrected line"))
    assert said == "classes/range.js, line 2: Unexpected token '='\n    return x - 1  <== Corrected line"
    assert unparsable("classes/range.js", before, before.replace("x - 1", "x + 1")) is None
    assert unparsable("index.mjs", "export const a = 1\n", "export const a = 2\n") is None  # a module
    assert unparsable("old.js", "function (", "function ((") is None  # did not parse before either


def test_an_edit_of_comments_docstrings_or_layout_alone_changes_no_code() -> None:
    """What passed the guards of the detected-checks run: a comment echoing the repair message, a docstring
    reworded. Any such edit passes a check that passed before it."""
    before = 'class A:\n    """Doc."""\n\n    def f(self):\n        return 1  # one\n'
    assert code_unchanged("a.py", before, before.replace("Doc.", "Other.").replace("# one", "# uno"))
    assert code_unchanged("a.py", before, before + "\n# Unmatched triple-quoted string literals detected.\n")
    assert code_unchanged("a.py", before, before.replace("return 1", "return (1)"))  # the same code
    assert not code_unchanged("a.py", before, before.replace("return 1", "return 2"))
    assert not code_unchanged("a.py", before, before.replace('"""Doc."""', "x = 'Doc.'"))  # no longer a docstring
    assert not code_unchanged("a.js", "f()\n", "f()\n// note\n")  # not Python: not known
    assert not code_unchanged("a.py", None, "x = 1\n") and not code_unchanged("a.py", "x = 1\n", None)
    assert not code_unchanged("a.py", before, "def (")


SET_KEY = ("import os\n\nLIMIT = 3\n\n\ndef set_key(path, key):\n    line_out = f'{key}=1'\n    with open(path) as dest:\n"
           "        dest.write(line_out)\n    return LIMIT\n")


def test_a_name_the_edit_reads_where_nothing_binds_it_is_named_with_its_line() -> None:
    """The 1.5B's ``rename_key`` wrote ``dest.write(line_out)``: ``line_out`` is a local of ``set_key``, not of the
    function that reads it, so a module-wide search for the name would find it bound; the scope says it is not."""
    after = SET_KEY + ("\n\ndef rename_key(path, old):\n    with open(path) as dest:\n        dest.write(line_out)\n"
                       "    return os.path.exists(path) and LIMIT\n")
    said = undefined_names("src/dotenv/main.py", SET_KEY, after)
    assert said == ("src/dotenv/main.py, line 15: undefined name 'line_out' (not defined or imported where it is read)"
                    "\n    dest.write(line_out)")
    method = SET_KEY + "\n\nclass C:\n    size = 1\n\n    def grow(self):\n        return size + 1\n"
    said = undefined_names("m.py", SET_KEY, method)  # a class attribute is no name inside its methods
    assert said is not None and said.startswith("m.py, line 17: undefined name 'size'")


def test_names_bound_anywhere_they_can_be_are_not_undefined() -> None:
    after = SET_KEY + (
        "\n\ndef counter():\n    global TOTAL\n    TOTAL = 0\n\n\ndef outer(a):\n    k = [x for x in a if x]\n"
        "    def inner():\n        return k, TOTAL, len(a), __name__, (lambda q: q)(1)\n    return inner\n\n\n"
        "def typed(a: Missing) -> AlsoMissing:\n    v: Unknown = a\n    return v\n\n\ntry:\n    import json\n"
        "except ImportError:\n    json = None\n\n\nclass K:\n    def m(self):\n        return super().m(), json\n")
    assert undefined_names("m.py", SET_KEY, after) is None  # globals, closures, builtins; annotations left out


def test_only_what_the_edit_adds_is_named_and_where_nothing_can_be_said_nothing_is() -> None:
    dynamic = "exec('VERSION = 1')\n\n\ndef version():\n    return VERSION\n"
    assert undefined_names("setup.py", dynamic, dynamic.replace("return VERSION", "return VERSION + 1")) is None
    added = undefined_names("new.py", None, "def f():\n    return g()\n")  # a new file: all of it is the edit's
    assert added is not None and "undefined name 'g'" in added
    star = "from os.path import *\n\n\ndef f(p):\n    return join(p, 'x')\n"
    assert undefined_names("s.py", "", star) is None  # a * import binds what no reader can say
    assert undefined_names("s.pyi", "", "def f() -> X: ...\nY = Z\n") is None  # a stub: not Python that runs
    assert undefined_names("s.py", "def (", "def f():\n    return g()\n") is None  # did not parse before
    assert undefined_names("s.py", SET_KEY, "def (") is None  # does not parse: unparsable's to say
    assert undefined_names("s.py", SET_KEY, None) is None
