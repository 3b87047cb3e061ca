"""Tool calls in an answer, parsed strictly: Qwen2.5's native ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

A call counts only when it is complete (closed), valid JSON, an object with a declared tool's ``name`` and an
``arguments`` object (a JSON string holding one is accepted, as Qwen sometimes writes it) that matches that tool's
JSON schema (required properties present, types right, no undeclared properties). Anything else is text, and the
reason is kept (``errors``), so a certification run can count schema errors. Markup inside a fenced code block is
an example in the answer, not a call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["ParsedAnswer", "ToolCall", "parse_tool_calls", "schemas_of"]

_CALL = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```.*?(```|$)", re.DOTALL)
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                       "boolean": (bool,), "object": (dict,), "array": (list,)}


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    arguments: dict[str, Any]


class ParsedAnswer(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    """The answer without its tool calls."""
    calls: tuple[ToolCall, ...] = ()
    errors: tuple[str, ...] = ()
    """Why each rejected ``<tool_call>`` was not a call."""


def schemas_of(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """name -> parameters schema, from tool definitions (``{"name", "parameters"}`` or OpenAI's
    ``{"type": "function", "function": {...}}``)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        spec = tool.get("function", tool)
        out[str(spec["name"])] = dict(spec.get("parameters") or {})
    return out


def _schema_errors(arguments: dict[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    errors = [f"missing required argument {name!r}" for name in schema.get("required") or ()
              if name not in arguments]
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            errors.append(f"undeclared argument {name!r}")
            continue
        wanted = _TYPES.get(str(spec.get("type", "")))
        if wanted and (not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted)):
            errors.append(f"argument {name!r} should be {spec.get('type')}, got {type(value).__name__}")
    return errors


def _one(body: str, closed: bool, schemas: Mapping[str, Mapping[str, Any]]) -> tuple[ToolCall | None, str | None]:
    if not closed:
        return None, "unclosed <tool_call> (the answer was cut or malformed)"
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg}"
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None, "not an object with a string 'name'"
    name, arguments = data["name"], data.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None, f"{name}: 'arguments' is a string that is not JSON"
    if not isinstance(arguments, dict):
        return None, f"{name}: 'arguments' is not an object"
    if name not in schemas:
        return None, f"unknown tool {name!r}"
    problems = _schema_errors(arguments, schemas[name])
    if problems:
        return None, f"{name}: " + "; ".join(problems)
    return ToolCall(name=name, arguments=arguments), None


def parse_tool_calls(answer: str, schemas: Mapping[str, Mapping[str, Any]]) -> ParsedAnswer:
    """The answer's valid tool calls (in order), its text without them, and why the rest were rejected."""
    fences = [m.span() for m in _FENCED.finditer(answer)]
    calls: list[ToolCall] = []
    errors: list[str] = []
    kept: list[str] = []
    last = 0
    for match in _CALL.finditer(answer):
        if any(start <= match.start() < end for start, end in fences):
            continue  # an example inside a code block
        call, error = _one(match.group(1).strip(), bool(match.group(2)), schemas)
        kept.append(answer[last:match.start()])
        last = match.end()
        if call is not None:
            calls.append(call)
        else:
            errors.append(error or "invalid")
    kept.append(answer[last:])
    return ParsedAnswer(text="".join(kept).strip(), calls=tuple(calls), errors=tuple(errors))
