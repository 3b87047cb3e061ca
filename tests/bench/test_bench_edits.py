"""``contenox bench edits``' tasks: each tuned task's test fails as made and passes once the bug is fixed (so the
bench measures fixes, not broken tasks); its summary counts per arm and group."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from contenox.bench.edits import TASKS, Task, _make, _passes, _summary

FIXES = {"add-two": ("util.py", "x + 1", "x + 2"),
         "slugify-lowercase": ("text.py", 'return "-".join(words(s))', 'return "-".join(words(s.lower()))'),
         "default-port": ("server/config.py", "8000", "8080")}


@pytest.mark.parametrize("task", [t for t in TASKS if t.group == "tuned"], ids=lambda t: t.name)
def test_a_tuned_task_fails_as_made_and_passes_once_fixed(task: Task, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # the task's `python -m pytest` is this interpreter's (the one with pytest), as in the bench's node
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    repo = _make(task, tmp_path, tmp_path / "no-repos")
    assert not _passes(repo, task.test)
    path, old, new = FIXES[task.name]
    (repo / path).write_text((repo / path).read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    assert _passes(repo, task.test)


def test_the_summary_counts_each_arm_and_group() -> None:
    def row(arm: str, group: str, applied: bool, redraws: int) -> dict[str, object]:
        return {"arm": arm, "group": group, "called_edit": True, "own_edit_applied": applied, "redraws": redraws,
                "own_check_ran": applied, "own_check_passed": applied, "offered_edit_passes": True, "wall_s": 10.0}

    summary = _summary([row("redraw", "tuned", True, 1), row("redraw", "held-out", False, 1),
                        row("off", "tuned", False, 0)])
    assert summary["redraw/all"]["own_edit_applied"] == 1 and summary["redraw/all"]["redrawn"] == 2
    assert summary["redraw/tuned"]["tasks"] == 1 and summary["off/all"]["own_edit_applied"] == 0
    assert "off/held-out" not in summary
