"""The verified-fix grammars on the real engine (OpenVINO GenAI structured output, the test model): every answer
drawn under them has their shape, whatever the model would have written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from contenox.runtime_ov import EngineOptions, GenerateRequest, InstalledModel, Sampling, start_engine
from contenox.runtime_ov.remote import EngineLike
from contenox.verify import (
    LineRepair,
    diff_call_grammar,
    edit_block_grammar,
    edit_blocks_grammar,
    function_grammar,
    line_repair,
    number_grammar,
    rename_grammar,
)

pytestmark = pytest.mark.slow

SOURCE = "def helper(x):\n    y = x - 1\n    return y\n\n\ndef other():\n    return 0\n"


@pytest.fixture(scope="module")
def engine(default_model: InstalledModel) -> Iterator[EngineLike]:
    eng = start_engine(default_model, EngineOptions(cache_size_gb=0.1, max_new_tokens=48), process=False)
    yield eng
    eng.close()


def _ids(engine: EngineLike) -> list[int]:
    text = engine.tokenizer.apply_chat_template([
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": f"util.py:\n```python\n{SOURCE}```\nhelper(1) should be 2. Fix helper."}])
    return list(engine.tokenizer.encode(text))


def _draw_line(engine: EngineLike, repair: LineRepair, max_new_tokens: int, sampling: Sampling | None) -> Any:
    """A line-level repair drawn by the engine: the prompt, the answer begun, the line's grammar."""
    return engine.submit(GenerateRequest(
        session_id="g", token_ids=[*_ids(engine), *engine.tokenizer.encode(repair.begun)],
        max_new_tokens=max_new_tokens, grammar=repair.grammar, sampling=sampling)).wait(300)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_function_grammar_answer_is_a_rewrite_of_that_function(engine: EngineLike, seed: int) -> None:
    final = engine.submit(GenerateRequest(session_id="g", token_ids=_ids(engine), max_new_tokens=48,
                                          sampling=Sampling(temperature=0.8, top_p=0.95, seed=seed),
                                          grammar=function_grammar("def helper(x):"))).wait(300)
    assert final.text.startswith("```python\ndef helper(x):\n")
    body = final.text.split("\n")[2:]
    assert all(not line.startswith("`") for line in body[:-1])  # only the closing fence starts with a backtick
    assert final.finish_reason == "length" or final.text.rstrip().endswith("```")


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_a_changed_line_answer_keeps_every_other_line_and_changes_the_picked_one(engine: EngineLike,
                                                                                seed: int | None) -> None:
    """The line-level repair on the real engine (greedy and sampled): the answer begun with the lines before the
    picked one (prefilled), the picked line drawn changed (a copy of it is no answer), at most two lines added
    after it, then the next line as it is, where the draw ends."""
    function = "def helper(x):\n    y = x - 1\n    z = y\n    return z\n"
    repair = line_repair(function, 1)
    final = _draw_line(engine, repair, 48, None if seed is None else Sampling(temperature=0.8, top_p=0.95, seed=seed))
    drawn = final.text.splitlines()
    assert drawn[0].startswith("    "), final.text
    assert drawn[0].strip() != "y = x - 1" and drawn[0].strip() and not drawn[0].strip().startswith("#")
    if final.finish_reason == "length":  # the test model may run on within a line: the token cap ends it
        return
    assert final.text.endswith("    z = y\n") and 2 <= len(drawn) <= 4, final.text  # ended by the next line
    whole = repair.answer(final.text)
    assert whole.startswith("```python\ndef helper(x):\n") and whole.endswith("    z = y\n    return z\n```")


def test_a_number_grammar_answer_is_one_of_the_numbers(engine: EngineLike) -> None:
    final = engine.submit(GenerateRequest(session_id="g", token_ids=_ids(engine), max_new_tokens=8,
                                          grammar=number_grammar([12, 2, 3]))).wait(300)
    assert final.text in {"12", "2", "3"}, final.text


def test_an_edit_block_grammar_answer_searches_real_lines(engine: EngineLike) -> None:
    final = engine.submit(GenerateRequest(session_id="g", token_ids=_ids(engine), max_new_tokens=48,
                                          sampling=Sampling(temperature=0.8, top_p=0.95, seed=3),
                                          grammar=edit_block_grammar("util.py", SOURCE))).wait(300)
    assert final.text.startswith("util.py\n<<<<<<< SEARCH\n")
    search = re.split(r"\n=======\n", final.text.split("<<<<<<< SEARCH\n", 1)[1])[0]
    if final.finish_reason != "length" or "=======" in final.text:
        assert search in SOURCE  # consecutive lines of the file


def test_an_edit_step_grammar_answer_is_blocks_on_the_given_files_and_their_real_lines(engine: EngineLike) -> None:
    """A change turn's edit step: blocks on any of its files, each searching a run of that file's lines; a file
    of 400 lines and two more compile on the engine (a chain of 1,100 lines once crashed the compiler)."""
    big = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(134))  # 402 lines
    files = [("util.py", SOURCE), ("big.py", big), ("other.py", "VALUE = 1\n")]
    final = engine.submit(GenerateRequest(session_id="g", token_ids=_ids(engine), max_new_tokens=48,
                                          sampling=Sampling(temperature=0.8, top_p=0.95, seed=5),
                                          grammar=edit_blocks_grammar(files))).wait(300)
    path, _, rest = final.text.partition("\n<<<<<<< SEARCH\n")
    assert path in {"util.py", "big.py", "other.py"} and rest, final.text
    if final.finish_reason != "length" or "=======" in rest:
        assert rest.split("=======\n")[0] in dict(files)[path]  # consecutive lines of that file


def test_a_rename_step_writes_new_names_alone(engine: EngineLike) -> None:
    """A rename question's edit step, its first block written in up to the name: a new name, the rest of the line
    as it was, then at most the other renamed definition's block, written the same way."""
    opened = "util.py\n<<<<<<< SEARCH\ndef helper(x):\n=======\ndef"
    other = "util.py\n<<<<<<< SEARCH\ndef other():\n=======\ndef"
    ids = [*_ids(engine), *engine.tokenizer.encode(opened)]
    final = engine.submit(GenerateRequest(session_id="g", token_ids=ids, max_new_tokens=40,
                                          sampling=Sampling(temperature=0.8, top_p=0.95, seed=7),
                                          grammar=rename_grammar(" ", "(x):", [(other, " ", "():")]))).wait(300)
    pattern = (r" [A-Za-z_$][\w$]*\(x\):\n>>>>>>> REPLACE\n(\n?" + re.escape(other)
               + r" [A-Za-z_$][\w$]*\(\):\n>>>>>>> REPLACE\n)?")
    if final.finish_reason != "length":
        assert re.fullmatch(pattern, final.text), final.text
    else:  # the test model, sampled, may run on in a name to the token limit
        assert re.match(r" [A-Za-z_$]", final.text), final.text


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_an_answer_after_tool_results_opens_with_neither_an_object_nor_a_code_block(engine: EngineLike,
                                                                                   seed: int) -> None:
    """The agent loop's answer in text (contenox.node.agent.ANSWER_GRAMMAR), asked for with a prompt that invites
    a fenced JSON object: the grammar compiles on the engine and no answer opens with one."""
    from contenox.node.agent import ANSWER_GRAMMAR

    text = engine.tokenizer.apply_chat_template([
        {"role": "user", "content": 'Reply with only this JSON in a code block: {"name": "x", "arguments": {}}'}])
    final = engine.submit(GenerateRequest(session_id="g", token_ids=list(engine.tokenizer.encode(text)),
                                          max_new_tokens=16, sampling=Sampling(temperature=0.8, top_p=0.95, seed=seed),
                                          grammar=ANSWER_GRAMMAR)).wait(300)
    assert final.text and final.text[0] not in "`{[ \n", final.text


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_a_redrawn_propose_edit_call_edits_real_lines_and_changes_something(engine: EngineLike, seed: int) -> None:
    """The rest of a ``propose_edit`` call after its opening (contenox.node.Node._redraw_edit), sampled from the
    test model under the grammar: whatever it writes is a call the parser reads, whose diff's context and
    removed lines are lines of the file and which changes something (or, cut at the token limit, a prefix of one)."""
    import json

    from contenox.answer.toolcalls import parse_tool_calls
    from contenox.node.agent import tool_schemas

    head = '<tool_call>\n{"name": "propose_edit"'
    grammar = diff_call_grammar([("util.py", SOURCE)], ', "arguments": ', "}\n</tool_call>")
    final = engine.submit(GenerateRequest(session_id="g", token_ids=_ids(engine) + engine.tokenizer.encode(head),
                                          max_new_tokens=160, sampling=Sampling(temperature=0.8, top_p=0.95, seed=seed),
                                          grammar=grammar)).wait(300)
    text = head + final.text
    assert final.text.startswith(', "arguments": {'), final.text
    if final.finish_reason == "length":
        return  # cut: what it wrote is the grammar's prefix (the shape is checked on the complete ones)
    [parsed] = parse_tool_calls(text, tool_schemas()).calls
    diff = str(parsed.arguments["diff"])
    if parsed.arguments["path"] != "util.py":  # the other choice: a new file, added lines only
        assert all(line[:1] in "+@-" for line in diff.splitlines()), diff
        return
    body = [line for line in diff.splitlines() if not line.startswith(("--- ", "+++ ", "diff --git", "@@"))]
    assert any(line[:1] in "+-" for line in body), diff  # a change
    for line in body:
        if line[:1] in (" ", "-"):
            assert line[1:] in SOURCE.splitlines(), (line, diff)
        else:
            assert line == "" or line.startswith("+"), (line, diff)
    json.dumps(parsed.arguments)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_line_written_whole_goes_on_only_as_python_that_parses(engine: EngineLike, seed: int) -> None:
    """The picked line written as it is, then what the grammar lets follow it (drawn by the real engine, sampled):
    the function with that line in place still parses, whatever the test model would have written after it (a
    marker such as ``  <== Corrected line`` does not)."""
    function = "def helper(x):\n    y = x - 1\n    z = y\n    return z\n"
    rules = line_repair(function, 1).grammar.splitlines()
    grammar = "\n".join(['root ::= "    y = x - 1" appended "\\n"', *rules[1:]])
    final = engine.submit(GenerateRequest(
        session_id="g", token_ids=_ids(engine), max_new_tokens=40, grammar=grammar,
        sampling=Sampling(temperature=1.0, top_p=1.0, seed=seed))).wait(300)
    if final.finish_reason == "length":  # still inside an operand when the cap came: nothing to parse yet
        return
    line = final.text.rstrip("\n")
    assert line.startswith("    y = x - 1") and line != "    y = x - 1", final.text
    compile(function.replace("    y = x - 1\n", line + "\n"), "util.py", "exec")


@pytest.mark.parametrize("seed", [None, 2, 3, 4, 7])
def test_a_changed_block_opening_line_still_opens_its_block(engine: EngineLike, seed: int | None) -> None:
    """A picked ``while ...:`` line drawn changed by the real engine still ends with its colon (a comment may
    follow), so the block under it stays a block."""
    function = "def helper(x):\n    while x > 1:\n        x -= 1\n    return x\n"
    final = _draw_line(engine, line_repair(function, 1), 96,
                       None if seed is None else Sampling(temperature=1.0, top_p=1.0, seed=seed))
    if final.finish_reason == "length":
        return
    line = final.text.splitlines()[0]
    assert "#" not in line.split(":")[0], final.text  # not a colon inside a comment
    assert line != "    while x > 1:" and line.split("  # ")[0].endswith(":"), final.text
