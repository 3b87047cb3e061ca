"""failure_cases: each failure actually provoked on the live engine, with the structured error the
caller saw and the recovery time (from the failure to the next turn's first token).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from contenox.bench.harness import Harness
from contenox.bench.report import FailureCase
from contenox.errors import ContenoxError
from contenox.runtime_ov import FinalEvent, GenerateRequest, Priority, TokenEvent
from contenox.runtime_ov.profile import write_profile
from contenox.runtime_ov.store import ModelStore

__all__ = ["FailureRunner"]


def _outcome(final: FinalEvent) -> dict[str, Any]:
    m = final.metrics
    return {"kind": "cancelled" if final.finish_reason == "cancelled" else final.finish_reason,
            "finish_reason": final.finish_reason, "generated_tokens": m.generated_tokens,
            "prefill_steps": m.prefill_steps, "prompt_tokens": m.prompt_tokens,
            "note": "engine outcome; the node raises contenox.errors.Cancelled (code -32800) for it"}


class FailureRunner:
    def __init__(self, h: Harness, recover: Callable[[], None], long_ids: list[int]) -> None:
        self.h = h
        self._recover = recover
        self.long_ids = long_ids
        """A prompt several chunks long that is not cached (the cancel-in-prefill case)."""

    def _recovery_ms(self) -> float:
        started = time.perf_counter()
        self._recover()
        return round((time.perf_counter() - started) * 1000.0, 1)

    def _expect(self, name: str, how: str, action: Callable[[], object]) -> FailureCase:
        try:
            action()
        except ContenoxError as exc:
            return FailureCase(name=name, provoked=True, how=how, error=exc.to_dict() | {"type": type(exc).__name__},
                               outcome="raised", recovery_ms=self._recovery_ms())
        except Exception as exc:  # an untranslated error is itself a finding
            return FailureCase(name=name, provoked=True, how=how,
                               error={"kind": "untranslated", "type": type(exc).__name__, "message": str(exc)[:500]},
                               outcome="raised an error that is not a ContenoxError", recovery_ms=self._recovery_ms())
        return FailureCase(name=name, provoked=False, how=how, error=None, outcome="no error raised",
                           recovery_ms=None)

    def over_context(self) -> FailureCase:
        limit = self.h.model.profile.max_tested_context
        ids = (self.long_ids * (limit // max(1, len(self.long_ids)) + 2))[: limit + 1]
        return self._expect("over_context", f"{len(ids)} prompt tokens against a tested context of {limit}",
                            lambda: self.h.engine.submit(GenerateRequest(session_id="bench-fail", token_ids=ids,
                                                                         max_new_tokens=8)))

    def over_batch(self) -> FailureCase:
        engine = self.h.engine
        limit = engine.options.max_queued
        ids = self.h.tokenizer.encode("print('queued')\n")
        handles = []
        how = f"{limit + 2} requests submitted at once (max_queued {limit})"
        error: dict[str, Any] | None = None
        try:
            for _ in range(limit + 2):
                handles.append(engine.submit(GenerateRequest(session_id="bench-flood", token_ids=ids,
                                                             max_new_tokens=1, priority=Priority.BACKGROUND)))
        except ContenoxError as exc:
            error = exc.to_dict() | {"type": type(exc).__name__}
        started = time.perf_counter()
        for handle in handles:
            handle.cancel()
        for handle in handles:
            try:
                handle.wait(300)
            except ContenoxError:
                pass
        drained = (time.perf_counter() - started) * 1000.0
        if error is None:
            return FailureCase(name="over_batch", provoked=False, how=how, error=None, outcome="no error raised",
                               recovery_ms=None)
        error["accepted_before_refusal"] = len(handles)
        return FailureCase(name="over_batch", provoked=True, how=how, error=error,
                           outcome=f"raised; the {len(handles)} accepted requests were cancelled and drained",
                           recovery_ms=round(drained + self._recovery_ms(), 1))

    async def _cancel(self, ids: list[int], max_new: int, *, after_tokens: int, after_s: float
                      ) -> tuple[FinalEvent, float, float]:
        """(final, cancel latency from the intended moment, event-loop lag at that moment) in ms.

        The intended moment is ``after_s`` after submit (prefill) or the arrival of the n-th token
        event (decode); the lag is how late the asyncio loop got to run the cancel.
        """
        submitted = time.perf_counter()
        handle = self.h.engine.submit(GenerateRequest(session_id="bench-cancel", token_ids=ids,
                                                      max_new_tokens=max_new))
        seen = 0
        intended = submitted + after_s
        cancelled_at = 0.0
        if after_tokens == 0:
            await asyncio.sleep(after_s)
            cancelled_at = time.perf_counter()
            handle.cancel()
        async for event in handle:
            if isinstance(event, TokenEvent):
                seen += 1
                if after_tokens and seen == after_tokens:
                    intended = cancelled_at = time.perf_counter()
                    handle.cancel()
        final = await handle.result()
        ended = time.perf_counter()
        return final, (ended - intended) * 1000.0, (cancelled_at - intended) * 1000.0

    def _cancel_case(self, name: str, how: str, ids: list[int], max_new: int, after_tokens: int,
                     after_s: float) -> FailureCase:
        final, latency, lag = asyncio.run(self._cancel(ids, max_new, after_tokens=after_tokens, after_s=after_s))
        error = _outcome(final) | {"cancel_latency_ms": round(latency, 1), "loop_lag_ms": round(lag, 1)}
        return FailureCase(name=name, provoked=final.finish_reason == "cancelled", how=how, error=error,
                           outcome=f"finish_reason={final.finish_reason}", recovery_ms=self._recovery_ms())

    def cancel_prefill(self) -> FailureCase:
        ids = self.h.tokenizer.encode(f"# uncached {time.time_ns()}\n") + self.long_ids
        return self._cancel_case("cancel_prefill", f"cancel 0.3 s into the prefill of {len(ids)} uncached tokens",
                                 ids, 8, 0, 0.3)

    def cancel_decode(self) -> FailureCase:
        ids = self.h.tokenizer.encode("Write a long story about a cache.\n")
        return self._cancel_case("cancel_decode", "cancel after the 3rd streamed token of 200", ids, 200, 3, 0.0)

    def missing_model(self, models_dir: Path) -> FailureCase:
        return self._expect("missing_model", "ModelStore.get of a model that is not installed",
                            lambda: ModelStore(models_dir).get("no-such-model-bench"))

    def profile_mismatch(self) -> FailureCase:
        """A model directory whose profile promises a GGUF but whose weights file is truncated.

        Loaded in a child process: a crash there is recorded, not shared.
        """
        from contenox.bench.probe import run_probe

        scratch = Path(tempfile.mkdtemp(prefix="contenox-bench-profile-"))
        how = "a profile whose GGUF weights are truncated to 1 MiB, loaded by ModelStore.get + Engine.start"
        try:
            target = scratch / "models" / "broken-model"
            target.mkdir(parents=True)
            with self.h.model.weights.open("rb") as src:
                (target / self.h.model.profile.weights).write_bytes(src.read(1 << 20))
            write_profile(target, msgspec.structs.replace(self.h.model.profile, id="broken-model"))
            error, outcome, _ms = run_probe(["profile_mismatch", str(scratch / "models"), "broken-model"])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return FailureCase(name="profile_mismatch", provoked=error is not None, how=how, error=error,
                           outcome=outcome, recovery_ms=self._recovery_ms() if error is not None else None)
