"""Work-done progress of a turn: reports made while the client is still creating the progress token (the turn
runs meanwhile, and a short prefill can be over first) are sent, in order, once it exists; none when the client
refuses the token. The language server is a fake holding the real lsprotocol types."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from contenox.lsp.turns import _Progress


class _Window:
    def __init__(self, gate: asyncio.Event, refuse: bool = False) -> None:
        self.gate = gate
        self.refuse = refuse
        self.sent: list[tuple[str, Any]] = []

    async def create_async(self, token: str) -> None:
        await self.gate.wait()
        if self.refuse:
            raise RuntimeError("refused")

    def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
        self.sent.append((token, value))

    def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
        self.sent.append((token, value))

    def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
        self.sent.append((token, value))


class _Server:
    def __init__(self, window: _Window) -> None:
        self.client_id = "c1"
        self.client_capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True))
        self.work_done_progress = window


async def test_reports_before_the_token_exists_are_sent_once_it_does() -> None:
    gate = asyncio.Event()
    window = _Window(gate)
    progress = _Progress(_Server(window), "Contenox")  # type: ignore[arg-type]
    begun = asyncio.ensure_future(progress.begin())
    await asyncio.sleep(0)
    progress.report("64 of 200 new prompt tokens computed", 32)
    progress.report("200 of 200 new prompt tokens computed", 100)
    assert window.sent == []
    gate.set()
    await begun
    progress.report("generating")
    progress.end("done")
    values = [value for _, value in window.sent]
    assert [type(v).__name__ for v in values] == ["WorkDoneProgressBegin", "WorkDoneProgressReport",
                                                  "WorkDoneProgressReport", "WorkDoneProgressReport",
                                                  "WorkDoneProgressEnd"]
    assert [(v.message, v.percentage) for v in values[1:4]] == [
        ("64 of 200 new prompt tokens computed", 32), ("200 of 200 new prompt tokens computed", 100),
        ("generating", None)]
    assert len({token for token, _ in window.sent}) == 1


async def test_a_refused_token_sends_nothing_and_keeps_nothing() -> None:
    gate = asyncio.Event()
    window = _Window(gate, refuse=True)
    progress = _Progress(_Server(window), "Contenox")  # type: ignore[arg-type]
    begun = asyncio.ensure_future(progress.begin())
    await asyncio.sleep(0)
    progress.report("64 of 200 new prompt tokens computed", 32)
    gate.set()
    await begun
    progress.report("generating")
    progress.end("done")
    assert window.sent == [] and progress.pending is None
