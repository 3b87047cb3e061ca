"""A grammar that makes every sampled candidate an edit of real lines (OpenVINO GenAI structured output).

The answer must be one edit block for ``path``: the path line, ``<<<<<<< SEARCH``, a run of the file's own
consecutive lines (it may start at any non-blank line and stop after any line: each line is a rule whose only
continuation is the next line), ``=======``, any new lines, ``>>>>>>> REPLACE``. So a candidate is never prose,
never an invented format, and its SEARCH part is always text the file holds, in the file's order: it resolves.
A Python file's docstrings of three lines or more are left out of the runs (a run stops before one and starts
again after it): the 1.5B, offered a class, searched its 45-line docstring line by line and ran out of tokens
before its change (itsdangerous' ``Serializer``); a fix is in the code.
"""

from __future__ import annotations

import io
import json
import tokenize
from collections.abc import Iterable, Sequence

import msgspec

__all__ = [
    "LineRepair",
    "choice_grammar",
    "diff_call_grammar",
    "edit_block_grammar",
    "edit_blocks_grammar",
    "function_grammar",
    "line_repair",
    "number_grammar",
    "rename_grammar",
]

_MAX_LINES = 400
"""Lines of ``text`` the SEARCH may draw from (a target longer than this offers its first lines only)."""
_MAX_NEW = 60
"""Replacement lines at most; a new line never starts with ``=`` or ``>``, so only the REPLACE marker ends it."""


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


_DOC_LINES = 3
"""A standalone string statement this many lines long or longer (a docstring) is no part of a SEARCH run."""


def _strings(text: str) -> list[tuple[int, int, bool]]:
    """The strings of ``text`` (Python) that span lines: (first line, last line, 0-based; whether it stands as a
    statement of its own, a docstring). Read by tokens, so code cut short still gives the strings before the cut."""
    found: list[tuple[int, int, bool]] = []
    opens = True  # the next token begins a statement
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                found.append((token.start[0] - 1, token.end[0] - 1, opens))
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                opens = token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    except (tokenize.TokenError, SyntaxError):  # cut inside a string or a bracket: what came before stands
        pass
    return found


def _doc_lines(path: str, text: str) -> frozenset[int]:
    """0-based indices of the lines of ``text`` (a Python file, or a definition cut from one) that hold a
    standalone string statement of :data:`_DOC_LINES` lines or more: a docstring; other languages: none."""
    if not path.endswith(".py"):
        return frozenset()
    return frozenset(line for first, last, statement in _strings(text) if statement and last - first + 1 >= _DOC_LINES
                     for line in range(first, last + 1))


def _runs(prefix: str, text: str, limit: int = _MAX_LINES, path: str = "") -> tuple[list[str], list[str]]:
    """The rules of runs of consecutive lines of ``text`` (its first ``limit``, trailing blank ones left out):
    one rule per line (``{prefix}{i}``) whose only continuation is the next line, and the rules a run may start
    at (a non-blank line). A Python ``path``'s docstrings (:func:`_doc_lines`) have no rule: a run ends before
    one."""
    lines = [line.rstrip() for line in text.splitlines()[:limit]]
    while lines and not lines[-1]:
        lines.pop()
    skip = _doc_lines(path, text)
    rules = [f"{prefix}{i} ::= {_literal(line + chr(10))}"
             + (f" {prefix}{i + 1}?" if i + 1 < len(lines) and i + 1 not in skip else "")
             for i, line in enumerate(lines) if i not in skip]
    return rules, [f"{prefix}{i}" for i, line in enumerate(lines) if line and i not in skip]


def edit_block_grammar(path: str, text: str) -> str:
    """EBNF (root rule ``root``) of one edit block on ``path`` whose SEARCH lines are consecutive lines of
    ``text``."""
    rules, starts = _runs("l", text, path=path)
    return "\n".join([
        f'root ::= {_literal(path + chr(10))} "<<<<<<< SEARCH\\n" search "=======\\n" '
        f'new{{0,{_MAX_NEW}}} ">>>>>>> REPLACE\\n"',
        f"search ::= {' | '.join(starts) or _literal(chr(10))}",
        *rules,
        'new ::= ([^\\n=>] [^\\n]*)? "\\n"',
    ])


_EDIT_STEP_LINES = 800
"""Lines of all files together an edit step's grammar draws SEARCH runs from (a chain of a 1,100-line file's lines
crashed the grammar compiler once: see :func:`_diff_rules`)."""


def edit_blocks_grammar(files: Sequence[tuple[str, str]], blocks: int = 3) -> str:
    """EBNF (root rule ``root``) of one to ``blocks`` edit blocks, each on one of ``files`` ((path, text)) and
    searching a run of that file's consecutive lines, as :func:`edit_block_grammar` draws one: a change turn's
    edit step, when its answer named the change but wrote no block. The files share :data:`_EDIT_STEP_LINES`
    lines, the first ones first (each file its first lines)."""
    rules: list[str] = []
    alternatives: list[str] = []
    budget = _EDIT_STEP_LINES
    for k, (path, text) in enumerate(files):
        if budget <= 0:
            break
        runs, starts = _runs(f"l{k}_", text, min(_MAX_LINES, budget), path)
        if not starts:
            continue
        budget -= len(runs)
        rules += [*runs, f"s{k} ::= " + " | ".join(starts)]
        alternatives.append(f"{_literal(path + chr(10))} {_literal('<<<<<<< SEARCH' + chr(10))} s{k}")
    if not alternatives:
        raise ValueError("no file with lines to search")
    return "\n".join([
        f'root ::= block ("\\n"? block){{0,{max(0, blocks - 1)}}}',
        f'block ::= ({" | ".join(alternatives)}) "=======\\n" new{{0,{_MAX_NEW}}} ">>>>>>> REPLACE\\n"',
        *rules,
        'new ::= ([^\\n=>] [^\\n]*)? "\\n"',
    ])


def rename_grammar(blank: str, rest: str, others: Sequence[tuple[str, str, str]] = (),
                   names: Sequence[str] = ()) -> str:
    """EBNF (root rule ``root``) of a rename question's edit step, written in up to the first renamed
    definition's name (:func:`contenox.node.node` opens its block there): ``blank``, the new name, ``rest`` (the
    line after the name as it is) and the block's end; then, for each of ``others`` ((opening, blank, rest): another
    definition the question renames, its block written up to its name), that block with a new name, as many
    blocks as there are others. Nothing else: a rename question's step renames, and the rename reaches every use
    (the 0.5B, its blocks free after the first, also dropped a class's base class in another file). ``names``:
    the new names the question gives, one per block in order: each block's name is that one, not the model's."""
    free = "[A-Za-z_$] [A-Za-z0-9_$]*"
    given = list(names) if len(names) == 1 + len(others) else []

    def renamed(blank: str, rest: str, k: int) -> str:
        end = _literal(f"{rest}\n>>>>>>> REPLACE\n")
        name = _literal(given[k]) if given else free
        return (f"{_literal(blank)} " if blank else "") + f"{name} {end}"

    rules = [f"root ::= {renamed(blank, rest, 0)}" + (f' ("\\n"? more){{0,{len(others)}}}' if others else "")]
    if others:
        rules.append("more ::= " + " | ".join(f"{_literal(opening)} {renamed(b, r, k)}"
                                              for k, (opening, b, r) in enumerate(others, start=1)))
    return "\n".join(rules)


_MAX_FUNCTION_LINES = 120


def function_grammar(first_line: str, fence: str = "python") -> str:
    """EBNF of a focused repair's answer: one ```python block (``fence``: the place's language) that starts with
    the function's own first line (its ``def`` line as the file has it), so a candidate is always a rewrite of
    that function, never prose, a test or another function; then up to 120 lines, none starting with a
    backtick, and the closing fence."""
    return "\n".join([
        f'root ::= {_literal("```" + fence + chr(10))} {_literal(first_line.rstrip() + chr(10))} '
        f'body{{0,{_MAX_FUNCTION_LINES}}} "```"',
        'body ::= ([^`\\n] [^\\n]*)? "\\n"',
    ])


def choice_grammar(count: int) -> str:
    """EBNF of an answer that is one of the numbers 1..``count`` and nothing else (a localization's pick)."""
    return number_grammar(range(1, count + 1))


def number_grammar(numbers: Iterable[int]) -> str:
    """EBNF of an answer that is one of ``numbers`` and nothing else (the longest spelled first: ``12`` before
    ``1``)."""
    return "root ::= " + " | ".join(_literal(str(i)) for i in sorted(set(numbers), reverse=True))


_EXTRA_LINES = 2
"""New lines a changed line may bring after it (a fix that adds a statement)."""
_EXPRESSION = [
    'appended ::= trailer+ operations comment? | operation+ comment? | ("," " " expr)+ comment?',
    'operations ::= operation*',
    'operation ::= " " binop " " unary | " if " unary (" " binop " " unary)* " else " unary',
    'expr ::= unary operation*',
    'unary ::= ("-" | "not ")? atom',
    'atom ::= (name | number | string | "(" inner ")" | "[" inner "]" | "{" inner "}") trailer*',
    'trailer ::= "." name | "(" inner ")" | "[" inner "]"',
    'name ::= [A-Za-z_] [A-Za-z0-9_]*',
    'number ::= [0-9] [0-9a-fA-FxXoObBjJ_.]*',
    'string ::= [bBrRfFuU]{0,2} ("\\"" ([^"\\\\\\n] | "\\\\" [^\\n])* "\\"" | '
    '"\'" ([^\'\\\\\\n] | "\\\\" [^\\n])* "\'")',
    'inner ::= ([^()\\[\\]{}"\'\\n] | "(" inner ")" | "[" inner "]" | "{" inner "}" | string)*',
    'binop ::= "+" | "-" | "*" | "/" | "//" | "%" | "**" | "@" | "<<" | ">>" | "&" | "|" | "^" | "<" | ">" | "<=" '
    '| ">=" | "==" | "!=" | "and" | "or" | "in" | "not in" | "is" | "is not"',
    'comment ::= "  # " [^\\n]*',
]
"""What may follow a picked line written whole: more of its expression, as Python writes it (an attribute, a
call or an index, then operators each between single spaces and followed by an operand; or more items after a
comma), and only then, if at all, a comment: ``return x`` -> ``return x - 1``, ``s = read()`` ->
``s = read().strip()``, ``return a`` -> ``return a, None``. Never a marker or prose after the line: the first
rule (anything but ``#``, ``/`` and ``<-``) let the 0.5B end 16 of 16 line candidates of TTLCache.expire's
``while`` line with the line unchanged and ``  <!-- Corrected line -->``, ``0xf``, ``660修正`` after it; the
second (any operator character after blanks) let it write ``  <== Corrected line``, ``  <<<<<<<< fix``,
``  ****** Corrected line``, ``  --> <-- Corrected line``: on the 0.5B's 31-task run (34db275), 148 of its
228 checked line candidates did not parse, 87 of them the line written whole and such a tail. A conditional
expression is ``if`` and ``else`` together (with ``if`` an operator alone, the test model wrote
``y = x - 1 in the if elseation is wrong``)."""


def _class_char(char: str) -> str:
    """``char`` as it stands in a character class."""
    if char in "\\]^-[":
        return "\\" + char
    return {"\t": "\\t", "\r": "\\r"}.get(char, char)


class LineRepair(msgspec.Struct, frozen=True, kw_only=True):
    """A line-level repair's answer in three parts: ``begun`` (the ```python fence and the function's lines before
    the picked one: written into the answer before the model's first token, so none of them is decoded), what the
    model draws under ``grammar`` (the picked line changed, up to two new lines, then the line after it as it is,
    which ends the answer), and ``rest`` (the function's later lines and the closing fence, added after)."""

    begun: str
    grammar: str
    rest: str
    ending: str = ""
    """The line after the picked one as the draw ends with it ('' at the function's end)."""
    after: tuple[str, ...] = ()
    """The function's lines after the picked one, as many as new lines may be drawn."""

    def answer(self, drawn: str) -> str:
        """The whole answer: the function with the drawn line(s) in place. New lines that copy the lines after the
        picked one, in order, are dropped: the model went on copying the function (the 1.5B wrote
        ``name = match["name"]`` again before the grammar's own copy of it: 30 of 47 line candidates on
        python-dotenv's variables added such a copy), which adds a duplicate, no line."""
        first, _, tail = drawn.partition("\n")
        if self.ending and tail.endswith(self.ending):
            new = tail[:len(tail) - len(self.ending)].splitlines()
            copied = 0
            while copied < min(len(new), len(self.after)) and new[copied].rstrip() == self.after[copied].rstrip():
                copied += 1
            drawn = first + "\n" + "".join(line + "\n" for line in new[copied:]) + self.ending
        return self.begun + drawn + self.rest


def line_repair(code: str, index: int, fence: str = "python") -> LineRepair:
    """A line-level repair of ``code`` (a function) at its ``index``-th line (0-based), Agentless's edit location
    then its edit: every line as it is but that one, which must change, and may bring up to two new lines after
    it. The small models asked to rewrite a function copy it unchanged (the 0.5B, 4 of 4 times on cachetools' lru
    bug); here the copy is not an answer the grammar admits, and the change is where the pick put it, not
    wherever copying ran out. The lines before it are written into the answer (``begun``) and the ones after the
    next added to it (``rest``), so a candidate decodes one or two lines, not the whole function: the first
    version drew every line under the grammar, each a decoding step.

    The changed line keeps its own indentation: ``d{i}`` means its first ``i`` characters of code were written
    as they are, so what follows is another character (not a blank: a space put in is no change), or the line
    ends there (a shorter line; not an empty one, after which the line could come back as a new line), or, after
    the whole line, more of its expression (``appended``, :data:`_EXPRESSION`: ``x = a`` -> ``x = a + 1``; never a comment or a
    marker: the 1.5B's first line-level answers on cachetools' lru task appended ``// Corrected line`` to the
    line, 8 of 16, the second run's ``  <-- Corrected line``, the 0.5B's ``  <!-- Corrected line -->``). A line
    that opens a block (``while ...:``) is never written whole: its change comes before its colon, and it still
    ends with one (the 0.5B's changed headers on the 31-task run ended ``try``, ``try;``, ``if salt is None;``,
    ``def advance(self, string: str) -> None``, ``...has_next()：``, each a candidate that could not parse).
    A new line is one of the function's body (indented deeper than its ``def``, not starting with ``<``) or
    blank: in the first run, free new lines held ``import time`` at column 0, a ``**Question**`` in markdown,
    the line with its number from the pick's listing.

    ``fence``: the place's language; a line of another language than Python (JavaScript: a template literal's
    text, ``=>``, ``===``) is not held to Python's expression rules: once changed or written whole, it goes on
    as anything, and no line is a header that must end with a colon."""
    lines = [line.rstrip() for line in code.splitlines()]
    target = lines[index].strip()
    indent = lines[index][:len(lines[index]) - len(lines[index].lstrip())]
    outer = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    rules = []
    # a line of a string's text (a verbose regex), or of another language: no Python rule holds it
    text = fence != "python" or index in _string_lines(code)
    header = target.endswith(":") and not text  # if/while/for/def/with ...: nothing may follow it on its line
    rest, shorter = ("opened", '":"') if header else ("rest", '""')
    for i, char in enumerate(target):
        # (xgrammar clamps a non-ASCII character in a negated class to 127: not excluded there, so a copy through
        # it can be drawn, and counts as a copy in the node)
        other = "" if char in " \t" or ord(char) > 127 else _class_char(char)
        alternatives = [f"[^{other}{'#' if header else ''} \\t\\n] {rest}"]
        last = i == len(target) - 1
        if not (header and last):  # a header's colon ends a copy: the change comes before it
            alternatives.append(f"{_literal(char)} d{i + 1}")
        if i and not (header and last):  # (a header cut before its colon and closed again is the line itself)
            alternatives.append(shorter)
        rules.append(f"d{i} ::= " + " | ".join(alternatives))
    ending = _literal(lines[index + 1] + "\n") if index + 1 < len(lines) else '"```"'
    grammar = "\n".join([
        f'root ::= {_literal(indent)} d0 "\\n" more{{0,{_EXTRA_LINES}}} {ending}',
        *rules,
        f'd{len(target)} ::= ' + ('[^\\n]+' if text else 'appended'),  # text goes on as anything
        *_EXPRESSION,
        "rest ::= [^\\n]*",
        'opened ::= [^#\\n]* ":" comment?',  # a changed header still opens its block (a colon in a comment: no)
        f'more ::= ({_literal(outer)} [ \\t]+ [^`< \\t\\n] [^\\n]*)? "\\n"',
    ])
    rest = "".join(line + "\n" for line in lines[index + 2:]) + "```" if index + 1 < len(lines) else ""
    return LineRepair(begun=f"```{fence}\n" + "".join(line + "\n" for line in lines[:index]), grammar=grammar,
                      rest=rest, ending=lines[index + 1] + "\n" if index + 1 < len(lines) else "",
                      after=tuple(lines[index + 1:index + 1 + _EXTRA_LINES]))


def _string_lines(code: str) -> frozenset[int]:
    """0-based indices of the lines of ``code`` that begin inside a string (the lines after the first of a
    triple-quoted one): their text is the string's, not Python's."""
    return frozenset(line for first, last, _ in _strings(code) for line in range(first + 1, last + 1))


_DIFF_MAX_LINES = 2000
"""Lines of a file a ``propose_edit`` diff may draw its context and removed lines from (its first lines beyond)."""
_JSON_CHAR = r'([^"\\\x00-\x1f] | "\\" ["\\/bfrt] | "\\u" [0-9a-fA-F]{4})'
"""One character of a JSON string's text that is not a line break (``\\n`` ends a diff line)."""


_HUNKS = 4
_CONTEXT = 8
"""Context lines in a row at most (the 1.5B's redrawn calls copied whole functions as context, and blank context
lines, to the token limit)."""
_CHANGED = 40
_RUNS = 6
_NEW_FILE_LINES = 400
_NL = "\\n"
"""A line break as a JSON string holds it (backslash, ``n``)."""


def _json_text(text: str) -> str:
    """``text`` as it stands inside a JSON string (what the model writes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _diff_rules(k: int, path: str, text: str) -> list[str]:
    """The rules of a unified diff of ``path`` (rule ``d{k}``) as JSON string text, whose context (`` ``) and
    removed (``-``) lines are lines of ``text`` and whose added (``+``) lines are free; each hunk changes
    something (a hunk of context alone is no edit: the 1.5B wrote one). The lines are a set, not a chain of
    consecutive lines (that they follow each other is what ``git apply`` then checks): a chain, one rule per
    line leading to the next, was tried first and crashed the grammar compiler (a segfault) on a 1,100-line
    file."""
    lines = sorted({line for line in text.splitlines()[:_DIFF_MAX_LINES]})
    p = _json_text(path)
    kept = [line for line in lines if line]
    return [
        f"d{k} ::= h{k}? hunk{k}{{1,{_HUNKS}}}",
        f"h{k} ::= {_literal(f'diff --git a/{p} b/{p}{_NL}')}? "
        f"({_literal(f'--- a/{p}{_NL}+++ b/{p}{_NL}')} | {_literal(f'--- {p}{_NL}+++ {p}{_NL}')})",
        f"hunk{k} ::= at same{k}{{0,{_CONTEXT}}} (change{k}{{1,{_CHANGED}}} same{k}{{0,{_CONTEXT}}}){{1,{_RUNS}}}",
        f'same{k} ::= " " line{k} nl' + (' | " "? nl' if len(kept) < len(lines) else ""),
        f'change{k} ::= "-" line{k}? nl | plus',
        f"line{k} ::= " + (" | ".join(_literal(_json_text(line)) for line in kept) or '""'),
    ]


def diff_call_grammar(files: Sequence[tuple[str, str]], before: str = "", after: str = "") -> str:
    """EBNF (root rule ``root``): ``before``, a ``propose_edit`` call's arguments (``{"path": ..., "diff": ...}``
    in either order, as JSON), ``after``. The diff edits one of ``files`` ((path, text); a path may come twice,
    e.g. as the file is and as the turn's earlier edit left it) with lines the file holds: no context from
    memory, no line numbers copied from a ``read_file`` result, no diff that changes nothing, none that runs on
    (the 1.5B's did all four); at most four hunks, each at most eight context lines in a row and six runs of at
    most 40 changed lines. (A line's length is not bounded: a bounded repetition of characters cost 2.5 s of
    grammar compilation here; of rules, nothing measurable.) A new file (a diff from ``/dev/null``, adding lines
    only) may take any path."""
    nl = _literal(_NL)
    rules: list[str] = []
    path_first = ['name q sep key_diff new']
    diff_first = ['new q sep key_path name']
    for k, (path, text) in enumerate(files):
        if not text.strip():
            continue
        rules += _diff_rules(k, path, text)
        name = _literal(_json_text(path))
        path_first.append(f"{name} q sep key_diff d{k}")
        diff_first.append(f"d{k} q sep key_path {name}")
    return "\n".join([
        f"root ::= {_literal(before)} args {_literal(after)}" if before or after else "root ::= args",
        'args ::= "{" ws (key_path (' + " | ".join(path_first) + ") | key_diff (" + " | ".join(diff_first)
        + ')) q ws "}"',
        f"key_path ::= {_literal(chr(34) + 'path' + chr(34))} ws {_literal(':')} ws q",
        f"key_diff ::= {_literal(chr(34) + 'diff' + chr(34))} ws {_literal(':')} ws q",
        f"sep ::= ws {_literal(',')} ws",
        f"q ::= {_literal(chr(34))}",
        f'new ::= ({_literal("--- /dev/null" + _NL + "+++ b/")} name {nl})? {_literal("@@ -0,0 +1")} '
        f'({_literal(",")} num)? {_literal(" @@" + _NL)} plus{{1,{_NEW_FILE_LINES}}}',
        "name ::= ch+",
        *rules,
        f'at ::= "@@ -" num ("," num)? " +" num ("," num)? " @@" (" " ch*)? {nl}',
        f'plus ::= "+" ch* {nl}',
        f"nl ::= {nl}",
        "num ::= [0-9]{1,6}",
        "ws ::= [ \\n\\t]{0,16}",
        f"ch ::= {_JSON_CHAR}",
    ])
