"""The extension's hand-kept protocol constants agree with the node's (a drift here breaks the panel)."""

from __future__ import annotations

import re
from pathlib import Path

from contenox.planner import SEGMENT_KINDS

PROTOCOL = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "src" / "protocol.ts"


def test_segment_kinds_match_the_planner() -> None:
    block = re.search(r"export const SEGMENT_KINDS = \[(.*?)\] as const;", PROTOCOL.read_text(), re.DOTALL)
    assert block is not None
    assert tuple(re.findall(r"'([a-z_]+)'", block.group(1))) == SEGMENT_KINDS
