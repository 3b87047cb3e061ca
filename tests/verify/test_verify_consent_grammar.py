"""Consent remembered per workspace and command, revocable; the edit-block grammar holds the file's lines."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from contenox.answer.blocks import parse_edit_blocks
from contenox.verify import ConsentStore, edit_block_grammar, edit_blocks_grammar, line_repair


def test_consent_per_workspace_and_command(tmp_path: Path) -> None:
    store = ConsentStore(tmp_path / "state" / "verify-consent.json")
    assert store.get("/w", "pytest") is None
    store.set("/w", "pytest", True)
    store.set("/w", "make", False)
    store.set("/other", "pytest", False)
    again = ConsentStore(store.path)  # another client of the node reads the same answers
    assert (again.get("/w", "pytest"), again.get("/w", "make"), again.get("/other", "pytest")) == (True, False, False)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert sorted(again.revoke("/w")) == ["make", "pytest"]
    assert again.get("/w", "pytest") is None
    assert again.get("/other", "pytest") is False
    store.path.write_text("{not json")
    assert store.get("/other", "pytest") is None  # unreadable: asked again, never allowed


def test_grammar_holds_runs_of_the_files_consecutive_lines() -> None:
    text = 'def add(a, b):\n    return a - b\n\n\nNAME = "x\\"y"\n'
    grammar = edit_block_grammar("src/ops.py", text)
    lines = grammar.splitlines()
    assert lines[0].startswith('root ::= "src/ops.py\\n" "<<<<<<< SEARCH\\n" search "=======\\n"')
    assert "search ::= l0 | l1 | l4" in lines  # a run starts at a non-blank line
    assert 'l1 ::= "    return a - b\\n" l2?' in lines  # and goes on only with the next line
    assert 'l2 ::= "\\n" l3?' in lines and 'l4 ::= "NAME = \\"x\\\\\\"y\\"\\n"' in lines
    # an answer the grammar admits is an edit block the node reads
    answer = "src/ops.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    blocks = parse_edit_blocks(answer)
    assert [(b.path, b.search, b.replace) for b in blocks] == [("src/ops.py", "    return a - b",
                                                                 "    return a + b")]


def test_an_edit_step_grammar_takes_blocks_on_each_file_and_shares_its_lines_budget() -> None:
    long = "".join(f"x{i} = {i}\n" for i in range(500))
    grammar = edit_blocks_grammar([("a.py", "A = 1\n\n"), ("b.py", long), ("c.py", long), ("d.py", long)])
    lines = grammar.splitlines()
    assert lines[0] == 'root ::= block ("\\n"? block){0,2}'  # one to three blocks
    assert lines[1].startswith('block ::= ("a.py\\n" "<<<<<<< SEARCH\\n" s0 | "b.py\\n" "<<<<<<< SEARCH\\n" s1 | '
                               '"c.py\\n" "<<<<<<< SEARCH\\n" s2) "=======\\n"')
    assert 'l0_0 ::= "A = 1\\n"' in lines and "s0 ::= l0_0" in lines  # the blank last line left out
    assert 'l1_398 ::= "x398 = 398\\n" l1_399?' in lines and 'l1_399 ::= "x399 = 399\\n"' in lines  # 400 lines
    assert 'l2_398 ::= "x398 = 398\\n"' in lines and "l2_399" not in grammar  # what the 800 left: 399
    assert "d.py" not in grammar
    with pytest.raises(ValueError, match="no file"):
        edit_blocks_grammar([("e.py", "\n\n")])


def test_a_changed_line_grammar_admits_no_copy_of_the_line() -> None:
    """The rules of the picked line read as a chain: its indentation, then after its first ``i`` characters as
    they are, another character (not a blank), the end of a shorter line (never an empty one), or the whole line
    and then code that is no comment; the line after it is a literal that ends the draw, and a new line is
    indented into the body. The lines before it begin the answer, the ones after the next end it."""
    repair = line_repair("def f(a):\n    x = a[0]\n    y = x\n    return y\n", 1)
    assert (repair.begun, repair.rest) == ("```python\ndef f(a):\n", "    return y\n```")
    lines = repair.grammar.splitlines()
    assert lines[0] == 'root ::= "    " d0 "\\n" more{0,2} "    y = x\\n"'
    assert lines[1] == 'd0 ::= [^x \\t\\n] rest | "x" d1'  # no empty line: the line could come back after it
    assert lines[2] == 'd1 ::= [^ \\t\\n] rest | " " d2 | ""'
    assert 'd5 ::= [^\\[ \\t\\n] rest | "[" d6 | ""' in lines and 'd7 ::= [^\\] \\t\\n] rest | "]" d8 | ""' in lines
    # longer: more of the expression (an operator, a keyword, an attribute, a call, an index), never a comment
    # (``#``, ``//``), an arrow or a tag pointing at it (``  <-- Corrected line``, ``  <!-- Corrected line -->``)
    assert lines[lines.index('d7 ::= [^\\] \\t\\n] rest | "]" d8 | ""') + 1] == 'd8 ::= appended'
    assert 'appended ::= trailer+ operations comment? | operation+ comment? | ("," " " expr)+ comment?' in lines
    # an operator between single spaces, then an operand; a conditional's "if" only with its "else"
    assert 'operation ::= " " binop " " unary | " if " unary (" " binop " " unary)* " else " unary' in lines
    assert '"if"' not in next(line for line in lines if line.startswith("binop ::="))
    header = line_repair("def f(a):\n    while a > 1:\n        a -= 1\n", 1).grammar.splitlines()
    assert 'd11 ::= [^:# \\t\\n] opened' in header  # a block's opening line: changed before its colon
    assert 'd10 ::= [^1# \\t\\n] opened | "1" d11 | ":"' in header  # cut short, it is closed again
    assert 'opened ::= [^#\\n]* ":" comment?' in header  # and changed, it still opens its block
    assert lines[-1] == 'more ::= ("" [ \\t]+ [^`< \\t\\n] [^\\n]*)? "\\n"'  # a new line: the body's, or blank
    assert repair.answer("    x = a[1]\n    y = x\n") == "```python\ndef f(a):\n    x = a[1]\n    y = x\n    return y\n```"
    last = line_repair("def f(a):\n    return a\n", 1)  # the last line: the draw ends with the fence
    assert (last.begun, last.rest) == ("```python\ndef f(a):\n", "")
    assert last.grammar.splitlines()[0] == 'root ::= "    " d0 "\\n" more{0,2} "```"'
    accented = line_repair('def h():\n    return "é"\n', 1).grammar.splitlines()
    assert 'd8 ::= [^ \\t\\n] rest | "é" d9 | ""' in accented  # xgrammar clamps it in a negated class
    method = line_repair("    def g(self):\n        return 1\n", 1)
    assert method.begun == "```python\n    def g(self):\n"
    assert method.grammar.startswith('root ::= "        " d0')  # its indentation kept
    assert method.grammar.splitlines()[-1] == 'more ::= ("    " [ \\t]+ [^`< \\t\\n] [^\\n]*)? "\\n"'


def test_a_javascript_line_is_changed_as_text_and_no_line_is_a_header() -> None:
    """semver's caret line sits in a template literal (``}${z} <${M}.${m}.${+p + 1}-0``): not Python, so no
    expression rule holds it; once changed or written whole it goes on as anything; a line ending ``:`` (an
    object's key, a ``case``) is no header that must keep a colon; the answer is a ```javascript block."""
    code = "const f = (M) => {\n  switch (M) {\n    case 0:\n      return `<${+M + 1}`\n  }\n}\n"
    repair = line_repair(code, 3, "javascript")
    assert repair.begun.startswith("```javascript\nconst f = (M) => {\n")
    lines = repair.grammar.splitlines()
    assert 'd19 ::= [^\\n]+' in lines and "d19 ::= appended" not in lines  # the whole line, then anything
    assert not any("opened" in line for line in lines if line.startswith("d"))
    case = line_repair(code, 2, "javascript").grammar.splitlines()
    assert 'd6 ::= [^: \\t\\n] rest | ":" d7 | ""' in case  # its colon is a character like another
    assert repair.answer("      return `<${+M + 2}`\n  }\n").endswith("  }\n}\n```")


def test_a_python_file_s_docstrings_are_no_part_of_a_search_run() -> None:
    """A docstring of three lines or more has no rule: a run stops before it and may start again after it (the
    1.5B searched a class's 45-line docstring and ran out of tokens before its change). A one-line docstring, a
    string that is an argument and another language's text stay."""
    text = ('class Serializer:\n    """Wraps a signer.\n\n    More.\n    """\n\n    default = json\n\n'
            '    def dumps(self):\n        """One line."""\n        return f(\n            """not a\n\n'
            '            docstring"""\n        )\n')
    lines = edit_block_grammar("s.py", text).splitlines()
    assert 'l0 ::= "class Serializer:\\n"' in lines  # no continuation into the docstring
    assert not any(line.startswith(("l1 ", "l2 ", "l3 ", "l4 ")) for line in lines)
    assert "search ::= l0 | l6 | l8 | l9 | l10 | l11 | l13 | l14" in lines
    assert 'l9 ::= "        \\"\\"\\"One line.\\"\\"\\"\\n" l10?' in lines and 'l12 ::= "\\n" l13?' in lines
    cut = "\n".join(text.splitlines()[:3])  # a definition cut inside its docstring: what came before stands
    assert 'l0 ::= "class Serializer:\\n" l1?' in edit_block_grammar("s.py", cut).splitlines()
    assert 'l0 ::= "class Serializer:\\n" l1?' in edit_block_grammar("s.txt", text).splitlines()
    step = edit_blocks_grammar([("s.py", text)]).splitlines()
    assert 'l0_0 ::= "class Serializer:\\n"' in step and "l0_1 " not in "\n".join(step)


def test_a_line_of_a_string_s_text_is_changed_as_text() -> None:
    """A verbose regex's line is no Python: after it is written whole anything may follow (``(?::`` ->
    ``(?::-``), and its colon is no block header's."""
    code = '_pattern = re.compile(\n    r"""\n    (?::\n    """,\n)\n'
    lines = line_repair(code, 2).grammar.splitlines()
    assert "d4 ::= [^\\n]+" in lines and 'd3 ::= [^: \\t\\n] rest | ":" d4 | ""' in lines
    python = line_repair("def f(a):\n    x = {1:\n    2}\n", 1).grammar.splitlines()
    assert not any(line.startswith("d") and "[^\\n]+" in line for line in python)


def test_new_lines_that_copy_the_lines_after_the_picked_one_are_dropped() -> None:
    """The model drew the changed line, then went on copying the function as new lines before the grammar's own
    copy of the next line: the copies are dropped (a duplicate is no added line); a real new line stays."""
    code = "def f(m):\n    (s, e) = m.span()\n    name = m['name']\n    value = m['value']\n    return name\n"
    repair = line_repair(code, 1)
    copied = "    (s, e) = m.span(0)\n    name = m['name']\n    value = m['value']\n    name = m['name']\n"
    assert repair.answer(copied) == "```python\n" + code.replace("m.span()", "m.span(0)") + "```"
    added = "    (s, e) = m.span(0)\n    s += 1\n    name = m['name']\n"
    assert "    s += 1\n    name = m['name']\n    value" in repair.answer(added)
    last = line_repair("def f(a):\n    return a\n", 1)  # the function's last line: nothing after it to copy
    assert last.answer("    return a + 1\n```") == "```python\ndef f(a):\n    return a + 1\n```"
