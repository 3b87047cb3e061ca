"""Hover text from the node's typed explain: one line on the last turn, and why a hovered name was retrieved."""

from __future__ import annotations

import msgspec

from contenox.lsp.render import hover_markdown
from contenox.planner import ChunkRecord, Citations
from support.lsp_fake_node import FakeNode


def test_hover_names_why_the_hovered_symbol_was_in_the_last_turn() -> None:
    explain = msgspec.structs.replace(
        FakeNode._explain("/ws", 2, 100),
        retrieved=(ChunkRecord(id="bank/transfer.py:4-6", name="transfer", tokens=0, status="in thread",
                               reasons=("defines transfer (mentioned)", "BM25 rank 1")),),
        citations=Citations(files_real=("bank/transfer.py",), symbols_unknown=("rotate_keys",)))
    text = hover_markdown(explain, None, "transfer")
    assert text == ("_last turn 2: 92/100 tokens cached (92%) · 1 retrieved chunk(s) · cited: 1 real, 1 unknown "
                    "(rotate_keys)_\n\n`bank/transfer.py:4-6` (transfer) was in that turn's context: "
                    "defines transfer (mentioned); BM25 rank 1")
    assert "was in that turn's context" not in (hover_markdown(explain, None, "deposit") or "")
    assert hover_markdown(None, None, "x") is None
