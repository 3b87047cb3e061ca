"""The one edit applier (``answer.edits.apply_edit``) and its users: the CLI's ``--apply`` (all or none, the
file's mode kept, nothing outside the workspace), the scratch copy a verification checks. Real files and git."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from contenox.answer.edits import ProposedEdit, apply_edit, first_changed_line, unified_diff
from contenox.cli import _apply_edits
from contenox.errors import StaleEdit
from contenox.verify import EditLike, ScratchTree
from support.gitrepo import make_repo

OLD = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
NEW = OLD.replace("return 2", "return 3")


def _edit(path: str, old: str | None, new: str) -> ProposedEdit:
    return ProposedEdit(path=path, old_text=old, new_text=new, diff=unified_diff(path, old, new), blocks=1)


def _wire(edit: ProposedEdit) -> dict[str, object]:
    """An edit as the node's ``ask`` answer carries it."""
    return {"path": edit.path, "diff": edit.diff, "new_file": edit.old_text is None, "blocks": edit.blocks,
            "old_text": edit.old_text, "new_text": edit.new_text}


def test_apply_edit_checks_the_text_the_edit_was_made_from() -> None:
    edit = _edit("m.py", OLD, NEW)
    assert apply_edit(edit, OLD) == NEW
    with pytest.raises(StaleEdit, match=r"m\.py changed since the edit was proposed"):
        apply_edit(edit, OLD + "# edited since\n")
    with pytest.raises(StaleEdit):
        apply_edit(edit, None)  # the file is gone
    assert apply_edit(_edit("new.py", None, "x = 1\n"), None) == "x = 1\n"
    assert first_changed_line(edit) == 6 and first_changed_line(_edit("new.py", None, "x = 1\n")) == 1


def test_cli_apply_writes_every_edit_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path / "repo", {"m.py": OLD, "n.py": "n = 1\n"})
    (root / "m.py").chmod(0o755)
    stale = _edit("n.py", "n = 0\n", "n = 2\n")  # made from a text the file no longer holds
    assert _apply_edits(root, [_wire(_edit("m.py", OLD, NEW)), _wire(stale)]) == 1
    assert "n.py changed since the edit was proposed" in capsys.readouterr().err
    assert (root / "m.py").read_text() == OLD and (root / "n.py").read_text() == "n = 1\n"  # none written
    created = _edit("pkg/new.py", None, "x = 1\n")
    assert _apply_edits(root, [_wire(_edit("m.py", OLD, NEW)), _wire(created)]) == 0
    assert (root / "m.py").read_text() == NEW and (root / "pkg/new.py").read_text() == "x = 1\n"
    assert stat.S_IMODE((root / "m.py").stat().st_mode) == 0o755  # the user's file keeps its mode
    assert _apply_edits(root, [_wire(_edit("../outside.py", None, "x\n"))]) == 1
    assert "outside the workspace" in capsys.readouterr().err and not (tmp_path / "outside.py").exists()


def test_the_scratch_copy_lays_edits_through_the_same_applier(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"m.py": OLD})
    tree = ScratchTree(root, tmp_path / "scratch")
    tree.build({})
    try:
        assert tree.apply([EditLike(path="m.py", old_text=OLD, new_text=NEW)]) is None
        assert (tree.tree / "m.py").read_text() == NEW
        assert tree.apply([EditLike(path="m.py", old_text="other\n", new_text=NEW)]) == (
            "m.py does not hold the text the edit was made from")
        assert (tree.tree / "m.py").read_text() == OLD  # taken back
    finally:
        tree.remove()
    assert (root / "m.py").read_text() == OLD
