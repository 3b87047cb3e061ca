"""Pieces of an agent turn (a certified model calling tools): the stream filter that keeps tool-call markup
out of the answer text, and one step's calls run and reported.

The loop itself is :meth:`contenox.node.Node._agent_steps`: after each answer the parser
(:mod:`contenox.answer.toolcalls`) reads its calls; each is run here, reported as a
:class:`~contenox.node.contract.ToolActivity` (started, then completed or failed) and its result is framed as the
template frames a tool message; the step (the answer with its calls, and the results) is appended to the turn,
so the next step's prefill is only the results.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.answer.edits import ProposedEdit
from contenox.answer.toolcalls import ParsedAnswer, ToolCall, schemas_of, streamable
from contenox.node.command_guard import refusal
from contenox.node.contract import CommandHost, ToolActivity, TurnEvent
from contenox.node.tools import ToolResult, cut, kind_of, run_tool
from contenox.planner.journal import ToolStep
from contenox.planner.prompts import declared_parameters, load_prompts, tool_definitions
from contenox.workspace import Workspace

if TYPE_CHECKING:
    from contenox.node.verifying import ScratchCommands
    from contenox.runtime_ov import ToolCallGrammar

__all__ = ["ANSWER_GRAMMAR", "CallMarkupFilter", "call_shaped", "edit_call_rest", "edit_window", "run_step",
           "tool_call_grammar", "tool_policy_digest", "tool_schemas"]

_CALL_FORMS = (  # (opening up to the name, between the name and the arguments, closing), as the models space them
    ('<tool_call>\n{{"name": "{}"', ', "arguments": ', "}\n</tool_call>"),  # the chat template's own
    ('```json\n{{"name": "{}"', ', "arguments": ', "}\n```"),
    ('```json\n{{\n  "name": "{}"', ',\n  "arguments": ', "\n}\n```"),  # pretty-printed, as Qwen2.5-Coder does
    ('```json\n{{\n    "name": "{}"', ',\n    "arguments": ', "\n}\n```"),
)


@functools.cache
def tool_schemas() -> dict[str, dict[str, Any]]:
    """name -> parameters schema of the node's tools (what the parser checks calls against)."""
    return schemas_of([d["function"] for d in tool_definitions(load_prompts())])


_LARGEST_INTEGER = 999_999
"""Every integer argument of the node's tools is a line number or a count: the grammar bounds it (1 to this), so a
call cannot run away in digits (the 1.5B's required ``read_file`` wrote a 64-digit ``start_line`` to the token
limit when it could not write the ``end_line`` it wanted next)."""


def _call_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's arguments as the grammar generates them: none undeclared, integers bounded, and the properties in
    any order. A JSON-schema grammar keeps its schema's order, and the models write arguments in either the
    order the tool was written in (the 1.5B: ``path, start_line, end_line``; ``pattern, limit``) or the prompt's
    sorted order (the 0.5B: ``limit, pattern``): under one order the 1.5B could not write ``end_line`` after
    ``start_line``, nor ``limit`` after ``pattern``. So the schema is an ``anyOf`` of every order (at most three
    properties: six)."""
    properties = {name: ({"minimum": 1, "maximum": _LARGEST_INTEGER, **spec} if spec.get("type") == "integer"
                         else dict(spec))
                  for name, spec in (parameters.get("properties") or {}).items()}
    orders = list(itertools.permutations(properties)) if len(properties) <= 3 else [tuple(properties)]
    branches = [{**parameters, "properties": {name: properties[name] for name in order}, "additionalProperties": False}
                for order in orders]
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


@functools.cache
def tool_call_grammar(required: bool = False) -> ToolCallGrammar:
    """The constraint on the node's tool calls: each trigger is a call opening that names a declared tool (never a
    bare fence, which would force a JSON example into a call); the rest of that call is generated under the
    tool's argument schema (no undeclared arguments) and the answer ends after it. ``required``: the answer must
    make a call (a turn's first step when the tool check said it needs a tool)."""
    from contenox.runtime_ov import CallTag, ToolCallGrammar

    triggers: list[str] = []
    tags: list[CallTag] = []
    for name, schema in declared_parameters().items():
        closed = msgspec.json.encode(_call_schema(schema)).decode()
        for opening, middle, closing in _CALL_FORMS:
            trigger = opening.format(name)
            triggers.append(trigger)
            tags.append(CallTag(begin=trigger + middle, schema=closed, end=closing))
    return ToolCallGrammar(triggers=tuple(triggers), tags=tuple(tags), required=required)


def edit_call_rest(answer: str, files: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """For an answer holding a ``propose_edit`` call: the answer up to the call's opening (the opening included),
    and the grammar of the rest of the call in that form, its diff held to ``files``' lines
    (:func:`~contenox.verify.grammar.diff_call_grammar`). None: no call opening of a known form."""
    from contenox.verify.grammar import diff_call_grammar

    found = [(at, opening.format("propose_edit"), middle, closing) for opening, middle, closing in _CALL_FORMS
             if (at := answer.find(opening.format("propose_edit"))) >= 0]
    if not found:
        return None
    at, opening, middle, closing = min(found)
    return answer[:at + len(opening)], diff_call_grammar(files, middle, closing)


_WHOLE_FILE_LINES = 300
"""A file up to this many lines offers all its lines to a redrawn edit; a longer one, a window of them (a grammar
of a file's lines compiles per file, in time growing faster than it: 0.15 s for 100 lines, 0.35 s for 200,
1.2 s for 400 here)."""
_WINDOW_LINES = 80
"""Lines either side of where the model's own diff points to."""
_NUMBERED = re.compile(r"^\s*\d+ {1,2}")
"""A line number copied from a ``read_file`` result (the 1.5B's diffs carry them)."""


def edit_window(text: str, diff: str, seen: tuple[int, int] | None = None) -> str:
    """The lines of ``text`` (a file the model's ``diff`` did not apply to) its redrawn edit may use: all of a
    short file; of a longer one, the window around the lines the model's diff meant (its context and removed
    lines, compared without indentation or copied line numbers), else the part of the file it read (``seen``:
    first, last line), else its first lines."""
    lines = text.splitlines()
    if len(lines) <= _WHOLE_FILE_LINES:
        return text
    meant = {_NUMBERED.sub("", line[1:]).strip() for line in diff.splitlines()
             if line[:1] in (" ", "-") and not line.startswith("---")}
    meant.discard("")
    hits = [i for i, line in enumerate(lines) if line.strip() in meant]
    if hits:
        centre = sorted(hits)[len(hits) // 2]
        first, last = max(0, centre - _WINDOW_LINES), centre + _WINDOW_LINES
    elif seen is not None:
        first, last = seen[0] - 1, min(seen[1], seen[0] - 1 + 2 * _WINDOW_LINES)
    else:
        first, last = 0, _WHOLE_FILE_LINES
    return "\n".join(lines[first:last]) + "\n"


@functools.cache
def tool_policy_digest() -> str:
    """What a tool-enabled turn shows and constrains the model with: the prompts (the system and tool-policy
    texts, the tool definitions, the tool check's questions), the check's and the text-only grammars, the
    requests refused before any model is asked, and the call grammar (the forms it triggers on, each tool's
    argument schema as generated). A certification records it: one made under other texts or grammars no longer
    says how the model behaves here."""
    import hashlib

    from contenox.planner import toolcheck

    parts = [msgspec.json.encode(load_prompts(), order="sorted"), toolcheck.GRAMMAR.encode(),
             toolcheck.KIND_GRAMMAR.encode(), toolcheck.TEXT_ONLY_GRAMMAR.encode(),
             msgspec.json.encode([[pattern.pattern, what] for pattern, what in toolcheck.REFUSED]),
             msgspec.json.encode([[tag.begin, tag.schema, tag.end] for tag in tool_call_grammar().tags])]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


class CallMarkupFilter:
    """The answer text to stream: everything before its first tool call, in any form the parser reads
    (:func:`~contenox.answer.toolcalls.streamable`). Text that could be the start of a call is held back until
    it is clearly not (a code block that is no call, a JSON example with text after it); from a call on, the
    step's text is not streamed (its calls are shown as tool activity instead)."""

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]] | None = None, *, after_tools: bool = False) -> None:
        self._schemas = tool_schemas() if schemas is None else schemas
        self._text = ""
        self.in_call = False
        self.shown = ""
        """Everything streamed so far."""
        self.after_tools = after_tools
        """An answer after tool results: one that opens with an object or a code block is held back whole until
        it ends (it may be a call of no declared tool, which the loop answers again: :func:`call_shaped`)."""
        self.held = False

    def feed(self, text: str) -> str:
        self._text += text
        if self.after_tools and not self.shown:
            lead = self._text.lstrip()
            if not lead or lead[0] in "{[`":
                self.held = self.held or bool(lead)
                return ""
        return "" if self.in_call else self._release(final=False)

    def _release(self, *, final: bool) -> str:
        certain, self.in_call = streamable(self._text, self._schemas, final=final)
        out = self._text[len(self.shown):certain] if certain > len(self.shown) else ""
        self.shown += out
        return out

    def flush(self) -> str:
        """What is still held back at the end of an answer, unless it holds a call (or, after tool results,
        opened with an object or a code block: the loop decides)."""
        return "" if self.in_call or self.held else self._release(final=True)

    def rest(self, answer: str) -> str:
        """The part of a final answer (one with no call after all) that was held back from the stream."""
        held = self.in_call or self.held
        return answer[len(self.shown):] if held and answer.startswith(self.shown) else ""


_CALL_SHAPED = re.compile(r'\A\s*(?:```[\w-]*\s*)?[\[{]\s*\{?\s*"name"\s*:\s*"(?P<name>[^"]*)"\s*,\s*"(?:arguments|parameters)"')

ANSWER_GRAMMAR = "\n".join([
    "root ::= first rest",
    'first ::= [^`{\\[ \\n]',
    "rest ::= [^\\x00]*",
])
"""An agent turn's answer in text after its tool results: it may not open with an object, a list, a blank or a code
block (where the 1.5B writes a call of a tool that does not exist). Not part of the certified tool policy: the
certification asks for first answers only."""


def call_shaped(answer: str) -> str | None:
    """The tool name, when ``answer`` opens with what looks like a tool call (``{"name": ..., "arguments": ...}``,
    bare or fenced in any language), though the parser may read none: a call of no declared tool, or one in a
    form it does not read; else None."""
    match = _CALL_SHAPED.match(answer)
    return match.group("name") if match else None


Emit = Callable[[TurnEvent], Awaitable[None]]


async def run_step(parsed: ParsedAnswer, answer: str, workspace: Workspace, root: Path, *, step: int,
                   frame_result: Callable[[str], str], max_chars: int, emit: Emit,
                   edits: list[ProposedEdit], commands: CommandHost | None = None,
                   scratch: ScratchCommands | None = None, checked: Mapping[int, ToolResult] | None = None
                   ) -> ToolStep:
    """Run one step's calls in order (off the event loop; a command through ``commands``, the client's
    terminal, or once the turn has proposed an edit, through ``scratch``: in the scratch copy with the edits
    applied), reporting each; rejected calls come back to the model as errors. A proposed edit joins ``edits``
    (the client offers it for review after the turn), one per file: a second edit of a file builds on the first
    or replaces it (:func:`~contenox.node.tools.run_tool`). ``checked``: results already had, by the call's index
    (an edit the node tried before deciding not to draw it again is not tried twice)."""
    results: list[str] = []
    for index, call in enumerate(parsed.calls):
        call_id = f"step{step}-{index}"
        said = ", ".join(f"{key}={value!r}" for key, value in call.arguments.items())
        started = ToolActivity(id=call_id, name=call.name, kind=kind_of(call.name), title=f"{call.name}({said})"[:120],
                               status="in_progress")
        await emit(TurnEvent(kind="tool", tool=started))
        if call.name == "run_command":
            result = await _run_command(call, commands, call_id, root, max_chars, scratch=scratch, edits=edits)
        elif checked and index in checked:
            result = checked[index]
        else:
            result = await asyncio.to_thread(run_tool, call, workspace, max_chars=max_chars,
                                             pending={edit.path: edit for edit in edits})
        edit_index = None
        if result.edit is not None:  # one edit per file: a later one of the same file (built on it) takes its place
            edit_index = next((i for i, edit in enumerate(edits) if edit.path == result.edit.path), len(edits))
            edits[edit_index:edit_index + 1] = [result.edit]
        locations = tuple((str(root / path) if path != "." else str(root), line) for path, line in result.locations)
        await emit(TurnEvent(kind="tool", tool=msgspec.structs.replace(
            started, kind=result.kind, title=result.title, status="completed" if result.ok else "failed",
            locations=locations, output=result.text, edit_index=edit_index)))
        results.append(result.text)
    results += [f"error: a tool call was not valid and was not run: {why}" for why in parsed.errors]
    return ToolStep(call=answer.strip(), result="\n".join(frame_result(text) for text in results))


async def _run_command(call: ToolCall, commands: CommandHost | None, call_id: str, root: Path,
                       max_chars: int, *, scratch: ScratchCommands | None = None,
                       edits: list[ProposedEdit] | None = None) -> ToolResult:
    command = str(call.arguments["command"]).strip()
    title = f"Run {command}"[:120]
    why = refusal(command)
    if why:  # never put to the user: the model answers in text instead
        return ToolResult(name=call.name, kind="execute", title=f"{title} (refused)"[:120], ok=False,
                          text=f"error: refused, not run and not offered to the user: {why}. Do not call "
                               "run_command for it; answer in text: say you will not run it and why")
    if not command:
        return ToolResult(name=call.name, kind="execute", title="Run (nothing)", ok=False,
                          text="error: an empty command")
    if edits and scratch is not None:  # test the proposed change, not the files as they are
        title = f"Run {command} in a scratch copy with the proposed edits"[:120]
        done = await scratch.run(command, edits)
    elif commands is None:
        return ToolResult(name=call.name, kind="execute", title=title, ok=False,
                          text="error: this client cannot run commands (it offers no terminal); tell the user "
                               "the command to run instead")
    else:
        done = await commands.run_command(call_id, command, str(root))
    if not done.ran:
        return ToolResult(name=call.name, kind="execute", title=title, ok=False,
                          text=cut(f"error: not run: {done.reason}\n{done.output}".rstrip(), max_chars))
    return ToolResult(name=call.name, kind="execute", title=f"{title} (exit code {done.exit_code})"[:120],
                      ok=done.exit_code == 0, text=cut(f"$ {command}\nexit code {done.exit_code}\n{done.output}",
                                                        max_chars))
