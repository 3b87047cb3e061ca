"""Small changes to one line of code, the way mutation testing makes them: :func:`mutants`.

A fix a small model cannot write is often one token away: a boundary (``>`` where ``>=`` was meant), a negated
equality, a constant one off, a flag the wrong way round. Mutation testing's default operators (PIT's
conditionals-boundary, negate-conditionals on equality, increments on integer constants, true/false, and/or)
make exactly those changes, and template-based repair tools try them against the failing test before anything
else: each costs one check run and no decoding. Verification tries them on the lines the failing test ran, the
trace's most suspicious first (:mod:`contenox.node.verifying`), before the model fills those lines in.

Only code is changed: string literals and comments are left alone (a JavaScript template literal too, text and
``${}`` alike), as are floats and other number forms, except where the question names the literal's
replacement: a short string literal becomes each word the question writes as a literal (quoted, in backticks, or
in capitals or with digits: "It should use NFKD") that is of the literal's own kind (capitals for capitals,
lower case for lower case), the fix a user tells in words. Each mutant changes one token; they come in the order
of the line's tokens.
"""

from __future__ import annotations

import io
import re
import tokenize

import msgspec

__all__ = ["Mutant", "literal_words", "mutants"]


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


_LITERAL_WORD = re.compile(r"`([\w.+-]{2,40})`|'([\w.+-]{2,40})'|\"([\w.+-]{2,40})\"|"
                           r"(?<![\w.+-])([A-Z][A-Z0-9_-]{2,39}|[A-Za-z]+[0-9][A-Za-z0-9]*)(?![\w+-]|\.\w)")
"""A word a question writes as a literal: quoted, in backticks, in capitals (``NFKD``), or letters with digits
(``sha256``)."""
_STRING = re.compile(r"""^([rRbBuU]{0,2})(['"])([\w.+-]{1,40})\2$""")
"""A short string literal whose text is one word (no f-string: its braces are code)."""


def literal_words(question: str) -> tuple[str, ...]:
    """The words ``question`` writes as literals (:data:`_LITERAL_WORD`), each once, in order."""
    return tuple(dict.fromkeys(next(g for g in m.groups() if g) for m in _LITERAL_WORD.finditer(question)))


def _kind(word: str) -> str:
    return "upper" if word.isupper() else "lower" if word.islower() else "mixed"


def mutants(line: str, path: str, named: tuple[str, ...] = ()) -> list[Mutant]:
    """Each one-token change of ``line`` (a line of the file at ``path``; Python by its suffix, else JavaScript's
    syntax), in the order of the line's tokens; ``named``: the question's literal words (:func:`literal_words`),
    each of which replaces the text of a one-word string literal of its kind."""
    python = path.endswith((".py", ".pyi"))
    spots = _python_spots(line, bool(named)) if python else _js_spots(line, bool(named))
    out: list[Mutant] = []
    seen = {line}
    for start, end, token in spots:
        if (string := _STRING.match(token)) is not None:
            prefix, quote, text = string.groups()
            for word in named:
                changed = line[:start] + prefix + quote + word + quote + line[end:]
                if word != text and _kind(word) == _kind(text) and changed not in seen:
                    seen.add(changed)
                    out.append(Mutant(line=changed, said=f"`{token}` to `{prefix}{quote}{word}{quote}` (the "
                                                         "question's word)"))
            continue
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


def _python_spots(line: str, strings: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, token) of the line's comparison, equality and boolean operators, integer constants and
    ``True``/``False`` (``strings``: its one-word string literals too), read by Python's own tokenizer (a line
    that opens a bracket it does not close is read as far as it goes)."""
    spots: list[tuple[int, int, str]] = []
    body = line.lstrip()
    offset = len(line) - len(body)
    try:
        for token in tokenize.generate_tokens(io.StringIO(body + "\n").readline):
            text = token.string
            if (token.type in (tokenize.OP, tokenize.NAME) and text in _SWAPS) or (
                    token.type == tokenize.NUMBER and _INTEGER.fullmatch(text)) or (
                    strings and token.type == tokenize.STRING and _STRING.match(text)):
                spots.append((offset + token.start[1], offset + token.end[1], text))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return spots


def _js_spots(line: str, strings: bool = False) -> list[tuple[int, int, str]]:
    """The same for a line of JavaScript (or another language of its syntax), by a small tokenizer."""
    spots: list[tuple[int, int, str]] = []
    for match in _JS_TOKEN.finditer(line):
        if match.group("skip") is not None:
            if strings and _STRING.match(match.group(0)) and match.group(0)[0] in "'\"":
                spots.append((match.start(), match.end(), match.group(0)))
            continue
        text = match.group(0)
        if text in _SWAPS or _INTEGER.fullmatch(text):
            spots.append((match.start(), match.end(), text))
    return spots
