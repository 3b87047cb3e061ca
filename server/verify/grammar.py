"""A grammar that makes every sampled candidate an edit of real lines (OpenVINO GenAI structured output).

The answer must be one edit block for ``path``: the path line, ``<<<<<<< SEARCH``, a run of the file's own
consecutive lines (it may start at any non-blank line and stop after any line: each line is a rule whose only
continuation is the next line), ``=======``, any new lines, ``>>>>>>> REPLACE``. So a candidate is never prose,
never an invented format, and its SEARCH part is always text the file holds, in the file's order: it resolves.
"""

from __future__ import annotations

import json

__all__ = ["choice_grammar", "edit_block_grammar", "function_grammar"]

_MAX_LINES = 400
"""Lines of ``text`` the SEARCH may draw from (a target longer than this offers its first lines only)."""
_MAX_NEW = 60
"""Replacement lines at most; a new line never starts with ``=`` or ``>``, so only the REPLACE marker ends it."""


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def edit_block_grammar(path: str, text: str) -> str:
    """EBNF (root rule ``root``) of one edit block on ``path`` whose SEARCH lines are consecutive lines of
    ``text``."""
    lines = [line.rstrip() for line in text.splitlines()[:_MAX_LINES]]
    while lines and not lines[-1]:
        lines.pop()
    rules = [f"l{i} ::= {_literal(line + chr(10))}" + (f" l{i + 1}?" if i + 1 < len(lines) else "")
             for i, line in enumerate(lines)]
    starts = " | ".join(f"l{i}" for i, line in enumerate(lines) if line) or _literal("\n")
    return "\n".join([
        f'root ::= {_literal(path + chr(10))} "<<<<<<< SEARCH\\n" search "=======\\n" '
        f'new{{0,{_MAX_NEW}}} ">>>>>>> REPLACE\\n"',
        f"search ::= {starts}",
        *rules,
        'new ::= ([^\\n=>] [^\\n]*)? "\\n"',
    ])


_MAX_FUNCTION_LINES = 120


def function_grammar(first_line: str) -> str:
    """EBNF of a focused repair's answer: one ```python block that starts with the function's own first line (its
    ``def`` line as the file has it), so a candidate is always a rewrite of that function, never prose, a test or
    another function; then up to 120 lines, none starting with a backtick, and the closing fence."""
    return "\n".join([
        f'root ::= "```python\\n" {_literal(first_line.rstrip() + chr(10))} body{{0,{_MAX_FUNCTION_LINES}}} "```"',
        'body ::= ([^`\\n] [^\\n]*)? "\\n"',
    ])


def choice_grammar(count: int) -> str:
    """EBNF of an answer that is one of the numbers 1..``count`` and nothing else (a localization's pick)."""
    return "root ::= " + " | ".join(_literal(str(i)) for i in range(count, 0, -1))
