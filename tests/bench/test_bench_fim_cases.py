"""The completion benchmark's held-out cases and scores, on a small real source tree."""

from __future__ import annotations

from pathlib import Path

from contenox.bench.fim_cases import edit_similarity, extract_cases, score

SOURCE = '''import os


def join(a, b):
    """Join two paths."""
    if not a:
        return b
    return os.path.join(a, b)


class Box:
    def size(self):
        return 1

    def grow(self, n):
        self.n = n
        return self.n * 2
'''


def test_cases_delete_a_body_and_keep_the_cursor_at_its_indentation(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "paths.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_paths.py").write_text(SOURCE)  # tests are never cases
    cases = {c.function: c for c in extract_cases("demo", tmp_path, 10, seed=1)}
    assert set(cases) == {"join", "grow"}  # size's body is one line
    join = cases["join"]
    assert join.path == "pkg/paths.py" and join.line == 5 and join.character == 4
    lines = join.text.split("\n")
    assert lines[4] == '    """Join two paths."""' and lines[5] == "    " and lines[6] == ""
    assert join.expected == "if not a:\n        return b\n    return os.path.join(a, b)"
    assert extract_cases("demo", tmp_path, 10, seed=1) == extract_cases("demo", tmp_path, 10, seed=1)


def test_scores_compare_the_first_line_and_the_block() -> None:
    expected = "if not a:\n        return b\n    return os.path.join(a, b)"
    exact = score("if not a:\n        return b\n    return os.path.join(a, b)\n", expected)
    assert exact.first_line_exact and exact.block_exact and exact.block_similarity == 1.0
    partial = score("if not a:\n        return a", expected)
    assert partial.first_line_exact and not partial.block_exact and 0.3 < partial.block_similarity < 1.0
    assert score("", expected).first_line_similarity == 0.0
    assert edit_similarity("kitten", "sitting") == 1 - 3 / 7
