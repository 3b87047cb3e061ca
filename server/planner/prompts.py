"""The fixed prompt texts (package data under ``prompts/``): system prompt, tool schemas, chain policy.

Loaded with importlib.resources; the tool schemas are re-serialised canonically (sorted keys, no
spaces) so the tools segment is byte-identical whatever the file's formatting.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import msgspec

__all__ = ["PromptTexts", "declared_parameters", "edit_step_request", "explain_request", "load_prompts",
           "rename_step_request", "tool_definitions"]


class PromptTexts(msgspec.Struct, frozen=True, kw_only=True):
    system: str
    tools: str
    """Canonical JSON of the tool schemas, one tool per line."""
    policy: str
    answer: str = ""
    """The answer format, restated after each question (small models follow the last instruction best)."""
    tool_policy: str = ""
    """When to call a tool and when to answer in text; in the system message of turns that advertise tools, just
    before the template's tool block (where a system message's own text stands), as ``contenox certify`` renders it."""
    tool_check: str = ""
    """The tool check's own prompt (:mod:`contenox.planner.toolcheck`): its instruction, ``---``, then examples
    ``request => yes|no``."""
    text_only: str = ""
    """Restated after the question of a tool-enabled turn whose tool check answered no."""
    tool_kind: str = ""
    """The tool check's second question (:mod:`contenox.planner.toolcheck`): its instruction, ``---``, then examples
    ``request => repo|code|text``."""


def tool_definitions(prompts: PromptTexts) -> list[dict[str, Any]]:
    """The tool schemas as chat templates take them (OpenAI style: ``{"type": "function", "function": ...}``)."""
    return [{"type": "function", "function": msgspec.json.decode(line)} for line in prompts.tools.splitlines()]


def declared_parameters() -> dict[str, dict[str, Any]]:
    """name -> parameters schema of each tool as ``tools.json`` declares it: the properties in the order written
    there (the order the models write arguments in), where the prompt's text sorts every key. A grammar that
    generates a call follows this order (a JSON-schema grammar keeps its properties' order)."""
    tools = msgspec.json.decode(_read("tools.json").encode())
    return {str(tool["name"]): dict(tool.get("parameters") or {}) for tool in tools}


def edit_step_request() -> str:
    """The request of a change turn's edit step (its answer wrote no edit block): the change as edit blocks. Not a
    part of :class:`PromptTexts`, which a tool-policy certification digests: no tool-enabled turn shows it first."""
    return _read("edit_step.md").strip()


def explain_request() -> str:
    """The answer format restated after a question that only asks how code works or where it is (the planner's
    :func:`~contenox.answer.questions.explains_only`), in place of :attr:`PromptTexts.answer`: the steps the code
    goes through, by name, and no edit block. Not a part of :class:`PromptTexts` (as :func:`edit_step_request`):
    turns that advertise tools keep the certified texts."""
    return _read("explain.md").strip()


def rename_step_request() -> str:
    """The request of a rename question's edit step: each renamed definition's first line, renamed (every use
    follows). Not a part of :class:`PromptTexts`, as :func:`edit_step_request`."""
    return _read("rename_step.md").strip()


def _read(name: str) -> str:
    return resources.files("contenox.planner").joinpath("prompts", name).read_text(encoding="utf-8")


def load_prompts() -> PromptTexts:
    tools = msgspec.json.decode(_read("tools.json").encode())
    lines = [msgspec.json.encode(msgspec.to_builtins(tool, order="sorted")).decode() for tool in tools]
    return PromptTexts(system=_read("system.md").strip(), tools="\n".join(lines), policy=_read("policy.md").strip(),
                       answer=_read("answer.md").strip(), tool_policy=_read("tool_policy.md").strip(),
                       tool_check=_read("tool_check.md").strip(), text_only=_read("text_only.md").strip(),
                       tool_kind=_read("tool_kind.md").strip())
