"""The engine process's pipe and supervision: frames, errors across the pipe, a hung engine."""

from __future__ import annotations

import io
import os
import signal
import time

import pytest

from contenox.errors import ChecksumMismatch, EngineCrashed, EngineError, OverContext
from contenox.runtime_ov import EngineOptions, GenerateRequest, InstalledModel, RemoteEngine
from contenox.runtime_ov._pipe import (
    Beat,
    FrameWriter,
    FromEngine,
    Submit,
    Token,
    WireError,
    error_from,
    error_to,
    read_frame,
)
from contenox.runtime_ov.remote import silence_verdict
from contenox.runtime_ov.requests import TokenEvent


def test_frames_round_trip_typed_and_a_torn_frame_is_the_end() -> None:
    buffer = io.BytesIO()
    writer = FrameWriter(buffer)
    token = Token(id=3, event=TokenEvent(token_ids=[1, 2], text="hé"))
    writer.send(token)
    writer.send(Beat())
    data = buffer.getvalue()
    stream = io.BytesIO(data)
    assert read_frame(stream, FromEngine) == token
    assert read_frame(stream, FromEngine) == Beat()
    assert read_frame(stream, FromEngine) is None
    assert read_frame(io.BytesIO(data[:-3]), FromEngine) is not None
    assert read_frame(io.BytesIO(data[:5]), FromEngine) is None
    writer.send(Submit(id=1, request=GenerateRequest(session_id="s", token_ids=[1])))
    with pytest.raises(EngineError, match="not a message"):  # a node -> engine message read as an engine's
        read_frame(io.BytesIO(buffer.getvalue()[len(data):]), FromEngine)


def test_errors_cross_the_pipe_as_their_own_class() -> None:
    over = error_from(error_to(OverContext("too long by 5", over_by=5, limit=8192)))
    assert isinstance(over, OverContext) and over.message == "too long by 5" and over.details["over_by"] == 5
    assert isinstance(error_from(error_to(ChecksumMismatch("flipped"))), ChecksumMismatch)
    unknown = error_from(WireError(kind="system_exit", message="nope"))
    assert type(unknown) is EngineError and unknown.message == "nope"


@pytest.mark.slow
def test_a_hung_engine_fails_its_requests_and_is_killed(default_model: InstalledModel) -> None:
    engine = RemoteEngine.start(default_model, EngineOptions(cache_size_gb=0.1, chunk_tokens=32), hang_s=3.0)
    try:
        ids = engine.tokenizer.encode("def f(x):\n    return x\n" * 400)
        handle = engine.submit(GenerateRequest(session_id="hang", token_ids=ids, max_new_tokens=8))
        os.kill(engine.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(EngineCrashed, match=r"stopped answering.*while running hang #1"):
            handle.wait(60)
        assert time.monotonic() - started < 30
        assert not engine.alive and engine.crash_reason == "stopped answering (no heartbeat)"
        with pytest.raises(EngineCrashed):
            engine.submit(GenerateRequest(session_id="late", token_ids=ids[:10], max_new_tokens=1))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and os.path.exists(f"/proc/{engine.pid}"):
            with open(f"/proc/{engine.pid}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    break
            time.sleep(0.1)
        else:
            assert not os.path.exists(f"/proc/{engine.pid}"), "the hung engine process was not killed"
    finally:
        engine.close()


def test_a_silent_process_is_hung_only_when_it_computes_nothing_or_past_the_busy_limit() -> None:
    assert silence_verdict(20.0, 0.0, hang_s=30.0, busy_s=300.0) == ""  # heard from within hang_s
    assert silence_verdict(31.0, 0.0, hang_s=30.0, busy_s=300.0) == "hung"  # stopped, deadlocked, waiting
    assert silence_verdict(31.0, None, hang_s=30.0, busy_s=300.0) == "hung"  # its CPU time unreadable
    assert silence_verdict(31.0, 2.9, hang_s=30.0, busy_s=300.0) == "hung"  # under a tenth of a core
    assert silence_verdict(31.0, 45.0, hang_s=30.0, busy_s=300.0) == ""  # a long step: computing
    assert silence_verdict(301.0, 45.0, hang_s=30.0, busy_s=300.0) == "busy"  # computing without end


@pytest.mark.slow
def test_an_engine_computing_a_long_step_without_a_heartbeat_is_not_killed(default_model: InstalledModel) -> None:
    """A pipeline step keeps the worker's interpreter lock, so its heartbeat thread waits while it runs (a 1.5B
    step on a loaded machine outlasted the 30 s limit). Here the limit (0.3 s) is shorter than the beat's
    period (1 s), so the engine is silent past it throughout a long prefill: it is computing, so it is left to
    finish, and the request completes."""
    engine = RemoteEngine.start(default_model, EngineOptions(cache_size_gb=0.1), hang_s=0.3, busy_s=120.0)
    try:
        ids = engine.tokenizer.encode("def f(x):\n    return x + 1\n" * 600)[:6000]
        final = engine.submit(GenerateRequest(session_id="busy", token_ids=ids, max_new_tokens=4)).wait(300)
        assert final.finish_reason in ("stop", "length") and engine.crash_reason is None
        assert engine.silent_busy >= 1  # it was silent past the limit while computing, and left alone
    finally:
        engine.close()
