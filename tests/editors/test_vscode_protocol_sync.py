"""The extension's hand-kept protocol constants agree with the node's (a drift here breaks the panel)."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from types import SimpleNamespace

from contenox.lsp import features, turns
from contenox.planner import SEGMENT_KINDS
from contenox.verify import Verification

SRC = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "src"
PROTOCOL = SRC / "protocol.ts"


def _block(pattern: str, text: str) -> str:
    block = re.search(pattern, text, re.DOTALL)
    assert block is not None, pattern
    return block.group(1)


def test_segment_kinds_match_the_planner() -> None:
    block = _block(r"export const SEGMENT_KINDS = \[(.*?)\] as const;", PROTOCOL.read_text())
    assert tuple(re.findall(r"'([a-z_]+)'", block)) == SEGMENT_KINDS


def test_methods_match_the_node() -> None:
    methods = dict(re.findall(r"^\s*(\w+): '([^']+)',", _block(r"export const Methods = \{(.*?)\} as const;",
                                                                PROTOCOL.read_text()), re.MULTILINE))
    # notifications and server -> client requests: the node's constants
    assert methods["chatChunk"] == turns.CHAT_CHUNK
    assert methods["chatTool"] == turns.CHAT_TOOL
    assert methods["cacheStatus"] == turns.CACHE_STATUS
    assert methods["runCommand"] == turns.RUN_COMMAND
    assert methods["allowCheck"] == turns.ALLOW_CHECK
    # client -> server requests: features the node registers
    registered = {method for method, _, _ in features.FEATURES}  # the node's registration table
    requests = {m for m in methods.values() if m.startswith("contenox/")} - {turns.RUN_COMMAND, turns.ALLOW_CHECK}
    assert requests <= registered, requests - registered


def test_run_command_capability_matches_the_node() -> None:
    name = _block(r"export const RUN_COMMAND_CAPABILITY = '(\w+)';", (SRC / "runCommand.ts").read_text())
    client = SimpleNamespace(client_capabilities=SimpleNamespace(experimental={name: True}))
    assert turns.runs_commands(client)  # type: ignore[arg-type]


def test_verification_matches_the_node() -> None:
    text = PROTOCOL.read_text()
    statuses = _block(r"export const VERIFICATION_STATUSES = \[(.*?)\] as const;", text)
    assert tuple(re.findall(r"'([a-z_]+)'", statuses)) == typing.get_args(
        typing.get_type_hints(Verification)["status"])
    # the fields of the chat result's verification (server/lsp/turns.py run_turn) are the panel's
    fields = set(re.findall(r"^\s*(\w+): ", _block(r"export interface Verification \{(.*?)\n\}", text), re.MULTILINE))
    source = Path(turns.__file__).read_text()
    sent = source[source.index('"verification":') + len('"verification":'):]
    sent = sent[:sent.index("\n\n")] if "\n\n" in sent else sent
    assert set(re.findall(r"\"(\w+)\":", sent)) == fields
