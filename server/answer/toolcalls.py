"""Tool calls in an answer, read the way llama.cpp's Hermes-2-Pro / Qwen parser reads them.

Qwen2.5's native markup is ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``; the Qwen2.5-Coder models
mostly write the same object in a fenced ```json (or ```xml) block (a fence naming no language holds an example), in a ``<tools>``, ``<function_call>``,
``<response>``, ``<json>``, ``<xml>`` or ``<tool>`` wrapper, or bare at the start of the answer. Those forms are
calls only where a call stands — the answer starts with it (after at most a short line of prose) or it is the
last thing in the answer (calls right after a call count too) — and only when the object names a declared tool:
an object naming anything else, or one inside an explanation with more text after it, is an example and stays
text. Native markup counts anywhere outside a code fence (as Qwen's template writes it).

A call counts only when it is complete, valid JSON, an object with a declared tool's ``name`` and an
``arguments`` object (a JSON string holding one is accepted, as Qwen sometimes writes it) that matches that
tool's JSON schema (required properties present, types right, no undeclared properties). A call that begins and
does not make it (cut off, not JSON, wrong arguments; native markup naming an unknown tool) is rejected with its
reason (``errors``), so a certification run can count malformed calls. :func:`streamable` tells a stream how
much of a partial answer is certainly text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["ParsedAnswer", "ToolCall", "parse_tool_calls", "schemas_of", "streamable"]

SHORT_PROSE = 200
"""At most this much text (no code fence) before a call that starts the answer."""

_TAGS = ("tool_call", "tools", "function_call", "response", "json", "xml", "tool")
_FENCES = ("```json", "```xml", "```JSON")
_HEAD = re.compile(r"(?P<fence>```(?:json|xml|JSON)[ \t]*\n\s*)?(?:<(?P<tag>" + "|".join(_TAGS) + r")>\s*)?"
                   r'(?P<obj>\{\s*"name"\s*:\s*"(?P<name>[^"\\]*)")')
_NATIVE = "<tool_call>"
_START = re.compile(r"```|<|\{|`{1,2}$")
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
    """Why each call that began was not a call (malformed)."""


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


def _check(data: Any, schemas: Mapping[str, Mapping[str, Any]]) -> tuple[ToolCall | None, str | None]:
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


@functools.cache
def _openings(names: frozenset[str]) -> tuple[str, ...]:
    """Every call opening naming a declared tool, whitespace removed (to tell a cut-off opening from text)."""
    heads = [f + (f"<{t}>" if t else "") for f in (*_FENCES, "") for t in ("", *_TAGS)]
    return tuple(f'{head}{{"name":"{name}"' for head in heads for name in sorted(names))


def _could_open(rest: str, names: frozenset[str]) -> bool:
    """``rest`` (the end of a partial answer) may still become a call opening."""
    if len(rest) > 400:  # longer than any opening with its whitespace: it would have matched already
        return False
    squeezed = "".join(rest.split())
    return bool(squeezed) and any(o.startswith(squeezed) for o in _openings(names))


class _Found(msgspec.Struct, frozen=True):
    start: int
    end: int
    call: ToolCall | None
    error: str | None


class _Scan(msgspec.Struct, frozen=True):
    found: tuple[_Found, ...]
    hold: int | None = None
    """Partial answers: where text stops being certain (None: all of it is)."""
    begun: bool = False
    """Partial answers: a call begins at ``hold``."""


def _fence_end(text: str, at: int) -> int:
    """The end of the code fence opened at ``at`` (the end of the text if it is not closed)."""
    line = text.find("\n", at)
    if line < 0:
        return len(text)
    close = text.find("```", line)
    return len(text) if close < 0 else close + 3


def _closing(text: str, at: int, tag: str | None, fence: bool) -> int | None:
    """Past the wrapper's closing markup after the object ending at ``at``; None: the text ends before it."""
    for closer, wanted in ((f"</{tag}>", tag is not None), ("```", fence)):
        if not wanted:
            continue
        skipped = len(text) - len(text[at:].lstrip())
        if skipped == len(text):
            return None
        if text.startswith(closer, skipped):
            at = skipped + len(closer)
        elif closer.startswith(text[skipped:]):
            return None
    return at


def _scan(text: str, schemas: Mapping[str, Mapping[str, Any]], *, final: bool) -> _Scan:
    names = frozenset(schemas)
    found: list[_Found] = []
    chain = -1  # the end of the last call: a call right after it stands where a call stands
    pos = 0
    while (match := _START.search(text, pos)) is not None:
        p = match.start()
        before = text[:p]
        chained = chain >= 0 and not text[chain:p].strip()
        if text.startswith(_NATIVE, p):
            close = text.find("</tool_call>", p)
            if close < 0 and not final:
                return _Scan(tuple(found), p, begun=True)
            if close < 0:
                found.append(_Found(p, len(text), None, "unclosed <tool_call> (the answer was cut or malformed)"))
                break
            try:
                call, error = _check(json.loads(text[p + len(_NATIVE):close]), schemas)
            except json.JSONDecodeError as exc:
                call, error = None, f"not JSON: {exc.msg}"
            found.append(_Found(p, close + len("</tool_call>"), call, error))
            pos = chain = close + len("</tool_call>")
            continue
        head = _HEAD.match(text, p)
        bare = text[p] == "{"
        if bare and before.strip():  # a bare object counts only at the start
            pos = p + 1
            continue
        if head is None or head.group("name") not in names:
            if not final and _could_open(text[p:], names):
                return _Scan(tuple(found), p)
            pos = _fence_end(text, p) if text.startswith("```", p) else p + 1
            continue
        starts = chained or bare or (len(before.strip()) <= SHORT_PROSE and "```" not in before)
        end: int | None
        try:
            data, end = json.JSONDecoder().raw_decode(text, head.start("obj"))
        except json.JSONDecodeError as exc:
            if not final:
                return _Scan(tuple(found), p, begun=starts)
            end = None
            call, error = None, f"{head.group('name')}: not JSON: {exc.msg}"
        else:
            call, error = _check(data, schemas)
            end = _closing(text, end, head.group("tag"), bool(head.group("fence")))
            if end is None and not final:
                return _Scan(tuple(found), p, begun=starts)
        if end is None:  # cut off, or not JSON: it runs to its closing fence or the end of the answer
            end = _fence_end(text, p) if head.group("fence") else len(text)
        last = not text[end:].strip()
        if starts or last:
            found.append(_Found(p, end, call, error))
            pos = chain = end
            continue
        if not final and not text[end:].strip():
            return _Scan(tuple(found), p)
        pos = end  # an example inside an explanation
    return _Scan(tuple(found))


def parse_tool_calls(answer: str, schemas: Mapping[str, Mapping[str, Any]]) -> ParsedAnswer:
    """The answer's valid tool calls (in order), its text without them, and why the rest were rejected."""
    scan = _scan(answer, schemas, final=True)
    kept: list[str] = []
    last = 0
    for item in scan.found:
        kept.append(answer[last:item.start])
        last = item.end
    kept.append(answer[last:])
    return ParsedAnswer(text="".join(kept).strip(), calls=tuple(f.call for f in scan.found if f.call is not None),
                        errors=tuple(f.error or "invalid" for f in scan.found if f.call is None))


def streamable(text: str, schemas: Mapping[str, Mapping[str, Any]], *, final: bool = False) -> tuple[int, bool]:
    """How much of ``text`` (an answer so far; all of it when ``final``) is certainly answer text, and whether a
    call begins right after that."""
    scan = _scan(text, schemas, final=final)
    if scan.found:
        return scan.found[0].start, True
    if scan.hold is not None:
        return scan.hold, scan.begun
    return len(text), False
