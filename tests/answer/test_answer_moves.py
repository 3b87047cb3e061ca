"""A rename that moves its file (``answer.moves``): the question names the new file, the old one is deleted, the
new one holds the renamed text and every import of it follows (``workspace.retarget_imports``, by syntax tree).
The whole change is one patch ``git apply`` takes, and the CLI's ``--apply`` and the scratch copy lay it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.answer.edits import ProposedEdit, ProposedEdits, unified_diff
from contenox.answer.moves import asked_file_move, asked_move, move_file, move_renamed_file
from contenox.cli import _apply_edits
from contenox.verify import EditLike, ScratchTree
from contenox.workspace import retarget_imports
from support.gitrepo import make_repo

ASK = ("Rename the parseOptions helper to normalizeOptions, including the file (internal/normalize-options.js), "
       "and update every require of it.")
HELPER = "const parseOptions = options => options || {}\nmodule.exports = parseOptions\n"
FILES = {
    "internal/parse-options.js": HELPER,
    "classes/range.js": "const parseOptions = require('../internal/parse-options')\nparseOptions(1)\n",
    "index.js": "const p = require('./internal/parse-options.js')\nconst other = require('./internal/re')\n",
    "internal/re.js": "module.exports = {}\n",
    "README.md": "see internal/parse-options\n",
}


def _renaming(files: dict[str, str]) -> ProposedEdits:
    new = HELPER.replace("const parseOptions", "const normalizeOptions").replace("= parseOptions", "= normalizeOptions")
    path = "internal/parse-options.js"
    return ProposedEdits(edits=(ProposedEdit(path=path, old_text=files[path], new_text=new,
                                             diff=unified_diff(path, files[path], new), blocks=1),))


def _users(files: dict[str, str]) -> Callable[[str], list[str]]:
    return lambda word: [path for path, text in files.items() if word in text]


def test_the_file_a_rename_question_names_is_where_the_renamed_file_moves() -> None:
    exists = FILES.__contains__
    assert asked_move(ASK, ["internal/parse-options.js"], exists) == ("internal/parse-options.js",
                                                                      "internal/normalize-options.js")
    # a bare name goes beside the old file; a path that exists, two new paths, or no rename asked: no move
    assert asked_move("Rename parseOptions to normalizeOptions and its file to normalize-options.js",
                      ["internal/parse-options.js"], exists) == ("internal/parse-options.js",
                                                                 "internal/normalize-options.js")
    assert asked_move("Rename parseOptions to normalizeOptions in internal/parse-options.js",
                      ["internal/parse-options.js"], exists) is None
    assert asked_move("Rename parseOptions to normalizeOptions (a.js, b.js)", ["internal/parse-options.js"],
                      exists) is None
    assert asked_move("Add internal/normalize-options.js beside parseOptions", ["internal/parse-options.js"],
                      exists) is None
    assert asked_move(ASK, ["internal/parse-options.py"], exists) is None  # not the kind of file named


def test_a_moved_file_s_requires_follow_and_the_patch_applies(tmp_path: Path) -> None:
    moved = move_renamed_file(_renaming(FILES), ASK, FILES.get, _users(FILES), retarget_imports)
    edits = {edit.path: edit for edit in moved.edits}
    assert set(edits) == {"internal/parse-options.js", "internal/normalize-options.js", "classes/range.js",
                          "index.js"}
    assert edits["internal/parse-options.js"].new_text is None
    assert "deleted file mode" in edits["internal/parse-options.js"].diff
    assert edits["internal/normalize-options.js"].old_text is None
    assert "const normalizeOptions" in (edits["internal/normalize-options.js"].new_text or "")
    assert edits["classes/range.js"].new_text == FILES["classes/range.js"].replace(
        "'../internal/parse-options'", "'../internal/normalize-options'")
    assert edits["index.js"].new_text == FILES["index.js"].replace(
        "./internal/parse-options.js", "./internal/normalize-options.js")  # its extension kept, the other left
    assert moved.notes[-1] == ("file internal/parse-options.js moved to internal/normalize-options.js, as the "
                               "question asks: 2 import(s) follow: classes/range.js (1), index.js (1)")
    root = make_repo(tmp_path / "repo", FILES)
    subprocess.run(["git", "apply", "-"], cwd=root, input=moved.diff.encode(), check=True)
    assert not (root / "internal/parse-options.js").exists()
    assert (root / "internal/normalize-options.js").read_text() == edits["internal/normalize-options.js"].new_text
    # no rename asked: nothing moves
    assert move_renamed_file(_renaming(FILES), "Make it shorter (internal/x.js)", FILES.get, _users(FILES),
                             retarget_imports) == _renaming(FILES)


def test_the_moved_file_is_the_one_renaming_to_the_asked_name_when_its_test_is_renamed_too() -> None:
    """The answer renamed the test of the function as well (two files rename a definition): the file that moves is
    the one whose rename gives the name the question asks, not an ambiguity that moves nothing."""
    test = "const parseOptions = require('../internal/parse-options')\nfunction testParseOptions () {}\n"
    files = {**FILES, "test/parse-options.js": test}
    renamed_test = test.replace("function testParseOptions", "function testNormalizeOptions")
    both = ProposedEdits(edits=(ProposedEdit(path="test/parse-options.js", old_text=test, new_text=renamed_test,
                                             diff=unified_diff("test/parse-options.js", test, renamed_test), blocks=1),
                                *_renaming(files).edits))
    moved = move_renamed_file(both, ASK, files.get, _users(files), retarget_imports)
    assert moved.notes[-1].startswith("file internal/parse-options.js moved to internal/normalize-options.js")
    assert {e.path for e in moved.edits} >= {"internal/normalize-options.js", "test/parse-options.js"}


def test_cli_apply_and_the_scratch_copy_delete_the_moved_file(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    moved = move_renamed_file(_renaming(FILES), ASK, FILES.get, _users(FILES), retarget_imports)
    scratch = ScratchTree(make_repo(tmp_path / "user", FILES), tmp_path / "scratch")
    scratch.build({})
    assert scratch.apply([EditLike(path=e.path, old_text=e.old_text, new_text=e.new_text)
                          for e in moved.edits]) is None
    assert scratch.read("internal/parse-options.js") is None and scratch.read("internal/normalize-options.js")
    scratch.reset()  # taken back: the old file again, the new one gone
    assert scratch.read("internal/parse-options.js") == HELPER and scratch.read("internal/normalize-options.js") is None
    root = make_repo(tmp_path / "repo", FILES)
    wire = [{"path": e.path, "diff": e.diff, "blocks": e.blocks, "old_text": e.old_text, "new_text": e.new_text}
            for e in moved.edits]
    assert _apply_edits(root, wire) == 0
    assert not (root / "internal/parse-options.js").exists()
    assert "normalizeOptions" in (root / "internal/normalize-options.js").read_text()
    assert "normalize-options" in (root / "classes/range.js").read_text()


def test_python_imports_of_a_moved_module_follow() -> None:
    user = "from .parse_options import parse\nfrom pkg.parse_options import other\nfrom . import sibling\n"
    assert retarget_imports("src/pkg/use.py", user, "src/pkg/parse_options.py", "src/pkg/normalize.py") == (
        "from .normalize import parse\nfrom pkg.normalize import other\nfrom . import sibling\n", 2)
    spelled = ("import pkg.parse_options\nimport pkg.parse_options as po\nx = pkg.parse_options.parse(1)\n"
               "y = po.parse(2)\nz = other.parse_options.parse\n")
    assert retarget_imports("tests/t.py", spelled, "src/pkg/parse_options.py", "src/pkg/normalize.py") == (
        "import pkg.normalize\nimport pkg.normalize as po\nx = pkg.normalize.parse(1)\ny = po.parse(2)\n"
        "z = other.parse_options.parse\n", 3)
    moved_js = "const x = require('./a')\nimport z from './c.js'\nconst y = require('../lib/b')\n"
    assert retarget_imports("lib2/new.js", moved_js, "internal/old.js", "lib2/new.js") == (
        "const x = require('../internal/a')\nimport z from '../internal/c.js'\nconst y = require('../lib/b')\n", 2)


def test_a_module_imported_by_name_from_its_package_follows() -> None:
    old, same, deeper = "src/pkg/lists.py", "src/pkg/wordlists.py", "src/pkg/text/lists.py"
    as_module = "from pkg import lists\nfrom pkg import other\n\nx = lists.join([1])\ny = obj.lists\n"
    assert retarget_imports("tests/t.py", as_module, old, same) == (
        "from pkg import wordlists\nfrom pkg import other\n\nx = wordlists.join([1])\ny = obj.lists\n", 2)
    passed_on = "from . import lists, numbers\n\nregister(lists)\nlists.join([])\n"
    assert retarget_imports("src/pkg/use.py", passed_on, old, same) == (
        "from . import wordlists as lists, numbers\n\nregister(lists)\nlists.join([])\n", 1)
    aliased = "from pkg import lists as L\n"
    assert retarget_imports("tests/t.py", aliased, old, same) == ("from pkg import wordlists as L\n", 1)
    assert retarget_imports("tests/t.py", as_module, old, deeper) == (
        "from pkg.text import lists\nfrom pkg import other\n\nx = lists.join([1])\ny = obj.lists\n", 1)
    assert retarget_imports("src/pkg/use.py", "from . import lists\n", old, deeper) == ("from .text import lists\n", 1)
    # one statement importing it beside others cannot point elsewhere: left, not half-changed
    assert retarget_imports("src/pkg/use.py", passed_on, old, deeper) == (passed_on, 0)
    from_module = "from .lists import join\nfrom pkg.lists import split\n"
    assert retarget_imports("src/pkg/use.py", from_module, old, deeper) == (
        "from .text.lists import join\nfrom pkg.text.lists import split\n", 2)
    assert retarget_imports("src/pkg/text/other.py", "from ..lists import join\n", old, deeper) == (
        "from .lists import join\n", 1)


def test_a_moved_python_module_s_own_relative_imports_follow_it() -> None:
    own = "from .util import f\nfrom . import numbers\nimport os\nfrom pkg.abs import g\n"
    assert retarget_imports("src/pkg/text/lists.py", own, "src/pkg/lists.py", "src/pkg/text/lists.py") == (
        "from ..util import f\nfrom .. import numbers\nimport os\nfrom pkg.abs import g\n", 2)
    # out of its top-level package: a relative import cannot climb there, so it is spelled absolute
    assert retarget_imports("src/tools/lists.py", own, "src/pkg/lists.py", "src/tools/lists.py") == (
        "from pkg.util import f\nfrom pkg import numbers\nimport os\nfrom pkg.abs import g\n", 2)
    assert retarget_imports("src/pkg/words.py", own, "src/pkg/lists.py", "src/pkg/words.py") == (own, 0)


PACKAGE = {
    "src/pkg/__init__.py": "from .lists import join\n",
    "src/pkg/lists.py": "from .util import sep\n\n\ndef join(items):\n    return sep().join(items)\n",
    "src/pkg/util.py": "def sep():\n    return ', '\n",
    "tests/test_lists.py": "from pkg import lists\n\n\ndef test_join():\n    assert lists.join(['a']) == 'a'\n",
    "src/pkg/text/__init__.py": "",
}


def test_a_question_that_tells_the_node_to_move_a_file_names_it_and_where() -> None:
    exists = PACKAGE.__contains__
    moved = ("src/pkg/lists.py", "src/pkg/text/lists.py")
    assert asked_file_move("Move src/pkg/lists.py into src/pkg/text/ and fix the imports.", exists) == moved
    assert asked_file_move("Please move `src/pkg/lists.py` to src/pkg/text/lists.py", exists) == moved
    assert asked_file_move("move src/pkg/lists.py to words.py", exists) == ("src/pkg/lists.py", "src/pkg/words.py")
    # asked about, two files or none, a path that exists, another kind of file, a rename: no move of its own
    assert asked_file_move("Why did they move src/pkg/lists.py into src/pkg/text/?", exists) is None
    assert asked_file_move("Move src/pkg/lists.py and src/pkg/util.py into src/pkg/text/", exists) is None
    assert asked_file_move("Move src/pkg/lists.py to src/pkg/util.py", exists) is None
    assert asked_file_move("Move src/pkg/lists.py to src/pkg/lists.txt", exists) is None
    assert asked_file_move("Move it into src/pkg/text/", exists) is None
    assert asked_file_move("Rename join to concat and move src/pkg/lists.py to src/pkg/text/", exists) is None


def test_a_move_needs_no_edit_block_and_its_patch_applies_and_passes(tmp_path: Path) -> None:
    ask = "Move src/pkg/lists.py into src/pkg/text/ and keep every import working."
    moved = move_file(ProposedEdits(), ask, PACKAGE.get, _users(PACKAGE), retarget_imports)
    edits = {edit.path: edit for edit in moved.edits}
    assert set(edits) == {"src/pkg/lists.py", "src/pkg/text/lists.py", "src/pkg/__init__.py", "tests/test_lists.py"}
    assert edits["src/pkg/lists.py"].new_text is None
    assert edits["src/pkg/text/lists.py"].new_text == PACKAGE["src/pkg/lists.py"].replace(".util", "..util")
    assert edits["src/pkg/__init__.py"].new_text == "from .text.lists import join\n"
    assert edits["tests/test_lists.py"].new_text == PACKAGE["tests/test_lists.py"].replace(
        "from pkg import lists", "from pkg.text import lists")
    assert moved.notes[-1].startswith("file src/pkg/lists.py moved to src/pkg/text/lists.py, as the question asks: "
                                      "3 import(s) follow")
    root = make_repo(tmp_path / "repo", PACKAGE)
    subprocess.run(["git", "apply", "-"], cwd=root, input=moved.diff.encode(), check=True)
    assert not (root / "src/pkg/lists.py").exists()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root,
                         env={**os.environ, "PYTHONPATH": "src"}, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    # the answer's own blocks changed the file first: it moves as they leave it; no move asked: unchanged
    edited = PACKAGE["src/pkg/lists.py"].replace("def join(items)", "def join(items=())")
    blocks = ProposedEdits(edits=(ProposedEdit(path="src/pkg/lists.py", old_text=PACKAGE["src/pkg/lists.py"],
                                               new_text=edited, diff="d", blocks=1),))
    after = {e.path: e for e in move_file(blocks, ask, PACKAGE.get, _users(PACKAGE), retarget_imports).edits}
    assert "def join(items=())" in (after["src/pkg/text/lists.py"].new_text or "")
    assert after["src/pkg/lists.py"].new_text is None and after["src/pkg/lists.py"].old_text == PACKAGE["src/pkg/lists.py"]
    assert move_file(blocks, "Make join take no items.", PACKAGE.get, _users(PACKAGE), retarget_imports) == blocks
