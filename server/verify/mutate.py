"""Small changes to one line of code, the way mutation testing makes them: :func:`mutants`.

A fix a small model cannot write is often one token away: a boundary (``>`` where ``>=`` was meant), a negated
equality, a constant one off, a flag the wrong way round. Mutation testing's default operators (PIT's
conditionals-boundary, negate-conditionals on equality, increments on integer constants, true/false, and/or)
make exactly those changes, and template-based repair tools try them against the failing test before anything
else: each costs one check run and no decoding. Verification tries them on the lines the failing test ran, the
trace's most suspicious first (:mod:`contenox.node.verifying`), before the model fills those lines in.

Only code is changed: string literals and comments are left alone (a JavaScript template literal too, text and
``${}`` alike), as are floats and other number forms. Each mutant changes one token; they come in the order of
the line's tokens.
"""

from __future__ import annotations

import io
import re
import tokenize

import msgspec

__all__ = ["Mutant", "mutants"]


class Mutant(msgspec.Struct, frozen=True, kw_only=True):
    line: str
    """The line with one token changed."""
    said: str
    """What changed, in words: "`>` to `>=`"."""


_SWAPS = {"<": ("<=",), "<=": ("<",), ">": (">=",), ">=": (">",), "==": ("!=",), "!=": ("==",),
          "===": ("!==",), "!==": ("===",), "True": ("False",), "False": ("True",), "true": ("false",),
          "false": ("true",), "and": ("or",), "or": ("and",), "&&": ("||",), "||": ("&&",)}
_INTEGER = re.compile(r"(?:0|[1-9][0-9]*)")
_JS_TOKEN = re.compile(r"""(?P<skip>//.*|/\*.*?(?:\*/|$)|'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|`(?:\\.|[^`\\])*`?)"""
                       r"|(?P<op>>>>=|>>>|>>=|<<=|===|!==|=>|>>|<<|<=|>=|==|!=|&&|\|\||<|>)"
                       r"|(?P<number>(?<![\w$.])(?:0|[1-9][0-9]*)(?![\w$.]))"
                       r"|(?P<word>(?<![\w$.])(?:true|false)(?![\w$]))")
"""JavaScript's tokens a mutant may change, and what to step over (strings, templates, comments)."""


def mutants(line: str, path: str) -> list[Mutant]:
    """Each one-token change of ``line`` (a line of the file at ``path``; Python by its suffix, else JavaScript's
    syntax), in the order of the line's tokens."""
    spots = _python_spots(line) if path.endswith((".py", ".pyi")) else _js_spots(line)
    out: list[Mutant] = []
    seen = {line}
    for start, end, token in spots:
        if _INTEGER.fullmatch(token):
            number = int(token)
            replacements: tuple[str, ...] = (str(number + 1), *((str(number - 1),) if number > 0 else ()))
        else:
            replacements = _SWAPS.get(token, ())
        for new in replacements:
            changed = line[:start] + new + line[end:]
            if changed not in seen:
                seen.add(changed)
                out.append(Mutant(line=changed, said=f"`{token}` to `{new}`"))
    return out


def _python_spots(line: str) -> list[tuple[int, int, str]]:
    """(start, end, token) of the line's comparison, equality and boolean operators, integer constants and
    ``True``/``False``, read by Python's own tokenizer (a line that opens a bracket it does not close is read as
    far as it goes)."""
    spots: list[tuple[int, int, str]] = []
    body = line.lstrip()
    offset = len(line) - len(body)
    try:
        for token in tokenize.generate_tokens(io.StringIO(body + "\n").readline):
            text = token.string
            if (token.type in (tokenize.OP, tokenize.NAME) and text in _SWAPS) or (
                    token.type == tokenize.NUMBER and _INTEGER.fullmatch(text)):
                spots.append((offset + token.start[1], offset + token.end[1], text))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return spots


def _js_spots(line: str) -> list[tuple[int, int, str]]:
    """The same for a line of JavaScript (or another language of its syntax), by a small tokenizer."""
    spots: list[tuple[int, int, str]] = []
    for match in _JS_TOKEN.finditer(line):
        if match.group("skip") is not None:
            continue
        text = match.group(0)
        if text in _SWAPS or _INTEGER.fullmatch(text):
            spots.append((match.start(), match.end(), text))
    return spots
