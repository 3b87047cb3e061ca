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
    text, count = rename_identifier("pkg/keys.py", DEFINING, "make_keys", "normalize_keys", True)
    assert count == 3
    assert text == DEFINING.replace("def make_keys(", "def normalize_keys(").replace(
        "return make_keys(key) + make_keys(key)", "return normalize_keys(key) + normalize_keys(key)")
    assert '"""Helpers: make_keys turns' in text and "# not make_keys itself" in text
    assert "def make_keys_twice(" in text


def test_other_python_file_only_where_it_imports_the_name() -> None:
    user = "from pkg.keys import make_keys\n\nKEYS = make_keys('a')\nprint('make_keys')\n"
    assert rename_identifier("pkg/use.py", user, "make_keys", "normalize_keys", False) == (
        "from pkg.keys import normalize_keys\n\nKEYS = normalize_keys('a')\nprint('make_keys')\n", 2)
    local = "def f(make_keys):\n    return make_keys\n"  # a parameter of the same name: not a user
    assert rename_identifier("pkg/other.py", local, "make_keys", "normalize_keys", False) == (local, 0)
    # a file whose import the answer already renamed still has its uses follow
    half = "from pkg.keys import normalize_keys\n\nKEYS = make_keys('a')\n"
    assert rename_identifier("pkg/half.py", half, "make_keys", "normalize_keys", False) == (
        "from pkg.keys import normalize_keys\n\nKEYS = normalize_keys('a')\n", 1)


def test_a_python_export_list_entry_is_renamed_with_the_name() -> None:
    """``__all__`` names the module's exports as strings: its entry follows the rename (as rope's does); any other
    string, and an entry that only contains the name, stay."""
    package = ('from pkg.keys import make_keys\n\n__all__ = [\n    "make_keys",\n    "make_keys_twice",\n]\n'
               '__all__ += ("make_keys",)\nNAMES = ["make_keys"]\n')
    text, count = rename_identifier("pkg/__init__.py", package, "make_keys", "normalize_keys", False)
    assert text == package.replace('import make_keys', 'import normalize_keys').replace(
        '    "make_keys",', '    "normalize_keys",').replace('("make_keys",)', '("normalize_keys",)')
    assert count == 3 and 'NAMES = ["make_keys"]' in text and '"make_keys_twice"' in text
    # the defining file whose def the answer already renamed: its export list still follows
    renamed = '__all__ = ["make_keys"]\n\n\ndef normalize_keys(key):\n    return [key]\n'
    assert rename_identifier("pkg/keys.py", renamed, "make_keys", "normalize_keys", True) == (
        renamed.replace('"make_keys"', '"normalize_keys"'), 1)
    unrelated = '__all__ = ["make_keys"]\n\n\ndef f(make_keys):\n    return make_keys\n'  # no import: not a user
    assert rename_identifier("pkg/other.py", unrelated, "make_keys", "normalize_keys", False) == (unrelated, 0)


def test_a_python_file_that_imports_the_module_takes_the_rename_in_its_attribute_uses_only() -> None:
    user = ("import pkg\nimport pkg.keys as k\n\n\ndef test_keys(make_keys):\n    assert pkg.make_keys(1) == "
            "k.make_keys(1) == other.make_keys(1)\n    print('make_keys', make_keys)\n")
    text, count = rename_identifier("tests/test_keys.py", user, "make_keys", "normalize_keys", False)
    assert count == 2 and text == user.replace("pkg.make_keys", "pkg.normalize_keys").replace(
        "k.make_keys", "k.normalize_keys")  # not other.make_keys (no module of the file's), the local, the string


def test_the_defining_file_s_doctest_examples_follow_the_rename() -> None:
    doc = 'def make_keys(key):\n    """make_keys turns a key into a list.\n\n    >>> make_keys(1)\n    [1]\n    """\n    return [key]\n'
    text, count = rename_identifier("pkg/keys.py", doc, "make_keys", "normalize_keys", True)
    assert count == 2 and ">>> normalize_keys(1)" in text and '"""make_keys turns' in text  # prose left as it is
    renamed = doc.replace("def make_keys", "def normalize_keys")  # the answer renamed the def: its examples follow
    assert rename_identifier("pkg/keys.py", renamed, "make_keys", "normalize_keys", True) == (
        renamed.replace(">>> make_keys", ">>> normalize_keys"), 1)


def test_javascript_objects_keep_their_keys_but_the_defining_module_exports_the_new_name() -> None:
    defining = ("const compare = (a, b) => a - b\nconst rcompare = (a, b) => compare(b, a)\n"
                "const opts = { compare: 1 }\nmodule.exports = {\n  compare,\n  rcompare,\n}\n"
                "module.exports.compare = compare\n")
    renamed, _ = rename_identifier("internal/ids.js", defining, "compare", "comparePair", True)
    assert renamed == ("const comparePair = (a, b) => a - b\nconst rcompare = (a, b) => comparePair(b, a)\n"
                       "const opts = { compare: 1 }\nmodule.exports = {\n  comparePair,\n"
                       "  rcompare,\n}\nmodule.exports.comparePair = comparePair\n")
    user = "const { compare } = require('../internal/ids')\nconst x = compare(1, 2)\nconst y = obj.compare\n"
    used, _ = rename_identifier("classes/v.js", user, "compare", "comparePair", False, "", "internal/ids.js")
    assert used == ("const { comparePair } = require('../internal/ids')\n"
                    "const x = comparePair(1, 2)\nconst y = obj.compare\n")
    # from another module (a package index that keeps its own key): the local follows, the key stays
    elsewhere = "const { compare } = require('../')\nconst x = compare(1, 2)\n"
    assert rename_identifier("classes/w.js", elsewhere, "compare", "comparePair", False, "", "internal/ids.js") == (
        "const { compare: comparePair } = require('../')\nconst x = comparePair(1, 2)\n", 2)
    unrelated = "function f (compare) { return compare }\n"
    assert rename_identifier("lib/f.js", unrelated, "compare", "comparePair", False, "", "internal/ids.js") == (
        unrelated, 0)


def test_a_javascript_module_s_readers_follow_its_export_and_a_public_index_keeps_its_key() -> None:
    index = ("const ids = require('./internal/ids')\nfunction f (compare) { return compare }\n"
             "module.exports = {\n  compare: ids.compare,\n  other: obj.compare,\n}\n")
    assert rename_identifier("index.js", index, "compare", "comparePair", False, "", "internal/ids.js") == (
        "const ids = require('./internal/ids')\nfunction f (compare) { return compare }\n"
        "module.exports = {\n  compare: ids.comparePair,\n  other: obj.compare,\n}\n", 1)
    esm = "import * as ids from '../internal/ids.js'\nids.compare(1, 2)\n"
    assert rename_identifier("lib/e.mjs", esm, "compare", "comparePair", False, "", "internal/ids.js")[0] == (
        "import * as ids from '../internal/ids.js'\nids.comparePair(1, 2)\n")
    direct = "const c = require('../internal/ids').compare\n"
    assert rename_identifier("lib/d.js", direct, "compare", "comparePair", False, "", "internal/ids.js")[0] == (
        "const c = require('../internal/ids').comparePair\n")
    # the same reads of another module are not the definition's
    other = "const ids = require('./internal/other')\nids.compare(1, 2)\n"
    assert rename_identifier("index.js", other, "compare", "comparePair", False, "", "internal/ids.js") == (other, 0)


def test_unknown_language_is_left_as_it_is() -> None:
    assert rename_identifier("README.md", "make_keys", "make_keys", "normalize_keys", True) == ("make_keys", 0)


def test_a_method_s_attribute_uses_follow_in_files_that_import_from_its_package() -> None:
    """A method is called on instances (``dur.totimedelta()``): given its package, a file that imports from that
    package takes the rename in its ``obj.name`` uses; a file that imports nothing of it does not, and neither do
    locals or strings of the same name."""
    user = ("from isodate import Duration\n\n\ndef test_totimedelta(totimedelta):\n"
            "    dur = Duration(months=2)\n    assert dur.totimedelta(1) == Duration().totimedelta(1)\n"
            "    print('totimedelta', totimedelta)\n")
    text, count = rename_identifier("tests/test_duration.py", user, "totimedelta", "to_timedelta", False, "isodate")
    assert count == 2 and text == user.replace(".totimedelta(", ".to_timedelta(")
    assert "def test_totimedelta(totimedelta)" in text and "print('totimedelta', totimedelta)" in text
    # the same file without the package: a plain rename leaves attribute uses on unknown objects alone
    assert rename_identifier("tests/test_duration.py", user, "totimedelta", "to_timedelta", False) == (user, 0)
    inside = "from .duration import Duration\n\n\ndef f(d):\n    return d.totimedelta()\n"  # a relative import
    assert rename_identifier("src/isodate/isostrf.py", inside, "totimedelta", "to_timedelta", False, "isodate") == (
        inside.replace("d.totimedelta", "d.to_timedelta"), 1)
    elsewhere = "import isodatex\n\n\ndef f(d):\n    return d.totimedelta()\n"  # another package's importer
    assert rename_identifier("tools/f.py", elsewhere, "totimedelta", "to_timedelta", False, "isodate") == (elsewhere, 0)
