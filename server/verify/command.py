"""Which command checks a change, and where it came from.

In this order: the command line of the failing run the turn carries (the terminal output's ``$ …`` line,
as a user pastes it and the eval's tasks give it; not a ``python script.py`` whose script the workspace lacks:
it would fail with every candidate alike), a test command the request itself names in backticks ("...
then run `python -m pytest -q tests/test_x.py`": only a test runner's command line), the workspace's own
``.contenox.toml`` (``[verify] command``), the node's ``verify.command``, then detection: a pytest configuration runs
``python -m pytest -q -x`` on the test files the turn names, a ``package.json`` with a ``test`` script runs
``npm test``. No command: no verification, and explain-context says so.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["CheckCommand", "command_from_request", "command_from_terminal", "consent_scope", "covered_by", "pasted_run",
           "project_test_command", "resolve_check_command", "source_words", "spectrum_command", "suite_command",
           "test_file_command", "unusable_terminal_command"]

log = logging.getLogger(__name__)

Source = Literal["terminal", "request", "workspace", "config", "detected", "written"]
"""``written``: a test the model wrote for the change, run because the project's own check could not run."""

_PROMPT = re.compile(r"^\s*(?:\([\w.-]+\)\s*)?(?:[\w@.-]+(?::[~\w/.-]*)?)?\s*[$]\s+(\S.*)$")
_QUOTED = re.compile(r"`([^`\n]+)`")
_TEST_RUNNER = re.compile(r"^(?:(?:python3?|uv run|poetry run) (?:-m )?pytest|pytest|tox|nox|npm (?:run )?test|"
                          r"yarn test|pnpm test|cargo test|go test|make (?:test|check)|ctest)(?:\s|$)")
"""A command line a request may name as its check: a test runner's, nothing else (a request that names
`rm -rf build` in backticks names no check command)."""
_PYTHON = re.compile(r"python[\d.]*|py")
"""The interpreter's name in a command line that runs a script (``python3.12 repro.py``, ``.venv/bin/python ...``)."""
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[\w-]+\.py|[\w-]+_test\.py|conftest\.py)$")


class CheckCommand(msgspec.Struct, frozen=True, kw_only=True):
    command: str
    """A shell command line, run from the workspace root (of the scratch copy)."""
    source: Source
    detail: str = ""
    """Where exactly: the file that configured it, what detection found."""

    def describe(self) -> str:
        return f"`{self.command}` (from {source_words(self.source)}{': ' + self.detail if self.detail else ''})"


_SOURCE_WORDS = {"terminal": "the failing run in the terminal output", "request": "the request",
                 "workspace": ".contenox.toml [verify] command", "config": "verify.command in config.toml",
                 "detected": "detected", "written": "a test the model wrote for the change"}


def source_words(source: str) -> str:
    """Where a check command came from, in words (an unknown source as it is)."""
    return _SOURCE_WORDS.get(source, source)


def command_from_terminal(terminal: str) -> str | None:
    """The last ``$ command`` line of ``terminal`` (a shell prompt, optionally ``user@host:dir$`` or a venv's
    ``(name)`` before it); None when there is none."""
    found = None
    for line in terminal.splitlines():
        match = _PROMPT.match(line)
        if match:
            found = match.group(1).strip()
    return found or None


_FAILED_OUTPUT = re.compile(r"\b(?:FAILED|FAIL|FAILURES|ERROR|Error|Traceback|failed|failures?|not ok|ERR!)\b|"
                            r"\w+(?:Error|Exception)\b|✖|✗")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w-]*\s*$")


_RUN_END = re.compile(
    r"^(?:=*\s*\d+ (?:failed|passed|errors?|skipped|xfailed)\b.*"  # pytest's summary
    r"|(?:#|\u2139) (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b.*"  # node's test runner
    r"|Ran all test suites\b.*|Tests?:\s.*|Time:\s.*"  # jest
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?"  # a traceback's last line
    r"|npm (?:ERR!|error)\b.*)\s*$")
"""A line a test runner or an interpreter ends a run with: what a user types after it is no longer the run's."""


def pasted_run(prompt: str) -> tuple[str, str] | None:
    """(the question, the failing run) of a question with a command's failing run pasted into it (a ``$ command``
    line, then its output showing a failure, fenced or not), before or after the run: what the CLI and Zed send
    where an editor's terminal segment would carry it. A run ends at its closing fence, else at the last line a
    runner ends a run with (pytest's or node's summary, jest's, a traceback's error): the text after it is the
    question's too. None when the prompt holds no such run, or no question beside it."""
    lines = prompt.split("\n")
    index = next((i for i, line in enumerate(lines) if _PROMPT.match(line)), None)
    if index is None:
        return None
    before = lines[:index]
    fenced = bool(before) and bool(_FENCE.match(before[-1]))
    if fenced:
        before = before[:-1]
        close = next((i for i in range(index + 1, len(lines)) if _FENCE.match(lines[i])), len(lines))
        run, after = lines[index:close], lines[close + 1:]
    else:
        ends = [i for i in range(index + 1, len(lines)) if _RUN_END.match(lines[i])]
        tail = lines[ends[-1] + 1:] if ends else []
        if any(_PROMPT.match(line) for line in tail):  # another command's run follows: the rest stays the run's
            tail = []
        run, after = lines[index:len(lines) - len(tail)], tail
    while run and not run[-1].strip():
        run.pop()
    question = "\n\n".join(part for part in ("\n".join(before).strip(), "\n".join(after).strip()) if part)
    output = "\n".join(run[1:])
    if not (question and output.strip() and _FAILED_OUTPUT.search(output)):
        return None
    return question, "\n".join(run).strip("\n")


def command_from_request(request: str) -> str | None:
    """The last test runner's command line the request names in backticks; None when it names none."""
    found = None
    for match in _QUOTED.finditer(request):
        line = match.group(1).strip()
        if _TEST_RUNNER.match(line) and not re.search(r"[;&|<>$]", line):
            found = line
    return found


def _workspace_command(root: Path) -> str | None:
    path = root / ".contenox.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        log.warning("%s: %s; its [verify] command is ignored", path, exc)
        return None
    section = data.get("verify")
    command = section.get("command") if isinstance(section, dict) else None
    return command.strip() if isinstance(command, str) and command.strip() else None


def _has_pytest(root: Path) -> str | None:
    for name in ("pytest.ini", "conftest.py"):
        if (root / name).is_file():
            return name
    for name, marker in (("pyproject.toml", "[tool.pytest"), ("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]")):
        try:
            if marker in (root / name).read_text(encoding="utf-8", errors="replace"):
                return name
        except OSError:
            continue
    if (root / "tests").is_dir() and any((root / "tests").rglob("test_*.py")):
        return "tests/test_*.py"
    for package in sorted(p for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()):
        if (package / "tests").is_dir() and any((package / "tests").glob("test_*.py")):  # tests inside the package
            return f"{package.name}/tests/test_*.py"
    return None


def _npm_test(root: Path) -> bool:
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
    except (OSError, ValueError, AttributeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and "no test specified" not in test


def resolve_check_command(root: Path, *, terminal: str = "", configured: str = "",
                          paths: Iterable[str] = (), request: str = "") -> CheckCommand | None:
    """The check command for a turn in ``root``; ``paths``: the files the turn's retrieval, diff and edits
    name (test files among them narrow a detected pytest run); ``request``: the user's words."""
    skipped = ""
    if terminal and (line := command_from_terminal(terminal)):
        if (script := _missing_script(root, line)) is None:
            return CheckCommand(command=line, source="terminal")
        skipped = _not_used(line, script)
    found = _resolved(root, configured=configured, paths=paths, request=request)
    if found is not None and skipped:
        return msgspec.structs.replace(found, detail="; ".join(filter(None, [found.detail, skipped])))
    return found


def unusable_terminal_command(root: Path, terminal: str) -> str | None:
    """Why the failing run's command line is not the check (in words), None when it is or there is none."""
    line = command_from_terminal(terminal) if terminal else None
    script = _missing_script(root, line) if line else None
    return _not_used(line, script) if line and script else None


def _not_used(line: str, script: str) -> str:
    return f"the failing run's `{line}` was not used: {script} is not in the workspace"


def _missing_script(root: Path, line: str) -> str | None:
    """The script ``line`` runs (``python repro.py``) when the workspace has no such file: a script the user
    keeps outside the repository cannot run in its scratch copy, and would fail with every candidate alike (the
    eval's ct-bug-typed-keyword-args: all 12 candidates "failed" in 0.5 s)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if not words or not _PYTHON.fullmatch(Path(words[0]).name):
        return None
    for word in words[1:]:
        if word in ("-m", "-c"):  # a module or a program text: no script file
            return None
        if not word.startswith("-") and word.endswith(".py"):
            return None if (root / word).is_file() else word
    return None


def _tests_named_after(root: Path, paths: Iterable[str]) -> list[str]:
    """The test files named after the turn's source files, as projects lay them out: ``src/pkg/keys.py`` ->
    ``tests/test_keys.py``, ``h11/_util.py`` -> ``h11/tests/test_util.py`` (a test file of the module the fix
    changes is the check's likeliest failing test, whether or not retrieval brought it into the prompt)."""
    found: list[str] = []
    for path in paths:
        module = Path(path)
        stem = module.stem.lstrip("_")
        if module.suffix != ".py" or _TEST_FILE.search(path) or not stem or module.stem.startswith("__"):
            continue
        for folder in (Path("tests"), Path("test"), module.parent, module.parent / "tests", module.parent / "test"):
            for name in (f"test_{stem}.py", f"{stem}_test.py"):
                if (root / folder / name).is_file():
                    found.append((folder / name).as_posix())
    return list(dict.fromkeys(found))


def _resolved(root: Path, *, configured: str, paths: Iterable[str], request: str) -> CheckCommand | None:
    """The check command after the failing run's: the request's, the workspace's, the config's, detected."""
    if request and (line := command_from_request(request)):
        return CheckCommand(command=line, source="request")
    if command := _workspace_command(root):
        return CheckCommand(command=command, source="workspace", detail=str(root / ".contenox.toml"))
    if configured.strip():
        return CheckCommand(command=configured.strip(), source="config")
    if marker := _has_pytest(root):
        paths = list(paths)
        named = {p for p in paths if _TEST_FILE.search(p) and not p.endswith("conftest.py") and (root / p).is_file()}
        after = set(_tests_named_after(root, paths)) - named
        target = " ".join(sorted(named | after))
        said = ", ".join(filter(None, ["the turn's test files" if named else "",
                                       "the tests named after its files" if after else ""]))
        return CheckCommand(command=f"python -m pytest -q -x{' ' + target if target else ''}", source="detected",
                            detail=f"pytest ({marker})" + (f", {said}" if said else ""))
    if _npm_test(root):
        return CheckCommand(command="npm test", source="detected", detail="package.json test script")
    return None


_STOPS_EARLY = {"-x", "--exitfirst", "--lf", "--last-failed", "--sw", "--stepwise", "--ff", "--failed-first"}
"""pytest options that run fewer tests than the files hold, or stop at the first failure (``--maxfail`` and
``-k`` too, with their values)."""


def project_test_command(command: str, root: Path) -> str | None:
    """``npm test``, when ``command`` is one Node run (``node -e "..."``, ``node script.js``, ``node --test
    a.test.js``) in a project whose ``package.json`` has a test script: what a change that passes that check is
    held to as well (a one-off script checks one case; the 1.5B's change that passed semver's caret check took
    ``parseRange``'s ``return`` out, and the second call passed on the cache the first one filled). None: another
    kind of command, or no test script."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or Path(words[0]).name not in ("node", "nodejs") or any(w in ("&&", "||", ";", "|") for w in words):
        return None
    return "npm test" if _npm_test(root) else None


def spectrum_command(command: str, test_files: Iterable[str]) -> str | None:
    """The pytest command that runs the failing tests' whole files, to completion: ``command``'s runner and
    options, without what stops early or selects (``-x``, ``--maxfail``, ``-k``, ``--lf``), its test ids and
    files replaced by ``test_files``. A trace of it sees the tests that pass beside the ones that fail, which is
    what tells a suspicious line from one every test runs. None: not a pytest command, no test files, a command
    that names no test file or id (a folder, the whole suite: a run that long is not added), or one that already
    runs exactly those files to completion."""
    files = list(dict.fromkeys(test_files))
    parts = _pytest_parts(command)
    if parts is None or not files:
        return None
    runner, options, named = parts
    targets = [word for word in named if "::" in word or word.endswith(".py")]
    spectrum = [*runner, *options, *(word for word in named if word not in targets), *files]
    if not targets or (targets == files and len(spectrum) == len(shlex.split(command))):
        return None  # no test file named (a folder, the whole suite: not widened), or already those files
    return shlex.join(spectrum)


def _pytest_parts(command: str) -> tuple[list[str], list[str], list[str]] | None:
    """A pytest command's words in three: up to the runner (``python -m pytest``), its options with their values
    less what stops early or selects (``-x``, ``--maxfail``, ``-k``, ``-m``, ``--lf``...), and the words it names
    (test files, ids, folders). None: not one pytest command (another runner, commands chained, bad quoting)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    runner = next((i for i, w in enumerate(words) if w == "pytest" or w.endswith("/pytest")), None)
    if runner is None or any(w in ("&&", "||", ";", "|") for w in words):
        return None
    options: list[str] = []
    named: list[str] = []
    skip = value = False
    for word in words[runner + 1:]:
        if skip:
            skip = False
        elif value:  # an option's own value (``-p no:cacheprovider``)
            options.append(word)
            value = False
        elif word in ("--maxfail", "-k", "-m"):
            skip = True
        elif word in _STOPS_EARLY or word.startswith(("--maxfail=", "-k", "-m")):
            continue
        elif not word.startswith("-"):
            named.append(word)
        else:
            options.append(word)
            value = word in _VALUED
    return words[:runner + 1], options, named


def suite_command(command: str) -> str | None:
    """The pytest command that runs the project's whole suite, to completion: ``command``'s runner and options
    (less what stops early or selects), without the test files, ids or folders it names, so pytest collects what
    the project's configuration says (``testpaths``, or from the root). A change that passes the failing tests and
    their files can still break a test elsewhere (the 1.5B's change for itsdangerous' failing base64 round trip made
    the encoder keep its padding and drop the URL-safe alphabet: every test of the encoding module passed, a pinned
    signature in the serializer's tests did not).
    None: not one pytest command, one that names nothing (already the whole suite), or one that names a folder (the
    user chose that part of the suite: the rest may be a run that long)."""
    parts = _pytest_parts(command)
    if parts is None or not parts[2] or not all("::" in word or word.endswith(".py") for word in parts[2]):
        return None
    return shlex.join([*parts[0], *parts[1]])


def covered_by(command: str, allowed: str) -> bool:
    """``command`` is one the node derives from ``allowed``, a pytest command the user allowed: the same runner
    (the same words up to ``pytest``), options only of ``allowed``'s or ones that leave tests out (``--ignore``,
    ``--deselect``, ``-p no:plugin``), and test files, ids or folders of the project (relative, not above it): the
    failing tests' whole files (:func:`spectrum_command`), the whole suite (:func:`suite_command`), the check less
    what the environment cannot run. One consent covers them (:func:`consent_scope` says so when it is asked); a
    command that adds any other option, another runner or chained commands are asked on their own."""
    mine, theirs = _pytest_parts(command), _pytest_parts(allowed)
    if mine is None or theirs is None or mine[0] != theirs[0]:
        return False
    kept = set(_option_groups(theirs[1]))
    leaves_out = all(group in kept or group[0].startswith(("--ignore", "--deselect"))
                     or (group[0] == "-p" and group[1].startswith("no:")) for group in _option_groups(mine[1]))
    return leaves_out and all(not word.startswith("/") and ".." not in Path(word.split("::")[0]).parts
                              for word in mine[2])


def consent_scope(command: str) -> str:
    """What a consent to run ``command`` also covers (:func:`covered_by`), in words for the question asked: the
    project's other tests run with its runner and options (``python -m pytest -q``). '' for a command that covers
    nothing more (not a pytest command)."""
    parts = _pytest_parts(command)
    if parts is None:
        return ""
    return (f"the project's other tests run the same way (`{shlex.join([*parts[0], *parts[1]])}` with other test "
            "files, or the whole suite): the failing tests' whole files and the suite a passing change is held to")


def _option_groups(options: list[str]) -> list[tuple[str, str]]:
    """pytest options (:func:`_pytest_parts`' second part) as (option, value) pairs; ``''`` for no value."""
    groups: list[tuple[str, str]] = []
    words = iter(options)
    for word in words:
        groups.append((word, next(words, "") if word in _VALUED else ""))
    return groups


def test_file_command(command: str, path: str) -> str | None:
    """The pytest command that runs the test file ``path`` alone, to completion: ``command``'s runner and its
    options (without what stops early or selects, and without its own test files, ids or folders). None: not one
    pytest command (another runner, or commands chained)."""
    parts = _pytest_parts(command)
    return None if parts is None else shlex.join([*parts[0], *parts[1], path])


_VALUED = {"-p", "-c", "-o", "-W", "-r", "--tb", "--rootdir", "--confcutdir", "--basetemp", "--durations",
           "--import-mode", "--ignore", "--deselect", "--override-ini", "--pythonwarnings", "--capture",
           "--log-level", "--color", "--junitxml", "--cov"}
"""pytest options whose value is the next word."""
