"""Whether a candidate's edited file still parses, before the check runs: a candidate that does not parse
cannot pass, and the user's check command may take minutes; what the parser says is what a repair needs.

Python is parsed in process (``ast``); JavaScript by ``node --check`` on a temporary copy (it parses and runs
nothing), where ``node`` is installed: without it, the check decides.

A Python file that parses is also read for the names its code reads where nothing binds them (pyflakes' F821,
which Aider's lint step treats as fatal and sends back to the model): a candidate that adds one raises
``NameError`` where it runs, and the project's tests may never run it (the 1.5B's ``rename_key`` wrote
``dest.write(line_out)``, a local of ``set_key``, under tests that passed before and after)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import symtable
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

from contenox.answer.imports import IMPLICIT_NAMES

__all__ = ["code_unchanged", "undefined_names", "unparsable"]

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


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@lru_cache(maxsize=16)  # the file as it is, read again for every candidate that edits it
def _unbound(text: str, path: str) -> dict[str, tuple[int, str]] | None:
    """The names the module reads where nothing binds them: not a local, parameter or enclosing function's name
    where read, not bound at the module's top level (an assignment, ``def``, ``class``, import, or a ``global``
    assigned in a function), not a builtin; each with the first line that reads it and that line's text. Names
    read only in annotations are left out (they may never be evaluated), and a module with a ``*`` import binds
    what it cannot say: none. None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
            table = symtable.symtable(text, path, "exec")
    except (SyntaxError, ValueError):
        return None
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return {}
    tables: list[symtable.SymbolTable] = []
    pending = [table]
    while pending:
        current = pending.pop()
        tables.append(current)
        pending.extend(current.get_children())
    bound = {s.get_name() for t in tables for s in t.get_symbols()
             if (t is table and (s.is_assigned() or s.is_imported() or s.is_namespace()))
             or (s.is_declared_global() and s.is_assigned())}
    wanted: dict[str, set[int]] = {}  # name -> the first lines of the scopes that read it unbound (0: the module)
    for t in tables:
        for s in t.get_symbols():
            name = s.get_name()
            if s.is_referenced() and name not in bound and name not in IMPLICIT_NAMES and not name.startswith(".") \
                    and (t is table or s.is_global()):
                wanted.setdefault(name, set()).add(0 if t is table else t.get_lineno())
    if not wanted:
        return {}
    reads = _reads(tree, set(wanted))
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, _SCOPES)]
    lines = text.split("\n")
    out: dict[str, tuple[int, str]] = {}
    for name, scopes in wanted.items():
        # read at the module's level, or inside the definition of a scope that reads it unbound
        inside = [(a, b) for a, b in spans if a in scopes]
        at = [r for r in reads.get(name, []) if 0 in scopes or any(a <= r <= b for a, b in inside)]
        if at:
            out[name] = (at[0], lines[at[0] - 1].strip() if at[0] <= len(lines) else "")
    return out


def _reads(tree: ast.AST, names: set[str]) -> dict[str, list[int]]:
    """For each of ``names``, the lines where it is read, in order, outside annotations."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        notes = [node.returns] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
            [node.annotation] if isinstance(node, (ast.arg, ast.AnnAssign)) else []
        skip.update(id(n) for note in notes if note is not None for n in ast.walk(note))
    out: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and id(node) not in skip:
            out.setdefault(node.id, []).append(node.lineno)
    return {name: sorted(found) for name, found in out.items()}


def undefined_names(path: str, before: str | None, after: str | None) -> str | None:
    """The names a Python file's text ``after`` a candidate's edit reads where nothing binds them and that
    ``before`` did not read so (as pyflakes' "undefined name"), with their lines; None when it adds none, is not
    Python (a ``.pyi`` stub included), was deleted, or either text does not parse (:func:`unparsable` says so)."""
    if after is None or not path.endswith(".py"):
        return None
    now = _unbound(after, path)
    if not now:
        return None
    old = _unbound(before, path) if before is not None else {}
    if old is None:  # it did not parse before: nothing to tell the edit's names from the file's own
        return None
    new = {name: where for name, where in now.items() if name not in old}
    if not new:
        return None
    said = [f"{path}, line {line}: undefined name '{name}' (not defined or imported where it is read)"
            + (f"\n    {text}" if text else "") for name, (line, text) in sorted(new.items(), key=lambda i: i[1])]
    return "\n".join(said)


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
