"""Whether a check can judge a change: read from real runs before any change (a runner that is not installed,
pytest finding nothing, test files that cannot import a package the environment lacks)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from contenox.verify import run_check
from contenox.verify.usable import (
    crashed_plugin,
    missing_dependencies,
    missing_fixtures,
    narrowed_command,
    unknown_fixtures,
    unusable,
    without_files,
    without_plugin,
)

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -x -p no:cacheprovider"


def _project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "mypkg").mkdir()
    (root / "mypkg" / "__init__.py").write_text("def answer():\n    return 42\n")
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    (root / "tests" / "test_cli.py").write_text("import contenox_not_installed_pkg\n\ndef test_cli():\n    pass\n")
    (root / "tests" / "test_ok.py").write_text("from mypkg import answer\n\ndef test_ok():\n    assert answer() == 42\n")
    (root / "tests" / "test_own.py").write_text("import mypkg.gone\n\ndef test_own():\n    pass\n")
    return root


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_a_runner_that_is_not_installed_cannot_judge(tmp_path: Path) -> None:
    run = run_check("contenox-no-such-runner --all", tmp_path, env=dict(os.environ))
    why = unusable(run.command, run.outcome, run.exit_code, run.output)
    assert why is not None and "command not found" in why and "`contenox-no-such-runner` is not installed" in why


def test_npm_test_whose_program_is_not_installed_cannot_judge(tmp_path: Path) -> None:
    """As semver's package from npm: its ``test`` script runs ``tap``, and no ``node_modules`` holds it."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0", "scripts": {"test": "contenox-no-such-tap"}}')
    npm = run_check("npm test", tmp_path, env=dict(os.environ))
    assert npm.outcome == "not_found"
    assert "`contenox-no-such-tap` is not installed" in (unusable(npm.command, npm.outcome, npm.exit_code,
                                                                   npm.output) or "")


def test_pytest_that_collects_nothing_cannot_judge_and_failing_tests_can(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    nothing = run_check(f"{PYTEST} empty", tmp_path, env=dict(os.environ))
    assert nothing.exit_code == 5
    assert "collected no test" in (unusable(nothing.command, nothing.outcome, nothing.exit_code, nothing.output) or "")
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert 1 == 2\n")
    failing = run_check(f"{PYTEST} test_x.py", tmp_path, env=dict(os.environ))
    assert failing.outcome == "failed" and unusable(failing.command, failing.outcome, failing.exit_code,
                                                    failing.output) is None
    # exit 5 from a command that is not pytest is that command's own failure: it judges
    assert unusable("sh check.sh", "failed", 5, "") is None


def test_test_files_whose_packages_are_missing_are_named_and_left_out(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    run = run_check(f"{PYTEST} --continue-on-collection-errors tests", root, env=_env(root))
    assert run.outcome == "failed"
    # the missing package is the environment's; the missing module of the project's own package is the code's
    assert missing_dependencies(run.output, root) == {"tests/test_cli.py": "contenox_not_installed_pkg"}
    narrowed = without_files(f"{PYTEST} tests", ["tests/test_cli.py", "tests/test_own.py"])
    assert narrowed is not None and "--ignore=tests/test_cli.py" in narrowed
    assert run_check(narrowed, root, env=_env(root)).outcome == "passed"
    named = without_files(f"{PYTEST} tests/test_cli.py tests/test_ok.py::test_ok", ["tests/test_cli.py"])
    assert named == f"{PYTEST} tests/test_ok.py::test_ok"
    assert run_check(named, root, env=_env(root)).outcome == "passed"
    assert without_files(f"{PYTEST} tests/test_cli.py", ["tests/test_cli.py"]) is None  # nothing would be left
    assert without_files("npm test", ["tests/test_cli.py"]) is None
    assert without_files(f"{PYTEST} tests && echo done", ["tests/test_cli.py"]) is None
    # the one narrowing the check, the suite and the suite replay share: what the run names, and why
    assert narrowed_command(f"{PYTEST} tests", run.output, run.exit_code, root) == (
        f"{PYTEST} tests --ignore=tests/test_cli.py", {"tests/test_cli.py": "its `contenox_not_installed_pkg` is not installed"})


def test_test_files_whose_fixtures_no_installed_plugin_defines_are_named(tmp_path: Path) -> None:
    """A plugin's fixture (pytest-benchmark's ``benchmark``) the environment lacks is the environment's; a fixture
    the workspace's own conftest.py defines, and breaks, is the code's."""
    root = _project(tmp_path / "p")
    (root / "tests" / "test_cli.py").unlink()
    (root / "tests" / "test_own.py").unlink()
    (root / "tests" / "test_bench.py").write_text("def test_speed(benchmark):\n    benchmark(len, 'a')\n")
    run = run_check(f"{PYTEST} tests/test_bench.py tests/test_ok.py", root, env=_env(root))
    assert run.outcome == "failed"
    assert missing_fixtures(run.output, root) == {"tests/test_bench.py": "benchmark"}
    assert narrowed_command(f"{PYTEST} tests/test_bench.py tests/test_ok.py", run.output, run.exit_code, root) == (
        f"{PYTEST} tests/test_ok.py", {"tests/test_bench.py": "its fixture `benchmark` is defined by no installed plugin"})
    narrowed = without_files(f"{PYTEST} tests/test_bench.py tests/test_ok.py", list(missing_fixtures(run.output, root)))
    assert narrowed is not None and run_check(narrowed, root, env=_env(root)).outcome == "passed"
    # the workspace's conftest.py lost the fixture's decorator: the code's fault, not narrowed away
    (root / "tests" / "test_bench.py").write_text("def test_speed(bench):\n    pass\n")
    (root / "tests" / "conftest.py").write_text("import pytest\n\n\ndef bench():\n    return 1\n")
    run = run_check(f"{PYTEST} tests/test_bench.py", root, env=_env(root))
    assert run.outcome == "failed" and "fixture 'bench' not found" in run.output
    assert missing_fixtures(run.output, root) == {}


def test_a_plugin_that_stops_pytest_with_its_own_internal_error_is_named_and_blocked(tmp_path: Path) -> None:
    """itsdangerous under contenox's environment: pytest-asyncio's ``pytest_configure`` warns, the project's
    ``filterwarnings = error`` makes it an error, and pytest stops (exit 3) before collecting. The plugin (an
    installed package: its frame is under site-packages) is named by its ``-p no:`` name, and the same command
    with it blocked runs the tests."""
    root = _project(tmp_path / "project")
    (root / "tests" / "test_cli.py").unlink()
    (root / "tests" / "test_own.py").unlink()
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "pytest_boom").mkdir(parents=True)
    (site / "pytest_boom" / "__init__.py").write_text(
        "import warnings\n\n\ndef pytest_configure(config):\n"
        "    warnings.warn(DeprecationWarning('an option is unset'))\n")
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests']\nfilterwarnings = ['error']\n")
    env = {**_env(root), "PYTHONPATH": os.pathsep.join([str(root), str(site)]), "PYTEST_PLUGINS": "pytest_boom"}
    run = run_check(PYTEST, root, env=env, timeout_s=120)
    assert run.exit_code == 3 and "INTERNALERROR" in run.output, run.output
    assert unusable(PYTEST, run.outcome, run.exit_code, run.output) is not None
    assert crashed_plugin(run.output) == "boom"
    assert narrowed_command(PYTEST, run.output, run.exit_code, root) == (
        f"{PYTEST} -p no:boom", {"the plugin `boom`": "it stopped pytest with an internal error of its own"})
    assert narrowed_command(PYTEST, run.output, 1, root) is None  # a crash is read only from pytest's exit 3
    blocked = without_plugin(PYTEST, "boom")
    assert blocked is not None and blocked.endswith("-p no:boom") and without_plugin(blocked, "boom") is None
    again = run_check(blocked, root, env=env, timeout_s=120)
    assert again.passed, again.output
    assert crashed_plugin("INTERNALERROR>   File \"/usr/lib/site-packages/_pytest/main.py\", line 3\n") is None
    assert without_plugin("npm test", "boom") is None


def test_fixtures_a_written_test_takes_that_nothing_defines_are_named_before_it_can_be_collected(
        tmp_path: Path) -> None:
    """The 1.5B's test of a payload limit imported the new exception (not there yet: pytest stops at the import,
    exit 2) and took a ``signer`` fixture nobody defines: once a change adds the exception, it errors at setup
    with every change. Its own fixtures, parametrized names, the conftest.py files pytest reads for it, pytest's
    and an installed plugin's are defined; a conftest.py elsewhere is not read for it."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n\n@pytest.fixture\ndef app():\n    return 1\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "conftest.py").write_text("import pytest\n\n@pytest.fixture()\ndef signer():\n    return 2\n")
    code = ("import pytest\nfrom pkg import PayloadTooLarge\n\n\n@pytest.fixture\ndef big():\n    return b'x' * 10\n\n\n"
            "@pytest.mark.parametrize('size, ok', [(1, True)])\ndef test_limit(signer, big, app, tmp_path, size, ok):\n"
            "    pass\n\n\nclass TestMore:\n    def test_more(self, serializer, signer):\n        pass\n")
    assert unknown_fixtures(code, "tests/test_contenox_change.py", tmp_path) == ["signer", "serializer"]
    assert unknown_fixtures(code, "test_contenox_change.py", tmp_path) == ["signer", "app", "serializer"]
    assert unknown_fixtures("def test_x(:\n", "tests/t.py", tmp_path) == []
