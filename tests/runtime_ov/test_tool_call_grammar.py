"""Tool calls under their schemas (``GenerateRequest.tool_calls``, OpenVINO's triggered tags) on the real
Qwen2.5-Coder-0.5B in its own engine process: a prompt that makes the model copy a call with wrong arguments is
answered with a wrong call unconstrained and with a valid one, ending there, under the node's tool-call grammar;
an answer that writes no trigger is untouched."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest

from contenox.answer.toolcalls import parse_tool_calls
from contenox.node.agent import tool_call_grammar, tool_schemas
from contenox.planner.prompts import declared_parameters
from contenox.runtime_ov import EngineLike, EngineOptions, GenerateRequest, InstalledModel, start_engine

pytestmark = pytest.mark.slow

SHOT = '```json\n{"name": "read_file", "arguments": {"file": "a.py", "mode": "r"}}\n```\n'


@pytest.fixture(scope="module")
def engine(fim_model: InstalledModel) -> Iterator[EngineLike]:
    eng = start_engine(fim_model, EngineOptions(cache_size_gb=0.2, max_new_tokens=48), process=True)
    yield eng
    eng.close()


def test_the_grammar_names_declared_tools_only() -> None:
    grammar = tool_call_grammar()
    assert grammar is tool_call_grammar()  # built once per tool set
    for name in tool_schemas():
        assert any(t.endswith(f'"name": "{name}"') for t in grammar.triggers)
    assert all('"name": "' in t for t in grammar.triggers)  # never a bare fence: a JSON example stays free
    assert all(any(tag.begin.startswith(t) for t in grammar.triggers) for tag in grammar.tags)


def test_a_call_s_arguments_may_come_in_any_order_and_its_integers_are_bounded() -> None:
    """A JSON-schema grammar keeps its schema's property order; the models write arguments in the tool's declared
    order or the prompt's sorted one, so each tool's schema is every order of its properties."""
    for tag in tool_call_grammar().tags:
        name = tag.begin.split('"name": "')[1].split('"')[0]
        declared = declared_parameters()[name]["properties"]
        schema = json.loads(tag.schema)
        branches = schema.get("anyOf", [schema])
        assert {tuple(b["properties"]) for b in branches} == set(itertools.permutations(declared))
        for branch in branches:
            assert branch["additionalProperties"] is False
            assert branch.get("required", []) == declared_parameters()[name].get("required", [])
            for spec in branch["properties"].values():
                if spec["type"] == "integer":
                    assert spec["minimum"] == 1 and spec["maximum"] < 10**7


@pytest.mark.parametrize(("question", "tool", "arguments"), [
    ("Read lines 5 to 9 of src/app.py.", "read_file", {"path": "src/app.py", "start_line": 5, "end_line": 9}),
    ("Search the workspace for TODO, at most 5 results.", "search", {"pattern": "TODO", "limit": 5})])
def test_the_grammar_keeps_every_argument_the_model_writes(engine: EngineLike, question: str, tool: str,
                                                           arguments: dict[str, object]) -> None:
    """The 0.5B writes these calls whole when free; under the grammar (lazy and required) each keeps all its
    arguments. Under the schema's one (sorted) order the grammar had cut ``end_line`` after ``start_line``."""
    text = engine.tokenizer.apply_chat_template([{"role": "user", "content": question}],
                                                tools=[{"type": "function", "function": {"name": n, "parameters": p}}
                                                       for n, p in declared_parameters().items()])
    ids = engine.tokenizer.encode(text)
    for grammar in (None, tool_call_grammar(), tool_call_grammar(required=True)):
        final = engine.generate(GenerateRequest(session_id="args", token_ids=ids, max_new_tokens=64,
                                                tool_calls=grammar), timeout=300)
        parsed = parse_tool_calls(final.text, tool_schemas())
        assert [(c.name, c.arguments) for c in parsed.calls] == [(tool, arguments)], (grammar, final.text)


def test_a_call_is_generated_under_its_tool_s_schema(engine: EngineLike) -> None:
    ids = engine.tokenizer.encode(SHOT * 6 + "And one more call, the same:\n")
    free = engine.generate(GenerateRequest(session_id="free", token_ids=ids, max_new_tokens=48), timeout=300)
    constrained = engine.generate(GenerateRequest(session_id="constrained", token_ids=ids, max_new_tokens=48,
                                                  tool_calls=tool_call_grammar()), timeout=300)
    assert free.text.startswith('```json\n{"name": "read_file"')  # the trigger, written by the model
    assert parse_tool_calls(free.text, tool_schemas()).errors  # copied: undeclared arguments
    parsed = parse_tool_calls(constrained.text, tool_schemas())
    assert parsed.errors == () and [c.name for c in parsed.calls] == ["read_file"]
    assert constrained.finish_reason == "stop" and constrained.text.rstrip().endswith("```")  # ends with the call


def test_an_answer_without_a_trigger_is_untouched(engine: EngineLike) -> None:
    text = engine.tokenizer.apply_chat_template([{"role": "user", "content": "What is a mutex? One sentence."}])
    ids = engine.tokenizer.encode(text)
    free = engine.generate(GenerateRequest(session_id="q1", token_ids=ids, max_new_tokens=32), timeout=300)
    armed = engine.generate(GenerateRequest(session_id="q2", token_ids=ids, max_new_tokens=32,
                                            tool_calls=tool_call_grammar()), timeout=300)
    assert armed.text == free.text and armed.token_ids == free.token_ids


def test_a_required_call_turns_an_answer_that_would_be_prose_into_a_call(engine: EngineLike) -> None:
    """``required`` (the check's yes): the answer that was prose under the lazy grammar is a call of a declared
    tool under its schema, and ends there."""
    text = engine.tokenizer.apply_chat_template([{"role": "user", "content": "Show me the contents of setup.py."}])
    ids = engine.tokenizer.encode(text)
    lazy = engine.generate(GenerateRequest(session_id="lazy", token_ids=ids, max_new_tokens=48,
                                           tool_calls=tool_call_grammar()), timeout=300)
    required = engine.generate(GenerateRequest(session_id="required", token_ids=ids, max_new_tokens=48,
                                               tool_calls=tool_call_grammar(required=True)), timeout=300)
    assert tool_call_grammar(required=True).required and not tool_call_grammar().required
    assert not parse_tool_calls(lazy.text, tool_schemas()).calls, lazy.text  # prose: no call begun
    parsed = parse_tool_calls(required.text, tool_schemas())
    assert parsed.errors == () and len(parsed.calls) == 1, required.text
    assert parsed.calls[0].name in tool_schemas()
    assert required.finish_reason == "stop"
