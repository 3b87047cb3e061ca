"""A ``session/prompt``'s content blocks as a turn: the question, embedded context, linked files, commands."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

import msgspec
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    UnstructuredCommandInput,
)

__all__ = ["COMMANDS", "Command", "PromptParts", "parse_command", "parse_prompt"]

COMMANDS = [
    AvailableCommand(name="explain-context", description="Show what the last turn's context held and what was cached"),
    AvailableCommand(name="pin", description="Pin a file (PATH, PATH:10-40, PATH:outline) into every turn; alone: list the pins",
                     input=AvailableCommandInput(root=UnstructuredCommandInput(hint="path/to/file"))),
    AvailableCommand(name="unpin", description="Stop pinning a file",
                     input=AvailableCommandInput(root=UnstructuredCommandInput(hint="path/to/file"))),
]


class PromptParts(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    """The user's words (text blocks joined)."""
    context: str | None
    """Embedded resources' text, each headed by its URI; goes to the turn as the selection."""
    pins: tuple[str, ...]
    """Files named by resource links (absolute paths), pinned for this turn only."""
    notes: tuple[str, ...]
    """Blocks that were not used, with why, for the transcript."""


class Command(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    argument: str


def _file_path(uri: str, cwd: str) -> str | None:
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path) or None
    if "://" in uri:
        return None
    return os.path.join(cwd, uri)


def parse_prompt(blocks: Sequence[Any], cwd: str) -> PromptParts:
    texts: list[str] = []
    context: list[str] = []
    pins: list[str] = []
    notes: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            if isinstance(block.resource, TextResourceContents):
                context.append(f"{block.resource.uri}:\n{block.resource.text}")
            else:
                notes.append(f"binary resource {block.resource.uri} skipped")
        elif isinstance(block, ResourceContentBlock):
            path = _file_path(block.uri, cwd)
            if path:
                pins.append(path)
            else:
                notes.append(f"link {block.uri} is not a file and was skipped")
        else:
            notes.append(f"{getattr(block, 'type', 'unknown')} content is not supported and was skipped")
    return PromptParts(text="\n".join(texts).strip(), context="\n\n".join(context) or None,
                       pins=tuple(pins), notes=tuple(notes))


def parse_command(text: str) -> Command | None:
    """``/explain-context``, ``/pin PATH``, ``/unpin PATH``; an unknown ``/word`` is a command too (answered
    with the list, never sent to the model); None for an ordinary prompt (a path like ``/etc/x is...`` included)."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    if not name or "/" in name or not name.replace("-", "").isalnum():
        return None
    return Command(name=name, argument=argument.strip())
