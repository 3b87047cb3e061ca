"""Localization from the failing run: the workspace's source frames, innermost first, tests and the standard
library left out, in pytest's short form, Python's own traceback and Node's stack."""

from __future__ import annotations

from pathlib import Path

from contenox.verify import Frame, frames, is_test_path
from support.gitrepo import write

PYTEST = """$ python -m pytest -q tests/test_encoding.py
src/pkg/encoding.py:35: in base64_decode
    return base64.urlsafe_b64decode(string)
/usr/lib/python3.11/base64.py:134: in urlsafe_b64decode
    return b64decode(s)
tests/test_encoding.py:21: in test_base64
    dec = base64_decode(enc)
src/pkg/encoding.py:37: in base64_decode
    raise BadData("Invalid base64-encoded data") from e
src/pkg/missing.py:3: in gone
"""


def test_pytest_frames_innermost_first(tmp_path: Path) -> None:
    write(tmp_path, "src/pkg/encoding.py", "x = 1\n")
    write(tmp_path, "tests/test_encoding.py", "x = 1\n")
    assert frames(PYTEST, tmp_path) == [Frame(path="src/pkg/encoding.py", line=37, function="base64_decode")]


def test_python_and_node_tracebacks(tmp_path: Path) -> None:
    write(tmp_path, "app/core.py", "x = 1\n")
    write(tmp_path, "lib/range.js", "x = 1\n")
    python = (f'Traceback (most recent call last):\n  File "{tmp_path}/app/core.py", line 4, in load\n'
              '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\nValueError: bad')
    assert frames(python, tmp_path) == [Frame(path="app/core.py", line=4, function="load")]
    node = (f"TypeError: x\n    at Range.parse ({tmp_path}/lib/range.js:12:7)\n"
            "    at node:internal/main:1:1\n    at lib/range.js:30:2")
    # V8 prints the innermost frame first; a method is found by its own name
    assert frames(node, tmp_path) == [Frame(path="lib/range.js", line=12, function="parse"),
                                      Frame(path="lib/range.js", line=30, function="<module>")]


def test_node_frames_name_the_constructor_and_the_module(tmp_path: Path) -> None:
    write(tmp_path, "classes/semver.js", "x = 1\n")
    write(tmp_path, "classes/comparator.js", "x = 1\n")
    write(tmp_path, "ranges/subset.js", "x = 1\n")
    stack = (f"TypeError: Invalid Version: 0\n    at new SemVer ({tmp_path}/classes/semver.js:38:13)\n"
             f"    at Comparator.parse ({tmp_path}/classes/comparator.js:51:21)\n"
             f"    at new Comparator ({tmp_path}/classes/comparator.js:23:10)\n"
             f"    at Object.<anonymous> ({tmp_path}/ranges/subset.js:71:39)\n"
             "    at Module._compile (node:internal/modules/cjs/loader:1521:14)\n"
             f"    at async Promise.all (index 0)\n    at async load [as run] ({tmp_path}/ranges/subset.js:9:3)")
    assert frames(stack, tmp_path) == [
        Frame(path="classes/semver.js", line=38, function="constructor"),
        Frame(path="classes/comparator.js", line=51, function="parse"),
        Frame(path="classes/comparator.js", line=23, function="constructor"),
        Frame(path="ranges/subset.js", line=71, function="<module>"),
        Frame(path="ranges/subset.js", line=9, function="load")]


def test_test_paths() -> None:
    assert all(is_test_path(p) for p in ("tests/a.py", "test/x.js", "pkg/test_a.py", "a_test.go", "x.spec.ts",
                                         "conftest.py"))
    assert not any(is_test_path(p) for p in ("src/pkg/encoding.py", "lib/range.js", "contest.py"))
