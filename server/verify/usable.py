"""Whether a check can judge a change, read from its run on the workspace before any change.

A check that cannot run (its program is not installed: ``npm test`` whose ``tap`` is missing), or that pytest
could not start or found no test in (an internal error, a usage error, no tests collected), ends the same with
every candidate: run against it, each candidate "fails", repair rounds chase a failure no change can mend, and
the one offered is whichever ranked first. On the eval's 31 tasks, 12 of the 14 commands the node found itself
were such checks. Such a check is not used, and the turn says why.

A test file that cannot be imported because a package the project's tests need is not installed (``import sh``,
``from freezegun import freeze_time``) is a fault of the environment, not of the code a change could mend. A
detected pytest command leaves such files out (named), and is used when the files left still hold tests. Only a
detected command is narrowed: a command the user ran or configured is theirs, and an import error in their run
may be the bug itself. The same holds for a test file whose tests ask for a fixture that neither pytest nor the
workspace defines: a plugin's (humanize's ``tests/test_benchmarks.py`` takes pytest-benchmark's ``benchmark``;
not installed, every test there errors at setup, and the 1.5B's verification drew 56 candidates against it).
A plugin that stops pytest before it collects anything (an ``INTERNALERROR`` raised in the plugin's own code:
pytest-asyncio's deprecation warning, made an error by itsdangerous' ``filterwarnings = error``) is left out
the same way, with ``-p no:<name>`` (:func:`crashed_plugin`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
from pathlib import Path

__all__ = ["crashed_plugin", "missing_dependencies", "missing_fixtures", "narrowed_command", "unknown_fixtures", "unusable",
           "without_files", "without_plugin"]

_PYTEST_CANNOT_JUDGE = {3: "pytest stopped on an internal error", 4: "pytest could not run it (a usage error)",
                        5: "pytest collected no test"}
"""pytest's exit codes for a run that judged nothing (1 is failing tests, 2 an interrupted run)."""
_COLLECTING = re.compile(r"^_+ ERROR collecting (\S+) _+$", re.MULTILINE)
_NO_MODULE = re.compile(r"^E\s+ModuleNotFoundError: No module named '([\w.]+)'", re.MULTILINE)
_SECTION = re.compile(r"^(?:_{3,} .* _{3,}|={3,} .* ={3,})$", re.MULTILINE)


def _runs_pytest(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(w == "pytest" or w.endswith("/pytest") for w in words)


def unusable(command: str, outcome: str, exit_code: int | None, output: str) -> str | None:
    """Why a check that ended as ``outcome`` (``exit_code``, ``output``) before any change cannot tell one
    candidate from another, in words; None when it can (it passed, or it failed as tests fail)."""
    if outcome == "not_found":
        missing = re.search(r"([^\s:]+): (?:command )?not found|command not found: (\S+)", output)
        what = f" (`{next(filter(None, missing.groups()))}` is not installed)" if missing else ""
        return f"`{command}` could not run before any change: command not found{what}"
    if outcome == "error":
        return f"`{command}` could not run before any change: {output.strip().splitlines()[-1] if output.strip() else 'no output'}"
    if outcome == "failed" and exit_code in _PYTEST_CANNOT_JUDGE and _runs_pytest(command):
        return f"`{command}` judged nothing before any change: {_PYTEST_CANNOT_JUDGE[exit_code]} (exit {exit_code})"
    return None


def missing_dependencies(output: str, root: Path) -> dict[str, str]:
    """The test files pytest could not collect because a module outside the workspace is not installed, each
    with that module's name (``{"tests/test_cli.py": "sh"}``), in the order reported. A module the workspace
    holds itself (``src/pkg``, ``pkg/``, ``pkg.py``) is the code's, not the environment's: such a file is not
    listed."""
    found: dict[str, str] = {}
    for header in _COLLECTING.finditer(output):
        rest = output[header.end():]
        end = _SECTION.search(rest)
        section = rest[:end.start()] if end else rest
        missing = _NO_MODULE.search(section)
        if missing is None:
            continue
        top = missing.group(1).split(".")[0]
        if any((base / top).is_dir() or (base / f"{top}.py").is_file() for base in (root, root / "src")):
            continue
        found[header.group(1)] = missing.group(1)
    return found


_SETUP_ERROR = re.compile(r"^_+ ERROR at setup of \S+ _+$", re.MULTILINE)
_FIXTURE_FILE = re.compile(r"^file (.+), line \d+$", re.MULTILINE)
_NO_FIXTURE = re.compile(r"^E\s+fixture '(\w+)' not found", re.MULTILINE)


def missing_fixtures(output: str, root: Path) -> dict[str, str]:
    """The test files whose tests errored at setup for a fixture that no installed plugin and no ``conftest.py``
    pytest reads for them (the one beside the file and those of the folders above it, up to ``root``) defines,
    each with that fixture's name (``{"tests/test_benchmarks.py": "benchmark"}``), in the order reported."""
    found: dict[str, str] = {}
    for header in _SETUP_ERROR.finditer(output):
        rest = output[header.end():]
        end = _SECTION.search(rest)
        section = rest[:end.start()] if end else rest
        where, missing = _FIXTURE_FILE.search(section), _NO_FIXTURE.search(section)
        if where is None or missing is None:
            continue
        path = Path(where.group(1))
        try:
            rel = path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
        except ValueError:  # outside the workspace: not a test file of the check's
            continue
        name = missing.group(1)
        defines = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", re.MULTILINE)
        if any(c.is_file() and defines.search(c.read_text(errors="replace")) for c in _conftests(rel, root)):
            continue  # the workspace's own fixture: its fault is the code's
        found.setdefault(rel, name)
    return found


def without_files(command: str, files: list[str]) -> str | None:
    """``command`` (a pytest command line) without ``files``: the ones it names are taken out, and each one it
    does not name is left out with ``--ignore`` (a command that names a folder or no file at all). None: a
    command that is not a plain pytest run (a pipeline, an unreadable line), or one whose named test files
    would all be gone."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not _runs_pytest(command) or any(w in ("&&", "||", ";", "|") for w in words):
        return None
    gone = set(files)
    named = {w.split("::")[0] for w in words if not w.startswith("-") and (w.endswith(".py") or "::" in w)}
    if named and named <= gone:
        return None
    kept = [w for w in words if w.split("::")[0] not in gone]
    return shlex.join([*kept, *(f"--ignore={f}" for f in files if f not in named)])


_INTERNAL_FRAME = re.compile(r'^INTERNALERROR>\s+File "[^"]*[/\\]site-packages[/\\]([A-Za-z_][\w]*)[/\\.]', re.MULTILINE)
_PYTEST_OWN = frozenset({"_pytest", "pytest", "pluggy"})


def crashed_plugin(output: str) -> str | None:
    """The name to block (``-p no:<name>``) of the installed pytest plugin whose own code raised the internal
    error that stopped a run (its innermost frame outside pytest and pluggy: ``pytest_asyncio`` -> ``asyncio``,
    which blocks both spellings of its name); None when no plugin's frame is there."""
    packages = [m.group(1) for m in _INTERNAL_FRAME.finditer(output) if m.group(1) not in _PYTEST_OWN]
    if not packages:
        return None
    return packages[-1].removeprefix("pytest_") or packages[-1]


def without_plugin(command: str, name: str) -> str | None:
    """``command`` (a plain pytest command line) with the plugin ``name`` blocked; None for another command, or
    one that blocks it already."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not _runs_pytest(command) or any(w in ("&&", "||", ";", "|") for w in words) or f"no:{name}" in words:
        return None
    return shlex.join([*words, "-p", f"no:{name}"])


def _conftests(rel: str, root: Path) -> list[Path]:
    """The ``conftest.py`` paths pytest reads for the test file ``rel``: beside it and in each folder above it, up
    to ``root``."""
    folders = [root / Path(rel).parent, *(root / Path(rel).parent).parents]
    return [folder / "conftest.py" for folder in folders if folder == root or root in folder.parents]


_BUILTIN_FIXTURES = frozenset(
    "request tmp_path tmp_path_factory tmpdir tmpdir_factory monkeypatch capsys capsysbinary capfd capfdbinary "
    "caplog recwarn pytestconfig record_property record_xml_attribute record_testsuite_property cache "
    "doctest_namespace pytester testdir".split())
_PLUGIN_FIXTURES = {"mocker": "pytest_mock", "benchmark": "pytest_benchmark", "event_loop": "pytest_asyncio",
                    "httpserver": "pytest_httpserver", "freezer": "pytest_freezegun"}
"""Fixtures of common plugins, each defined when its plugin's module is installed."""


def _fixtures_defined(code: str) -> set[str]:
    """The names a test module defines as fixtures (a function under a ``fixture`` decorator) and its
    ``parametrize`` argument names."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            said = ast.unparse(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if said.endswith("fixture"):
                names.add(node.name)
            elif said.endswith("parametrize") and isinstance(decorator, ast.Call) and decorator.args:
                first = decorator.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.update(n.strip() for n in first.value.split(","))
                elif isinstance(first, (ast.List, ast.Tuple)):
                    names.update(e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return names


def unknown_fixtures(code: str, rel: str, root: Path) -> list[str]:
    """The fixtures the test functions of ``code`` (to be laid at ``rel`` under ``root``) take that nothing
    defines: not the module itself, not a ``conftest.py`` pytest reads for it (beside it and in the folders above
    it, up to ``root``), not pytest, not a common plugin that is installed. A test module that cannot be imported
    yet (for want of a change) is never collected, so pytest has not looked its fixtures up: this says, before any
    change, what would make it error with every change."""
    try:
        parsed = ast.parse(code)
    except SyntaxError:
        return []
    defined = _fixtures_defined(code) | _BUILTIN_FIXTURES
    for conftest in _conftests(rel, root):
        if conftest.is_file():
            defined |= _fixtures_defined(conftest.read_text(encoding="utf-8", errors="replace"))
    defined |= {name for name, module in _PLUGIN_FIXTURES.items() if importlib.util.find_spec(module) is not None}
    unknown: list[str] = []
    for node in ast.walk(parsed):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            unknown += [a.arg for a in node.args.args if a.arg not in ("self", "cls") and a.arg not in defined
                        and a.arg not in unknown]
    return unknown


def narrowed_command(line: str, output: str, exit_code: int | None, tree: Path) -> tuple[str, dict[str, str]] | None:
    """``line`` (a pytest command) without what kept its run (``output``, ``exit_code``) from collecting or running
    for want of the environment, and why each was left out: test files whose imports need a package that is not installed, tests
    that take a plugin's fixture the environment lacks, or (when nothing else is) the installed plugin that stopped
    pytest with an internal error of its own. None: nothing to leave out, or no command without it."""
    missing = {path: f"its `{module}` is not installed" for path, module in
               missing_dependencies(output, tree).items()}
    missing |= {path: f"its fixture `{fixture}` is defined by no installed plugin" for path, fixture in
                missing_fixtures(output, tree).items() if path not in missing}
    if missing:
        narrowed = without_files(line, list(missing))
        return None if narrowed is None else (narrowed, missing)
    plugin = crashed_plugin(output) if exit_code == 3 else None
    narrowed = without_plugin(line, plugin) if plugin is not None else None
    return None if narrowed is None else (narrowed, {f"the plugin `{plugin}`": "it stopped pytest with an internal "
                                                                               "error of its own"})
