"""An answer that renames a definition has every use follow, like an editor's rename refactoring: the node's
proposed edits cover the callers, imports and tests the answer did not write blocks for, and explain-context
says so; an ambiguous name is left as written, with why. The answer is scripted (tests/support/agent_kit.py);
tokenizer, planner, engine, workspace and git are real."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from contenox.node import Node, backend
from contenox.node.contract import TurnRequest
from contenox.runtime_ov import InstalledModel
from support.agent_kit import Script, certified_node
from support.gitrepo import make_repo

pytestmark = pytest.mark.slow

FILES = {
    "pkg/__init__.py": "",
    "pkg/keys.py": "def make_keys(key):\n    return [key]\n\n\ndef both(a, b):\n    return make_keys(a) + make_keys(b)\n",
    "pkg/signer.py": "from pkg.keys import make_keys\n\n\nclass Signer:\n    def __init__(self, key):\n"
                     "        self.keys = make_keys(key)  # see make_keys\n",
    "pkg/other.py": "def run(make_keys):\n    return make_keys()\n",
    "tests/test_keys.py": "from pkg.keys import make_keys\n\n\ndef test_make_keys():\n    assert make_keys('a') == ['a']\n",
    "pkg/dup_a.py": "def load():\n    return 1\n",
    "pkg/dup_b.py": "def load():\n    return 2\n",
}
RENAME = """`make_keys` in `pkg/keys.py` becomes `normalize_keys`:

pkg/keys.py
<<<<<<< SEARCH
def make_keys(key):
=======
def normalize_keys(key):
>>>>>>> REPLACE
"""


@pytest.fixture
async def node(tmp_path: Path, fim_model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Node]:
    async with certified_node(tmp_path / "home", fim_model, monkeypatch) as node:
        yield node


async def test_a_renamed_definition_is_renamed_at_every_use(node: Node, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    monkeypatch.setattr(backend, "submit", Script(RENAME).submit)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename make_keys to normalize_keys everywhere."))
    edits = {e.path: e for e in outcome.edits.edits}
    assert sorted(edits) == ["pkg/keys.py", "pkg/signer.py", "tests/test_keys.py"]  # not pkg/other.py's parameter
    assert edits["pkg/keys.py"].blocks == 1 and edits["pkg/signer.py"].blocks == 0
    assert "return normalize_keys(a) + normalize_keys(b)" in edits["pkg/keys.py"].new_text
    assert edits["pkg/signer.py"].new_text == FILES["pkg/signer.py"].replace(
        "import make_keys", "import normalize_keys").replace("= make_keys(key)", "= normalize_keys(key)")
    assert "def test_make_keys():" in edits["tests/test_keys.py"].new_text  # a longer name is another name
    note = next(n for n in outcome.explain.notes if n.startswith("rename of `make_keys` to `normalize_keys`"))
    assert ("carried to every use: 6 more place(s): pkg/keys.py (2), pkg/signer.py (2), "
            "tests/test_keys.py (2)") in note
    assert ("rename of `make_keys` not carried into pkg/other.py: the name is there but not imported (a comment, "
            "a string, another object's attribute or a local); check them") in outcome.explain.notes
    # the diff applies, the files are untouched until then, and the renamed code runs
    assert (repo / "pkg/keys.py").read_text() == FILES["pkg/keys.py"]
    subprocess.run(["git", "apply", "-"], cwd=repo, input=outcome.edits.diff, text=True, check=True)
    test = subprocess.run(["python", "-c", "from pkg.signer import Signer; assert Signer('k').keys == ['k']; "
                           "from tests.test_keys import test_make_keys; test_make_keys()"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert test.returncode == 0, test.stderr


async def test_a_name_defined_twice_is_left_as_written(node: Node, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    answer = "pkg/dup_a.py\n<<<<<<< SEARCH\ndef load():\n=======\ndef load_config():\n>>>>>>> REPLACE\n"
    monkeypatch.setattr(backend, "submit", Script(answer).submit)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename load in dup_a."))
    assert [e.path for e in outcome.edits.edits] == ["pkg/dup_a.py"]
    assert ("rename of `load` to `load_config` left as written: `load` is defined in 2 places, so its uses are "
            "ambiguous") in outcome.explain.notes


async def test_a_definition_quoted_whole_under_its_new_name_is_a_rename(node: Node, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    answer = ("Replace the helper with:\n\npkg/keys.py\n```python\ndef normalize_keys(key):\n    return [key]\n```\n")
    monkeypatch.setattr(backend, "submit", Script(answer).submit)
    outcome = await node.turn(TurnRequest(root=str(repo), prompt="Rename make_keys to normalize_keys."))
    assert sorted(e.path for e in outcome.edits.edits) == ["pkg/keys.py", "pkg/signer.py", "tests/test_keys.py"]
    keys = next(e for e in outcome.edits.edits if e.path == "pkg/keys.py")
    assert keys.new_text == FILES["pkg/keys.py"].replace("make_keys", "normalize_keys")
