"""Whether a candidate's edited file still parses (checked before the check command runs)."""

from __future__ import annotations

import shutil

import pytest

from contenox.verify import code_unchanged, unparsable

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
