"""Whether a candidate's edited file still parses, before the check runs: a candidate that does not parse
cannot pass, and the user's check command may take minutes; what the parser says is what a repair needs.

Python is parsed in process (``ast``); JavaScript by ``node --check`` on a temporary copy (it parses and runs
nothing), where ``node`` is installed: without it, the check decides."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

__all__ = ["code_unchanged", "unparsable"]

_PYTHON = (".py", ".pyi")
_JAVASCRIPT = (".js", ".cjs", ".mjs")
_NODE_WHERE = re.compile(r"^.*:(\d+)$")


def _parse(text: str, path: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():  # ``"is" with a literal`` and the like: the check's to say, not ours
            warnings.simplefilter("ignore")
            ast.parse(text, filename=path)
    except SyntaxError as exc:
        return exc
    except ValueError as exc:  # a null byte
        return SyntaxError(str(exc))
    return None


def _parse_js(text: str, path: str) -> SyntaxError | None:
    """``node --check``'s verdict on ``text`` as a file named like ``path`` (its suffix tells CommonJS from a
    module); None: it parses, or ``node`` is missing or did not answer (the check decides)."""
    node = shutil.which("node")
    if node is None:
        return None
    with tempfile.TemporaryDirectory(prefix="contenox-parse-") as folder:
        copy = Path(folder) / Path(path).name
        copy.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([node, "--check", str(copy)], capture_output=True, text=True, timeout=20,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode == 0:
        return None
    lines = done.stderr.splitlines()
    message = next((line.strip() for line in lines if re.match(r"\s*\w*Error: ", line)), "")
    if not message.startswith("SyntaxError"):
        return None  # node failed for another reason: not the parser's word
    where = _NODE_WHERE.match(lines[0]) if lines else None
    error = SyntaxError(message.removeprefix("SyntaxError: "))
    error.lineno = int(where.group(1)) if where else None
    error.text = lines[1] if where and len(lines) > 1 else None
    return error


def unparsable(path: str, before: str | None, after: str | None) -> str | None:
    """Why ``after``, a file's text once a candidate's edit is laid on it, does not parse (the parser's
    message, its line and that line's text), or None: it parses, it is neither Python nor JavaScript, it was
    deleted, or ``before`` did not parse either (a file this parser cannot read, such as another Python's syntax
    or a JavaScript dialect: the check decides)."""
    if after is None:
        return None
    parse = _parse if path.endswith(_PYTHON) else _parse_js if path.endswith(_JAVASCRIPT) else None
    if parse is None:
        return None
    error = parse(after, path)
    if error is None or (before is not None and parse(before, path) is not None):
        return None
    where = f", line {error.lineno}" if error.lineno else ""
    text = (error.text or "").rstrip("\n")
    return f"{path}{where}: {error.msg}" + (f"\n    {text.strip()}" if text.strip() else "")


def _code(text: str, path: str) -> str | None:
    """The module's code as ``ast`` sees it, docstrings left out (comments and layout never reach it); None
    when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body and \
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def code_unchanged(path: str, before: str | None, after: str | None) -> bool:
    """Whether an edit of a Python file from ``before`` to ``after`` changes only comments, docstrings and
    layout (a check that passed before any change passes such an edit too: it shows nothing). False for any
    other file, a new or deleted one, or one that does not parse."""
    if before is None or after is None or not path.endswith(_PYTHON):
        return False
    old = _code(before, path)
    return old is not None and old == _code(after, path)
