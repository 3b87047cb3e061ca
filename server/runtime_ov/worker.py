"""The engine process: ``python -m contenox.runtime_ov.worker``, started by :class:`RemoteEngine`.

It loads one model into an :class:`Engine` (the pipeline and its engine thread live here, so a prefill
step that holds the GIL, or a native crash, never reaches the node) and serves the node over its stdin /
stdout (frames of ``_pipe``). The first frame is ``{"op": "start", "models_dir", "model", "options"}``;
the answer ``{"ev": "ready", ...}`` or ``{"ev": "failed", "error"}``. Then, from the node:
``submit {id, request}``, ``cancel {id}``, ``close``; to the node: ``token {id, event}``, ``final {id, event,
committed}``, ``fail {id, error}``, ``refused {error}`` once the weights failed their background check (the
engine refuses every request from then on), and a ``beat`` every second (the node's hang detector). The process
exits when its stdin closes (the node is gone).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import ContenoxError, EngineError
from contenox.runtime_ov._pipe import FrameWriter, error_to, read_frame

__all__ = ["main"]

log = logging.getLogger("contenox.engine")

HEARTBEAT_S = 1.0


def _start(message: dict[str, Any], out: FrameWriter) -> Any:
    from contenox.runtime_ov.engine import Engine
    from contenox.runtime_ov.options import EngineOptions
    from contenox.runtime_ov.store import ModelStore

    try:
        model = ModelStore(Path(message["models_dir"])).get(message["model"])
        options = msgspec.convert(message["options"], EngineOptions)
        engine = Engine.start(model, options,
                              on_refused=lambda exc: out.send({"ev": "refused", "error": error_to(exc)}))
    except ContenoxError as exc:
        out.send({"ev": "failed", "error": error_to(exc)})
        return None
    except Exception as exc:  # anything else: the node gets its words
        out.send({"ev": "failed", "error": error_to(EngineError(f"cannot start the engine: {exc!r}"))})
        return None
    out.send({"ev": "ready", "pid": os.getpid(), "device": engine.device, "num_kv_blocks": engine.num_kv_blocks,
              "kv_bytes_per_token": engine.kv_bytes_per_token})
    return engine


def _forwarder(request_id: int, out: FrameWriter, handles: dict[int, Any]) -> Any:
    from contenox.runtime_ov.requests import FinalEvent, PrefillEvent, Started

    def forward(event: Any, error: ContenoxError | None) -> None:
        if isinstance(event, Started):
            out.send({"ev": "started", "id": request_id, "run_index": event.run_index})
        elif error is not None:
            handles.pop(request_id, None)
            out.send({"ev": "fail", "id": request_id, "error": error_to(error)})
        elif isinstance(event, FinalEvent):
            handle = handles.pop(request_id, None)
            committed = handle.committed if handle is not None else None
            out.send({"ev": "final", "id": request_id, "event": msgspec.to_builtins(event),
                      "committed": list(committed) if committed else None,
                      "run_index": handle.run_index if handle is not None else None})
        elif isinstance(event, PrefillEvent):
            out.send({"ev": "prefill", "id": request_id, "event": msgspec.to_builtins(event)})
        elif event is not None:
            out.send({"ev": "token", "id": request_id, "event": msgspec.to_builtins(event)})
    return forward


def _beat(out: FrameWriter, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_S):
        try:
            out.send({"ev": "beat"})
        except (OSError, ValueError):
            return


def main() -> int:
    logging.basicConfig(level=os.environ.get("CONTENOX_ENGINE_LOG", "INFO"), stream=sys.stderr,
                        format="%(asctime)s engine[%(process)d] %(levelname)s %(name)s: %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the pipe
    out = FrameWriter(stdout)
    first = read_frame(stdin)
    if first is None or first.get("op") != "start":
        return 2
    engine = _start(first, out)
    if engine is None:
        return 1
    from contenox.runtime_ov.requests import GenerateRequest

    stop = threading.Event()
    threading.Thread(target=_beat, args=(out, stop), name="engine-heartbeat", daemon=True).start()
    handles: dict[int, Any] = {}
    try:
        while (message := read_frame(stdin)) is not None:
            op = message.get("op")
            if op == "submit":
                request_id = int(message["id"])
                try:
                    request = msgspec.convert(message["request"], GenerateRequest)
                    handles[request_id] = engine.submit(request, _forwarder(request_id, out, handles))
                except ContenoxError as exc:
                    out.send({"ev": "fail", "id": request_id, "error": error_to(exc)})
            elif op == "cancel":
                handle = handles.get(int(message["id"]))
                if handle is not None:
                    handle.cancel()
            elif op == "close":
                break
    finally:
        stop.set()
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
