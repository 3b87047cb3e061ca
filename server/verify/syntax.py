"""Whether a candidate's edited file still parses, before the check runs: a candidate that does not parse
cannot pass, and the user's check command may take minutes; what the parser says is what a repair needs."""

from __future__ import annotations

import ast
import warnings

__all__ = ["unparsable"]

_PYTHON = (".py", ".pyi")


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


def unparsable(path: str, before: str | None, after: str | None) -> str | None:
    """Why ``after``, a file's text once a candidate's edit is laid on it, does not parse (the parser's
    message, its line and that line's text), or None: it parses, it is not Python, it was deleted, or ``before``
    did not parse either (a file this interpreter cannot read, such as another Python's syntax: the check
    decides)."""
    if after is None or not path.endswith(_PYTHON):
        return None
    error = _parse(after, path)
    if error is None or (before is not None and _parse(before, path) is not None):
        return None
    where = f", line {error.lineno}" if error.lineno else ""
    text = (error.text or "").rstrip("\n")
    return f"{path}{where}: {error.msg}" + (f"\n    {text.strip()}" if text.strip() else "")
