"""The engine process: ``python -m contenox.runtime_ov.worker``, started by :class:`RemoteEngine`.

It loads one model into an :class:`Engine` (the pipeline and its engine thread live here, so a prefill
step that holds the GIL, or a native crash, never reaches the node) and serves the node over its stdin /
stdout (the typed frames of ``_pipe``). The first frame is ``Start``; the answer ``Ready`` or ``Failed``. Then,
from the node: ``Submit``, ``Cancel``, ``Close``; to the node: ``RequestStarted``, ``Token``, ``Prefill``,
``Final`` (with what the cache now holds), ``Fail``, ``Refused`` once the weights failed their background check
(the engine refuses every request from then on), and a ``Beat`` every second (the node's hang detector). The
process exits when its stdin closes (the node is gone).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from contenox.errors import ContenoxError, EngineError
from contenox.runtime_ov._pipe import (
    Beat,
    Cancel,
    Close,
    Fail,
    Failed,
    Final,
    FrameWriter,
    Prefill,
    Ready,
    Refused,
    RequestStarted,
    Start,
    Submit,
    ToEngine,
    Token,
    error_to,
    read_frame,
)

__all__ = ["main"]

log = logging.getLogger("contenox.engine")

HEARTBEAT_S = 1.0


def _start(message: Start, out: FrameWriter) -> Any:
    from contenox.runtime_ov.engine import Engine
    from contenox.runtime_ov.store import ModelStore

    try:
        model = ModelStore(Path(message.models_dir)).get(message.model)
        engine = Engine.start(model, message.options, on_refused=lambda exc: out.send(Refused(error=error_to(exc))))
    except ContenoxError as exc:
        out.send(Failed(error=error_to(exc)))
        return None
    except Exception as exc:  # anything else: the node gets its words
        out.send(Failed(error=error_to(EngineError(f"cannot start the engine: {exc!r}"))))
        return None
    out.send(Ready(pid=os.getpid(), device=engine.device, num_kv_blocks=engine.num_kv_blocks,
                   kv_bytes_per_token=engine.kv_bytes_per_token))
    return engine


def _forwarder(request_id: int, out: FrameWriter, handles: dict[int, Any]) -> Any:
    from contenox.runtime_ov.requests import FinalEvent, PrefillEvent, Started, TokenEvent

    def forward(event: Any, error: ContenoxError | None) -> None:
        if isinstance(event, Started):
            out.send(RequestStarted(id=request_id, run_index=event.run_index))
        elif error is not None:
            handles.pop(request_id, None)
            out.send(Fail(id=request_id, error=error_to(error)))
        elif isinstance(event, FinalEvent):
            handle = handles.pop(request_id, None)
            out.send(Final(id=request_id, event=event, committed=handle.committed if handle is not None else None,
                           run_index=handle.run_index if handle is not None else None))
        elif isinstance(event, PrefillEvent):
            out.send(Prefill(id=request_id, event=event))
        elif isinstance(event, TokenEvent):
            out.send(Token(id=request_id, event=event))
    return forward


def _beat(out: FrameWriter, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_S):
        try:
            out.send(Beat())
        except (OSError, ValueError):
            return


def main() -> int:
    logging.basicConfig(level=os.environ.get("CONTENOX_ENGINE_LOG", "INFO"), stream=sys.stderr,
                        format="%(asctime)s engine[%(process)d] %(levelname)s %(name)s: %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the pipe
    out = FrameWriter(stdout)
    first = read_frame(stdin, ToEngine)
    if not isinstance(first, Start):
        return 2
    engine = _start(first, out)
    if engine is None:
        return 1
    stop = threading.Event()
    threading.Thread(target=_beat, args=(out, stop), name="engine-heartbeat", daemon=True).start()
    handles: dict[int, Any] = {}
    try:
        while (message := read_frame(stdin, ToEngine)) is not None:
            if isinstance(message, Submit):
                try:
                    handles[message.id] = engine.submit(message.request, _forwarder(message.id, out, handles))
                except ContenoxError as exc:
                    out.send(Fail(id=message.id, error=error_to(exc)))
            elif isinstance(message, Cancel):
                handle = handles.get(message.id)
                if handle is not None:
                    handle.cancel()
            elif isinstance(message, Close):
                break
    finally:
        stop.set()
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
