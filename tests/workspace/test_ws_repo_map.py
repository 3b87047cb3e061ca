"""The repo map: golden output, determinism across processes and hash seeds, locality of changes."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

from contenox.runtime_ov.tokenizer import Tokenizer
from contenox.workspace import Workspace
from contenox.workspace._graph import pagerank
from support import golden
from support.gitrepo import git, write
from support.wsrepo import APP_FILES, count_tokens

OpenWs = Callable[..., Workspace]
GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, text: str) -> None:
    golden.check_golden(GOLDEN / name, text)


def test_golden_maps(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    check_golden("app_map_full.txt", ws.repo_map(1000, count_tokens))
    check_golden("app_map_small.txt", ws.repo_map(40, count_tokens))
    check_golden("app_map_mentioned.txt", ws.repo_map(40, count_tokens, mentioned=("Store", "web/app.js")))
    assert count_tokens(ws.repo_map(40, count_tokens)) <= 40
    assert ws.repo_map(0, count_tokens) == ""


def test_boosts_change_the_selection(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    plain = ws.repo_map(30, count_tokens)
    assert "native/store.go" not in plain
    assert "native/store.go:" in ws.repo_map(30, count_tokens, mentioned=("NewStore",))
    assert "native/store.go:" in ws.repo_map(30, count_tokens, pinned=("native/store.go",))
    assert "native/store.go:" in ws.repo_map(30, count_tokens, open_files=(str(ws.root / "native/store.go"),))


MAP_SCRIPT = """
import sys
from contenox.config import WorkspaceConfig
from contenox.workspace import Workspace
ws = Workspace.open(sys.argv[1], WorkspaceConfig(), sys.argv[2])
sys.stdout.write(ws.repo_map(60, lambda s: (len(s) + 3) // 4, mentioned=("format_name",)))
"""


def test_byte_identical_across_processes_and_hash_seeds(make_repo: Callable[..., Path], open_ws: OpenWs,
                                                        tmp_path: Path) -> None:
    root = make_repo()
    outputs = set()
    for seed, cache in (("1", "c1"), ("2", "c2"), ("3", "c1")):
        done = subprocess.run([sys.executable, "-c", MAP_SCRIPT, str(root), str(tmp_path / cache)],
                              env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    ws = open_ws(root)
    assert ws.repo_map(60, count_tokens, mentioned=("format_name",)).encode() in outputs


def test_file_order_does_not_matter(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    forward = make_repo(name="forward")
    backward = make_repo(dict(reversed(list(APP_FILES.items()))), name="backward")
    a, b = open_ws(forward), open_ws(backward)
    assert a.repo_map(200, count_tokens) == b.repo_map(200, count_tokens)


def _many_files(n: int) -> dict[str, str]:
    files = {}
    for i in range(n):
        files[f"pkg/mod{i:02d}.py"] = (
            f"class Thing{i}:\n    def run_{i}(self):\n        return helper_{(i + 1) % n}()\n\n\n"
            f"def helper_{i}():\n    return Thing{(i * 7) % n}().run_{(i * 7) % n}()\n")
    return files


def test_incremental_index_equals_fresh_index(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo(_many_files(20))
    ws = open_ws(root)
    ws.repo_map(150, count_tokens)
    write(root, "pkg/mod03.py", "def helper_3():\n    return helper_9()\n\n\ndef extra_3(x):\n    return x\n")
    (root / "pkg/mod05.py").unlink()
    ws.refresh()
    assert ws.repo_map(150, count_tokens) == open_ws(root).repo_map(150, count_tokens)
    fresh = open_ws(root)
    assert fresh._index.edges_by_path() == ws._index.edges_by_path()


def test_an_edit_that_brings_many_new_identifiers_refreshes(make_repo: Callable[..., Path],
                                                            open_ws: OpenWs) -> None:
    """Regression: growing the identifier table during a refresh must not index the old table."""
    root = make_repo(_many_files(3))
    ws = open_ws(root)
    calls = "".join(f"    fresh_name_{i}()\n" for i in range(2500))
    write(root, "pkg/mod01.py", f"def caller():\n{calls}")
    ws.refresh()
    assert ws.repo_map(2000, count_tokens) == open_ws(root).repo_map(2000, count_tokens)


def test_one_file_edit_changes_only_its_entries(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo(_many_files(20))
    ws = open_ws(root)
    before = ws.repo_map(2000, count_tokens)
    text = (root / "pkg/mod04.py").read_text().replace("def run_4(self):", "def run_4(self, fast=False):")
    write(root, "pkg/mod04.py", text)
    ws.refresh()
    after = ws.repo_map(2000, count_tokens)
    assert before != after
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-│    def run_4(self):", "+│    def run_4(self, fast=False):"]


def test_pagerank_matches_networkx() -> None:
    graph = nx.DiGraph()
    edges = [(0, 1, 3.0), (1, 2, 1.0), (2, 0, 2.0), (0, 2, 1.0), (3, 2, 5.0)]  # node 4 dangling, isolated
    graph.add_nodes_from(range(5))
    graph.add_weighted_edges_from(edges)
    personal = {0: 1.0, 1: 1.0, 2: 1.0, 3: 11.0, 4: 1.0}
    expected = _pagerank_python(graph, personalization=personal, tol=1e-12, max_iter=500)
    src, dst, w = (np.array([e[i] for e in edges]) for i in range(3))
    got = pagerank(5, src.astype(np.int64), dst.astype(np.int64), w.astype(np.float64),
                   np.array([personal[i] for i in range(5)]), tol=1e-14, max_iter=500)
    assert got == pytest.approx([expected[i] for i in range(5)], abs=1e-9)


def test_map_after_commit_is_unchanged(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root)
    before = ws.repo_map(200, count_tokens)
    write(root, "notes.txt", "hello\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-q", "-m", "notes")
    events = ws.refresh()
    assert all("repo_map" not in e.segments for e in events)
    assert ws.repo_map(200, count_tokens) == before


def test_parallel_cold_index_equals_serial(make_repo: Callable[..., Path], open_ws: OpenWs,
                                           monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    root = make_repo(_many_files(70) | {f"gen/g{i}.py": f"def g{i}():\n    return helper_{i}()\n" for i in range(70)})
    monkeypatch.setattr(Workspace, "config_workers", staticmethod(lambda: 2))
    parallel = open_ws(root, cache=None)
    assert "parallel tagging unavailable" not in caplog.text
    monkeypatch.setattr(Workspace, "config_workers", staticmethod(lambda: 1))
    serial = open_ws(root, cache=None)
    assert parallel.status().tagged_files == serial.status().tagged_files == 140
    assert parallel.repo_map(500, count_tokens) == serial.repo_map(500, count_tokens)
    assert parallel._index.edges_by_path() == serial._index.edges_by_path()


def test_budget_with_the_real_tokenizer(make_repo: Callable[..., Path], open_ws: OpenWs, tokenizer: Tokenizer) -> None:
    encode = tokenizer.encode

    def count(text: str) -> int:
        return len(encode(text))

    ws = open_ws(make_repo(_many_files(30)))
    for budget in (25, 120, 400):
        text = ws.repo_map(budget, count)
        assert 0 < count(text) <= budget
        assert count(text) > budget * 0.6  # the budget is used, not left mostly empty
    assert ws.repo_map(400, count) == open_ws(ws.root).repo_map(400, count)
