"""``contenox bench anticipation``: a replayed editing session on a real node (SmolLM2) and a real git history;
it asserts what the session did and counted, never a timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.bench.anticipation import first_change, run_session
from support.gitrepo import git, write
from support.nodekit import write_config

DIFF = """diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -3,0 +4 @@ intro
+more
diff --git a/pkg/lib.py b/pkg/lib.py
--- a/pkg/lib.py
+++ b/pkg/lib.py
@@ -12,2 +12,3 @@ def f():
-    return 1
+    return 2
@@ -40 +41 @@ def g():
"""


def test_the_first_change_is_the_first_hunk_of_the_first_source_file() -> None:
    assert first_change(DIFF) == ("pkg/lib.py", 12, 12)
    assert first_change("+++ b/notes.txt\n@@ -1 +1 @@\n") is None  # not source
    assert first_change("") is None
    assert first_change("+++ b/a.py\n@@ -0,0 +1,3 @@\n") == ("a.py", 1, 1)  # lines are 1-based


def _history(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    write(root, "lib.py", "".join(f"def step_{i}(x):\n    return x * {i}\n\n\n" for i in range(6)))
    write(root, "main.py", "from lib import step_1\n\nprint(step_1(3))\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    for i in range(3):
        path = root / "lib.py"
        path.write_text(path.read_text().replace(f"return x * {i * 2}", f"return x * {i * 2} + 1"))
        git(root, "commit", "-qam", f"change {i}")
    return root


@pytest.mark.slow
def test_a_replayed_session_counts_what_was_anticipated_and_what_a_question_used(home: Path, tmp_path: Path) -> None:
    config = write_config(home, "[engine]\ncache_size_gb = 0.5\n\n[anticipate]\ndelay_ms = 50\nquiet_ms = 0\n")
    repo = _history(tmp_path / "history")
    before = git(repo, "status", "--porcelain") + git(repo, "rev-parse", "HEAD")
    said: list[str] = []
    report = run_session(config, "smollm2-135m", repo, "HEAD~3..HEAD", steps=3, pace_s=3.0, ask_every=3,
                         max_new_tokens=4, say=said.append)
    assert [r["place"] for r in report["records"]] == ["lib.py:2", "lib.py:10", "lib.py:18"]
    assert report["steps"] == 3 and report["questions"] == 1 and len(said) == 3
    question = report["records"][-1]
    assert question["question"] and question["ttft_ms"] is not None and question["anticipated"] is not None
    # the anticipations computed code, and the question found some of it cached: counted, not guessed
    assert report["prefilled_code_tokens"] > 0 and report["prefilled_tokens"] >= report["prefilled_code_tokens"]
    assert 0 < report["code_tokens_used"] == question["anticipated"]["cached_tokens"]
    assert 0.0 <= report["code_never_used_share"] < 1.0
    assert report["prefilled_tokens_per_minute"] > 0 and report["minutes"] > 0
    assert git(repo, "status", "--porcelain") + git(repo, "rev-parse", "HEAD") == before  # only a clone was used
