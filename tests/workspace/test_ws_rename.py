"""Renaming an identifier in one file by its syntax tree: identifiers only, never strings, comments or longer
names; other files only where they import the name; JavaScript objects keep their keys."""

from __future__ import annotations

from contenox.workspace import rename_identifier

DEFINING = '''"""Helpers: make_keys turns a key into a list."""


def make_keys(key):
    return [key]


def make_keys_twice(key):  # not make_keys itself
    return make_keys(key) + make_keys(key)
'''


def test_defining_file_renames_every_identifier_and_nothing_else() -> None:
    renamed = rename_identifier("pkg/keys.py", DEFINING, "make_keys", "normalize_keys", defining=True)
    assert renamed.count == 3 and renamed.imported
    assert renamed.text == DEFINING.replace("def make_keys(", "def normalize_keys(").replace(
        "return make_keys(key) + make_keys(key)", "return normalize_keys(key) + normalize_keys(key)")
    assert '"""Helpers: make_keys turns' in renamed.text and "# not make_keys itself" in renamed.text
    assert "def make_keys_twice(" in renamed.text


def test_other_python_file_only_where_it_imports_the_name() -> None:
    user = "from pkg.keys import make_keys\n\nKEYS = make_keys('a')\nprint('make_keys')\n"
    renamed = rename_identifier("pkg/use.py", user, "make_keys", "normalize_keys", defining=False)
    assert renamed.text == "from pkg.keys import normalize_keys\n\nKEYS = normalize_keys('a')\nprint('make_keys')\n"
    local = "def f(make_keys):\n    return make_keys\n"  # a parameter of the same name: not a user
    untouched = rename_identifier("pkg/other.py", local, "make_keys", "normalize_keys", defining=False)
    assert untouched.count == 0 and not untouched.imported and untouched.text == local
    # a file whose import the answer already renamed still has its uses follow
    half = "from pkg.keys import normalize_keys\n\nKEYS = make_keys('a')\n"
    done = rename_identifier("pkg/half.py", half, "make_keys", "normalize_keys", defining=False)
    assert done.text == "from pkg.keys import normalize_keys\n\nKEYS = normalize_keys('a')\n"


def test_javascript_objects_keep_their_keys() -> None:
    defining = ("const compare = (a, b) => a - b\nconst rcompare = (a, b) => compare(b, a)\n"
                "const opts = { compare: 1 }\nmodule.exports = {\n  compare,\n  rcompare,\n}\n")
    renamed = rename_identifier("internal/ids.js", defining, "compare", "comparePair", defining=True)
    assert renamed.text == ("const comparePair = (a, b) => a - b\nconst rcompare = (a, b) => comparePair(b, a)\n"
                            "const opts = { compare: 1 }\nmodule.exports = {\n  compare: comparePair,\n"
                            "  rcompare,\n}\n")
    user = "const { compare } = require('../internal/ids')\nconst x = compare(1, 2)\nconst y = obj.compare\n"
    used = rename_identifier("classes/v.js", user, "compare", "comparePair", defining=False)
    assert used.text == ("const { compare: comparePair } = require('../internal/ids')\n"
                         "const x = comparePair(1, 2)\nconst y = obj.compare\n")
    unrelated = "function f (compare) { return compare }\n"
    assert rename_identifier("lib/f.js", unrelated, "compare", "comparePair", defining=False).count == 0


def test_unknown_language_is_left_as_it_is() -> None:
    renamed = rename_identifier("README.md", "make_keys", "make_keys", "normalize_keys", defining=True)
    assert renamed.count == 0 and renamed.text == "make_keys"
