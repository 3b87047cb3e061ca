"""Where the check command comes from: the failing run, the workspace, the config, detection; or none."""

from __future__ import annotations

import json
from pathlib import Path

from contenox.verify import (
    command_from_request,
    command_from_terminal,
    pasted_run,
    resolve_check_command,
    spectrum_command,
    suite_command,
    unusable_terminal_command,
)
from contenox.verify import (
    test_file_command as alone_command,  # (named test_*: pytest would collect it)
)
from support.gitrepo import write

RUN = """$ python -m pytest -q tests/test_signer.py
..F
1 failed, 2 passed
"""


def test_terminal_prompt_forms() -> None:
    assert command_from_terminal(RUN) == "python -m pytest -q tests/test_signer.py"
    assert command_from_terminal("(venv) me@box:~/proj$ npm test\nfail") == "npm test"
    assert command_from_terminal("no prompt here\n$\n") is None


def test_a_failing_run_pasted_after_the_question_is_split_from_it() -> None:
    ask = "test_sign fails since the refactor. Fix it."
    assert pasted_run(f"{ask}\n{RUN}") == (ask, RUN.strip())
    assert pasted_run(f"{ask}\n\n```text\n{RUN}```\n") == (ask, RUN.strip())  # fenced
    node = "$ node --test\n✖ parses ranges (1.2ms)\nℹ fail 1"
    assert pasted_run(f"Why?\n(venv) me@box:~/p$ {node[2:]}") == ("Why?", f"(venv) me@box:~/p$ {node[2:]}")
    # the run first, the question typed after it: after a closing fence, a runner's summary, a traceback's error
    assert pasted_run(f"{RUN}\nWhy does test_sign fail? Fix it.") == ("Why does test_sign fail? Fix it.", RUN.strip())
    assert pasted_run(f"{ask}\n```\n{RUN}```\nIt passed yesterday.") == (f"{ask}\n\nIt passed yesterday.", RUN.strip())
    crash = "$ python app.py\nTraceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 's'"
    assert pasted_run(f"{crash}\n\nwhy?") == ("why?", crash)
    assert pasted_run(f"{node}\nℹ duration_ms 41.2\nfix parse") == ("fix parse", f"{node}\nℹ duration_ms 41.2")
    two = f"{RUN}$ git status\nnothing to commit"  # a second command after the run: nothing is the question
    assert pasted_run(two) is None
    # no run, nothing before it, or an output that shows no failure: the prompt stays as it is
    for prompt in (ask, RUN, "How do I run one test? I use\n$ python -m pytest -q\nand it prints 3 passed",
                   f"{ask}\n$ python -m pytest -q"):
        assert pasted_run(prompt) is None, prompt


def test_order_terminal_workspace_config_detected(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n")
    write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    detected = resolve_check_command(tmp_path, paths=["src/a.py", "tests/test_a.py", "tests/missing_test.py"])
    assert detected is not None
    assert (detected.command, detected.source) == ("python -m pytest -q -x tests/test_a.py", "detected")
    configured = resolve_check_command(tmp_path, configured="make check")
    assert configured is not None and (configured.command, configured.source) == ("make check", "config")
    write(tmp_path, ".contenox.toml", '[verify]\ncommand = "tox -e py"\n')
    own = resolve_check_command(tmp_path, configured="make check")
    assert own is not None and (own.command, own.source) == ("tox -e py", "workspace")
    asked = "helper is wrong. Fix it, then run `python -m pytest -q tests/test_a.py` to check it."
    named = resolve_check_command(tmp_path, configured="make check", request=asked)
    assert named is not None and (named.command, named.source) == ("python -m pytest -q tests/test_a.py", "request")
    assert "(from the request)" in named.describe()
    first = resolve_check_command(tmp_path, terminal=RUN, configured="make check", request=asked)
    assert first is not None and first.source == "terminal"
    assert "from the failing run" in first.describe()


def test_a_request_names_a_check_command_only_as_a_test_runner_s_command_line() -> None:
    assert command_from_request("then run `pytest -q h11/tests/test_util.py`.") == "pytest -q h11/tests/test_util.py"
    assert command_from_request("`npm test` fails; run `cargo test -p core` after") == "cargo test -p core"
    assert command_from_request("explain `rm -rf build` and `helper(1)`") is None
    assert command_from_request("run `pytest; rm -rf ~`") is None  # one command line, nothing chained
    assert command_from_request("no command here") is None


def test_npm_and_nothing(tmp_path: Path) -> None:
    assert resolve_check_command(tmp_path) is None
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}))
    assert resolve_check_command(tmp_path) is None
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": "node --test"}}))
    found = resolve_check_command(tmp_path)
    assert found is not None and found.command == "npm test"


def test_broken_workspace_config_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, ".contenox.toml", "[verify\ncommand = ")
    assert resolve_check_command(tmp_path, configured="make check") is not None


def test_tests_inside_the_package_are_detected(tmp_path: Path) -> None:
    write(tmp_path, "h11/__init__.py", "")
    write(tmp_path, "h11/_util.py", "def f():\n    return 1\n")
    assert resolve_check_command(tmp_path) is None  # a package without tests
    write(tmp_path, "h11/tests/test_util.py", "def test_f():\n    pass\n")
    found = resolve_check_command(tmp_path, paths=["h11/_util.py", "h11/tests/test_util.py"])
    assert found is not None and found.source == "detected"
    assert found.command == "python -m pytest -q -x h11/tests/test_util.py"
    assert found.detail == "pytest (h11/tests/test_*.py), the turn's test files"
    by_name = resolve_check_command(tmp_path, paths=["h11/_util.py", "h11/__init__.py"])  # no test file in the turn
    assert by_name is not None and by_name.command == "python -m pytest -q -x h11/tests/test_util.py"
    assert by_name.detail == "pytest (h11/tests/test_*.py), the tests named after its files"


def test_the_tests_named_after_the_turn_s_source_files_join_the_detected_check(tmp_path: Path) -> None:
    """The fix's module's own test file (``src/pkg/keys.py`` -> ``tests/test_keys.py``) is run with the test files
    the turn named, though retrieval did not bring it into the prompt."""
    write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n")
    for path in ("src/pkg/keys.py", "src/pkg/func.py", "src/pkg/__init__.py", "tests/test_keys.py", "tests/test_lru.py",
                 "tests/func_test.py", "tests/test_init.py"):
        write(tmp_path, path, "")
    found = resolve_check_command(tmp_path, paths=["tests/test_lru.py", "src/pkg/keys.py", "src/pkg/func.py",
                                                   "src/pkg/__init__.py", "src/pkg/missing.py"])
    assert found is not None
    assert found.command == "python -m pytest -q -x tests/func_test.py tests/test_keys.py tests/test_lru.py"
    assert found.detail == ("pytest (pyproject.toml), the turn's test files, the tests "
                            "named after its files")


REPRO = """$ python repro.py
Traceback (most recent call last):
  File "/home/dev/shop/repro.py", line 10, in <module>
AssertionError
"""


def test_a_failing_script_outside_the_workspace_is_not_the_check(tmp_path: Path) -> None:
    """``python repro.py`` run where the workspace has no repro.py (the user's own script, kept elsewhere) would
    fail with every candidate alike: the next source is used, and says why the failing run's was not."""
    assert unusable_terminal_command(tmp_path, REPRO) == ("the failing run's `python repro.py` was not used: "
                                                          "repro.py is not in the workspace")
    assert resolve_check_command(tmp_path, terminal=REPRO) is None
    assert unusable_terminal_command(tmp_path, "$ .venv/bin/python3 -X dev repro.py --fast\nboom") == (
        "the failing run's `.venv/bin/python3 -X dev repro.py --fast` was not used: repro.py is not in the workspace")
    write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    found = resolve_check_command(tmp_path, terminal=REPRO)
    assert found is not None and (found.command, found.source) == ("python -m pytest -q -x", "detected")
    assert found.detail == ("pytest (tests/test_*.py); the failing run's `python repro.py` was not used: repro.py "
                            "is not in the workspace") and "repro.py is not in the workspace" in found.describe()
    write(tmp_path, "repro.py", "import a\n")  # in the workspace: it is the check
    for line in ("python repro.py", "python3 -X dev repro.py --fast"):
        run = resolve_check_command(tmp_path, terminal=f"$ {line}\nTraceback ...")
        assert run is not None and (run.command, run.source) == (line, "terminal")
        assert unusable_terminal_command(tmp_path, f"$ {line}\nTraceback ...") is None
    module = resolve_check_command(tmp_path, terminal="$ python -m pytest -q tests/test_b.py\nF")  # not a script
    assert module is not None and module.source == "terminal"


def test_the_spectrum_command_runs_the_failing_tests_whole_files_to_completion() -> None:
    one = "python -m pytest -q --tb=short -p no:cacheprovider tests/test_func.py::LRUDecoratorTest::test_decorator_clear"
    assert spectrum_command(one, ["tests/test_func.py"]) == (
        "python -m pytest -q --tb=short -p no:cacheprovider tests/test_func.py")
    assert spectrum_command("pytest -x --maxfail 2 -k 'clear and not info' --lf tests/a.py::t tests/b.py",
                            ["tests/a.py", "tests/a.py"]) == "pytest tests/a.py"
    assert spectrum_command(".venv/bin/pytest -q --maxfail=1 -kclear tests/a.py", ["tests/a.py"]) == (
        ".venv/bin/pytest -q tests/a.py")
    assert spectrum_command("pytest -x tests", ["tests/test_x.py"]) is None  # a folder: not widened to a run that long
    # already those files, to completion: the check's own trace is the spectrum
    assert spectrum_command("python -m pytest -q -p no:cacheprovider tests/test_x.py", ["tests/test_x.py"]) is None
    assert spectrum_command("npm test", ["test/a.js"]) is None  # not pytest
    assert spectrum_command("python -m pytest tests/a.py && echo ok", ["tests/a.py"]) is None  # a shell line
    assert spectrum_command("python -m pytest 'unclosed", ["tests/a.py"]) is None
    assert spectrum_command("python -m pytest -x tests/a.py", []) is None  # no failing test file known


def test_the_suite_command_is_the_check_s_runner_and_options_with_no_test_named() -> None:
    one = "python -m pytest -q -x --tb=short -p no:cacheprovider --noconftest tests/test_a.py::test_b tests/test_c.py"
    assert suite_command(one) == "python -m pytest -q --tb=short -p no:cacheprovider --noconftest"
    assert suite_command(".venv/bin/pytest -k slow tests/test_a.py") == ".venv/bin/pytest"
    assert suite_command("python -m pytest -q") is None  # already the whole suite
    assert suite_command("pytest tests/unit") is None  # a folder the user chose
    assert suite_command("pytest tests/unit tests/test_a.py") is None
    assert suite_command("npm test") is None and suite_command("node -e 'x'") is None  # not pytest
    assert suite_command("python -m pytest tests/a.py && echo ok") is None  # a shell line


def test_one_consent_covers_the_runs_derived_from_the_allowed_check_and_nothing_that_adds_to_it() -> None:
    from contenox.verify import consent_scope, covered_by
    from contenox.verify.usable import without_files

    check = "python -m pytest -q -x -p no:cacheprovider tests/test_a.py::test_b"
    derived = [suite_command(check), spectrum_command(check, ["tests/test_a.py", "tests/sub/test_c.py"]),
               without_files("python -m pytest -q -x -p no:cacheprovider tests/test_a.py tests/test_d.py",
                             ["tests/test_d.py"]),
               "python -m pytest -q -p no:cacheprovider --ignore=tests/test_e.py --deselect tests/test_a.py::t",
               "python -m pytest -q -p no:cacheprovider -p no:randomly tests"]
    for line in derived:
        assert line is not None and covered_by(line, check), line
    assert covered_by(check, check)
    for line in ["pytest -q tests/test_a.py",  # another runner's words (the PATH's pytest, not the module)
                 "python3 -m pytest -q -p no:cacheprovider",
                 "python -m pytest -q -p no:cacheprovider -p xdist",  # loads a plugin the check did not
                 "python -m pytest -q -p no:cacheprovider --rootdir /",  # an option the check did not give
                 "python -m pytest -q -p no:cacheprovider /etc/test_x.py",  # outside the project
                 "python -m pytest -q -p no:cacheprovider ../other/test_x.py",
                 "python -m pytest -q tests/test_a.py && rm -rf build",  # a shell line
                 "npm test"]:
        assert not covered_by(line, check), line
    assert not covered_by("npm test", "npm test") and not covered_by("node -e 'x'", "node -e 'x'")  # pytest only
    assert consent_scope(check).startswith(
        "the project's other tests run the same way (`python -m pytest -q -p no:cacheprovider` with other test files")
    assert consent_scope("npm test") == "" and consent_scope("make check") == ""


def test_a_test_file_runs_alone_with_the_check_s_runner_and_options() -> None:
    assert alone_command("python -m pytest -q -x -m slow tests/a.py tests/b.py::t", "tests/t_c.py") == (
        "python -m pytest -q tests/t_c.py")  # its own files, ids, stops and selections left out
    assert alone_command("pytest --tb=short -p no:cacheprovider --noconftest tests", "t_c.py") == (
        "pytest --tb=short -p no:cacheprovider --noconftest t_c.py")  # an option's value kept, the folder not
    assert alone_command("npm test", "t_c.py") is None
    assert alone_command("pytest a.py && pytest b.py", "t_c.py") is None


def test_a_node_one_off_check_is_held_to_the_projects_npm_test(tmp_path: Path) -> None:
    from contenox.verify import project_test_command

    (tmp_path / "package.json").write_text('{"scripts": {"test": "tap"}}')
    assert project_test_command("node -e \"require('./')\"", tmp_path) == "npm test"
    assert project_test_command("node --test test/a.test.js", tmp_path) == "npm test"
    assert project_test_command("/usr/bin/node repro.js", tmp_path) == "npm test"
    assert project_test_command("npm test", tmp_path) is None  # the project's tests already
    assert project_test_command("node a.js && node b.js", tmp_path) is None
    assert project_test_command("python -m pytest -q", tmp_path) is None
    assert project_test_command("node -e 'unclosed", tmp_path) is None
    (tmp_path / "package.json").write_text('{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}')
    assert project_test_command("node -e 1", tmp_path) is None
