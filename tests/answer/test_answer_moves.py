"""A rename that moves its file (``answer.moves``): the question names the new file, the old one is deleted, the
new one holds the renamed text and every import of it follows (``workspace.retarget_imports``, by syntax tree).
The whole change is one patch ``git apply`` takes, and the CLI's ``--apply`` and the scratch copy lay it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.answer.edits import ProposedEdit, ProposedEdits, unified_diff
from contenox.answer.moves import asked_move, move_renamed_file
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
