"""A small in-process stand-in for contenox.node.Node implementing the adapter-facing contract."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from contenox.config import Config
from contenox.errors import Cancelled, OverContext
from contenox.node.turns import EventCallback, TurnEvent, TurnOutcome, TurnRequest


class FakeNode:
    """Answers every turn with a fixed list of chunks; ``hold`` makes a turn wait until cancelled."""

    def __init__(self, state_dir: Path | None = None, chunks: tuple[str, ...] = ("Hello", " world")) -> None:
        self.config = Config(home=str(state_dir.parent)) if state_dir else Config(home="/nonexistent")
        self.chunks = chunks
        self.requests: list[TurnRequest] = []
        self.overlays: dict[str, str | None] = {}
        self.pins: dict[str, list[str]] = {}
        self.explains: dict[str, dict[str, Any]] = {}
        self.hold = False
        self.started = asyncio.Event()
        self.cancelled = 0

    def _explain(self, root: str, turn: int, prompt_tokens: int) -> dict[str, Any]:
        cached = 0 if turn == 1 else prompt_tokens - 8
        return {"workspace": root, "turn": turn, "model": "fake",
                "segments": [{"kind": "system", "tokens": prompt_tokens - 8, "cached": cached, "new": 0,
                              "invalidated_by": None},
                             {"kind": "user", "tokens": 8, "cached": 0, "new": 8, "invalidated_by": "new turn"}],
                "totals": {"tokens": prompt_tokens, "cached": cached, "new": prompt_tokens - cached,
                           "hit_pct": round(100.0 * cached / prompt_tokens, 1)},
                "predicted_cached_tokens": cached, "measured_recomputed_tokens": prompt_tokens - cached,
                "ttft_ms": 12.5, "context_size": 8192}

    async def turn(self, request: TurnRequest, on_event: EventCallback) -> TurnOutcome:
        if request.prompt == "too long":
            raise OverContext("prompt needs 9000 tokens; the profile allows 8192", over_by=808)
        self.requests.append(request)

        async def emit(event: TurnEvent) -> None:
            result = on_event(event)
            if result is not None:
                await result

        await emit(TurnEvent(kind="state", state="prefill"))
        self.started.set()
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise Cancelled("turn cancelled during prefill") from None
        await emit(TurnEvent(kind="state", state="decode"))
        for chunk in self.chunks:
            await emit(TurnEvent(kind="chunk", text=chunk))
            await asyncio.sleep(0)
        turn = sum(1 for r in self.requests if r.root == request.root)
        explain = self._explain(request.root, turn, 100)
        self.explains[request.root] = explain
        return TurnOutcome(text="".join(self.chunks), finish_reason="stop", explain=explain)

    def explain(self, root: str) -> dict[str, Any] | None:
        return self.explains.get(root)

    async def pin(self, root: str, path: str) -> None:
        self.pins.setdefault(root, []).append(path)

    def unpin(self, root: str, path: str) -> None:
        self.pins.get(root, []).remove(path)

    def related(self, root: str, text: str) -> list[dict[str, Any]]:
        return [{"path": "util.py", "line": 3, "name": text.split()[0] if text.split() else "", "kind": "def"}]

    def symbol_info(self, root: str, name: str) -> dict[str, Any] | None:
        if name != "helper":
            return None
        return {"name": name, "definitions": [{"path": "util.py", "line": 1}],
                "referencing_files": ["main.py"], "rank": 2}

    def workspace_overlay(self, root: str, path: str, text: str | None) -> None:
        self.overlays[path] = text
