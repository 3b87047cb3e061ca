"""A grammar that makes every sampled candidate an edit of real lines (OpenVINO GenAI structured output).

The answer must be one edit block for ``path``: the path line, ``<<<<<<< SEARCH``, 1-40 of the file's
own lines (each an alternative of the grammar, JSON-quoted), ``=======``, any new lines, ``>>>>>>> REPLACE``.
The resolver still checks that the SEARCH lines are contiguous in the file; the grammar makes sure each one
exists, so a candidate is never prose and never an invented format.
"""

from __future__ import annotations

import json

__all__ = ["edit_block_grammar"]

_MAX_LINES = 2000
_MAX_SEARCH = 40
"""SEARCH lines at most (a candidate that lists the whole file never ends otherwise)."""
_MAX_NEW = 60
"""Replacement lines at most; a new line never starts with ``=`` or ``>``, so only the REPLACE marker ends it."""


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def edit_block_grammar(path: str, text: str) -> str:
    """EBNF (root rule ``root``) of one edit block on ``path`` whose SEARCH lines are lines of ``text``."""
    lines = list(dict.fromkeys(line.rstrip() for line in text.splitlines()[:_MAX_LINES]))
    real = " | ".join(_literal(line + "\n") for line in lines if line) or _literal("\n")
    if "" in lines:  # the file's blank lines too: a SEARCH that skips one is not the file's text
        real += ' | "\\n"'
    return "\n".join([
        f'root ::= {_literal(path + chr(10))} "<<<<<<< SEARCH\\n" search{{1,{_MAX_SEARCH}}} "=======\\n" '
        f'new{{0,{_MAX_NEW}}} ">>>>>>> REPLACE\\n"',
        f"search ::= {real}",
        'new ::= ([^\\n=>] [^\\n]*)? "\\n"',
    ])
