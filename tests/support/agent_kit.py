"""Agent-turn tests: a home whose model is the real Qwen2.5-Coder-0.5B recorded as certified for tool calls, and a
scripted answer source standing in for the model's answers (the one certified model, qwen2.5-coder-1.5b, is too
large and slow for CI, so the loop's plumbing is tested with scripted answers over the real tokenizer, planner,
workspace and node; the 1.5B itself drives the opt-in tests/test_agent_real_model.py).

The script replaces ``contenox.node.backend.submit`` (the node's one way to the engine for turns) and returns
real :class:`~contenox.runtime_ov.RequestHandle` objects fed with real events; it records every prompt it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from contenox.config import load_config
from contenox.node import Node
from contenox.planner.toolcheck import GRAMMAR, KIND_GRAMMAR
from contenox.runtime_ov import (
    FinalEvent,
    GenerateRequest,
    InstalledModel,
    RequestHandle,
    RequestMetrics,
    TokenEvent,
)
from contenox.runtime_ov.certification import CERTIFICATION_FILE, Certification
from support.weights import link_model

HANG = "<<hang until cancelled>>"
"""A scripted answer that streams a little and then waits for a cancel."""
CUT = "\x00cut"
"""An answer ending in this is cut there as by the token limit (finish reason "length"), the marker dropped."""


def certified_home(root: Path, model: InstalledModel) -> Path:
    """A CONTENOX_HOME whose default model is ``model`` (its files linked, not copied) with a certification
    that passed, the engine on a thread (the script runs in this process)."""
    target = link_model(model, root / "models" / model.name, without=(CERTIFICATION_FILE,))
    passed = Certification(model=model.name, model_digest=model.profile.model_digest, date="2026-12-01", cases=56,
                           tool_cases=31, valid_calls=31, valid_call_rate=1.0, false_calls=0, false_call_rate=0.0,
                           schema_errors=0, certified=True, thresholds={"valid_call_rate_min": 0.95,
                                                                        "false_call_rate_max": 0.02},
                           by_kind={}, seconds=1.0)
    (target / CERTIFICATION_FILE).write_bytes(msgspec.json.encode(passed))
    (root / "config.toml").write_text(f'[model]\ndefault = "{model.name}"\n\n[engine]\nprocess = false\n'
                                      "cache_size_gb = 0.5\nmax_new_tokens = 64\n", encoding="utf-8")
    return root


@contextlib.asynccontextmanager
async def certified_node(root: Path, model: InstalledModel, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Node]:
    """A node on ``certified_home(root, model)`` (``CONTENOX_HOME`` set to it), closed after."""
    home = certified_home(root, model)
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    node = Node(load_config(home))
    try:
        yield node
    finally:
        await node.close()


class Script:
    """Answers in order, one per engine request; ``prompts`` holds the token ids each request was given.
    ``prefill``: each prompt is also prefilled by the real engine (one token generated), so the metrics, and the
    cache each step leaves for the next, are the engine's own (``metrics`` keeps them, in order)."""

    def __init__(self, *answers: str, prefill: Any = None, checks: tuple[str, ...] = (),
                 kinds: tuple[str, ...] = ()) -> None:
        self.answers = list(answers)
        self.checks = list(checks)
        """The tool check's answers, in order (none left: "yes"); a check takes none of ``answers``."""
        self.kinds = list(kinds)
        """The check's second answers (repo, code, text), in order (none left: "repo")."""
        self.checked: list[list[int]] = []
        """The tool check's prompts."""
        self.grammars: list[str] = []
        """The grammar of every request, the checks' included ("": none)."""
        self.prompts: list[list[int]] = []
        self.tools: list[bool] = []
        """Whether each request offered the tools (its calls constrained)."""
        self.required: list[bool] = []
        """Whether each request had to be a call (the check's yes, on a turn's first step)."""
        self.reached_hang = asyncio.Event()
        self.prefill = prefill
        """The real ``backend.submit`` (captured before the script replaced it), or None."""
        self.metrics: list[RequestMetrics] = []
        self._tasks: set[asyncio.Future[None]] = set()

    def submit(self, engine: Any, session_id: str, token_ids: list[int], max_new_tokens: int, *,
               tools: bool = False, require_call: bool = False, stable_tokens: int = 0, grammar: str = "",
               report_prefill: bool = True) -> RequestHandle:
        self.grammars.append(grammar)
        if grammar in (GRAMMAR, KIND_GRAMMAR):  # the tool check's two questions (contenox.planner.toolcheck)
            if grammar == GRAMMAR:
                self.checked.append(list(token_ids))
                verdict = self.checks.pop(0) if self.checks else "yes"
            else:
                verdict = self.kinds.pop(0) if self.kinds else "repo"
            check = RequestHandle(GenerateRequest(session_id=session_id, token_ids=token_ids, max_new_tokens=2),
                                  -len(self.grammars), asyncio.get_running_loop(), lambda handle: None)
            check.started(0)
            self._answer(check, engine, verdict, _final(engine, verdict, len(token_ids), "stop").metrics)
            return check
        self.prompts.append(list(token_ids))
        self.tools.append(tools)
        self.required.append(require_call)
        text = self.answers.pop(0)
        request = GenerateRequest(session_id=session_id, token_ids=token_ids, max_new_tokens=max_new_tokens)

        def cancelled(handle: RequestHandle) -> None:
            handle.finish(_final(engine, "", len(token_ids), "cancelled"))

        handle = RequestHandle(request, len(self.prompts), asyncio.get_running_loop(), cancelled)
        handle.started(len(self.prompts))
        if text == HANG:
            handle.emit(TokenEvent(token_ids=engine.tokenizer.encode("Looking"), text="Looking"))
            self.reached_hang.set()
            return handle
        if self.prefill is None:
            self._answer(handle, engine, text, _final(engine, text, len(token_ids), "stop").metrics)
            return handle
        real = self.prefill(engine, session_id, token_ids, 1)

        async def after_prefill() -> None:
            measured = (await real.result()).metrics
            self.metrics.append(measured)
            self._answer(handle, engine, text, measured)

        self._tasks.add(asyncio.ensure_future(after_prefill()))
        return handle

    @staticmethod
    def _answer(handle: RequestHandle, engine: Any, text: str, metrics: RequestMetrics) -> None:
        reason = "length" if text.endswith(CUT) else "stop"
        text = text.removesuffix(CUT)
        third = max(1, len(text) // 3)
        for start in range(0, len(text), third):  # streamed in pieces, as the engine does
            handle.emit(TokenEvent(token_ids=[], text=text[start:start + third]))
        handle.finish(msgspec.structs.replace(_final(engine, text, metrics.prompt_tokens, reason), metrics=metrics))


def _final(engine: Any, text: str, prompt_tokens: int, reason: str) -> FinalEvent:
    ids = engine.tokenizer.encode(text) if text else []
    metrics = RequestMetrics(prompt_tokens=prompt_tokens, predicted_cached_tokens=0,
                             measured_recomputed_tokens=prompt_tokens, prefill_steps=1, chunk_tokens=256,
                             ttft_ms=5.0, prefill_tps=1.0, decode_tps=1.0, generated_tokens=len(ids), total_ms=6.0,
                             cache_used_tokens=0, cache_capacity_tokens=1, peak_rss_bytes=1)
    return FinalEvent(text=text, token_ids=ids, finish_reason=reason, metrics=metrics)


def call(name: str, **arguments: object) -> str:
    """A call in Qwen2.5's native markup."""
    import json

    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"
