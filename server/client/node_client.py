"""A client process's side of the node: connect (starting the daemon on demand) and speak ``rpc``.

Prints nothing: the CLI (:mod:`contenox.cli`) presents what comes back. An error the node answers is raised as
its own class (:meth:`ContenoxError.from_wire`, by ``kind``); one of a kind this build does not know is a
:class:`RemoteError` with the node's ``kind`` and ``code``.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from contenox.buildinfo import build_id
from contenox.config import Config
from contenox.errors import ContenoxError, NodeUnavailable, PeerNotAllowed
from contenox.jsonrpc import SocketFrames
from contenox.node.paths import build_path, ensure_private_dir, socket_dir, socket_path, spawn_lock_path
from contenox.processes import pid_alive

__all__ = ["NodeClient", "RemoteError", "call", "connect", "ensure_node", "replace_stale_node",
           "switch_node_model"]

_START_TIMEOUT_S = 60.0
_NODE_OUT_BYTES = 5_000_000


class RemoteError(ContenoxError):
    """An error answered by the node; ``kind`` and ``code`` are the node's (instance attributes)."""

    def __init__(self, error: dict[str, Any]) -> None:
        data = error.get("data") or {}
        super().__init__(str(error.get("message", "node error")), **(data.get("details") or {}))
        self.remote_code = int(error.get("code", -32000))
        self.remote_kind = str(data.get("kind", "node_error"))

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.remote_code, "kind": self.remote_kind, "message": self.message, "details": self.details}


def _try_connect(path: Path, protocol: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except PermissionError as exc:
        sock.close()
        raise PeerNotAllowed(f"cannot connect to {path}: {exc.strerror}", path=str(path)) from exc
    try:
        sock.sendall(f"CONTENOX/1 {protocol}\n".encode())
    except (BrokenPipeError, ConnectionResetError):  # a node dying as we connected
        sock.close()
        return None
    return sock


def _spawn(config: Config) -> subprocess.Popen[bytes]:
    logs = Path(config.logs_dir)
    logs.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = dict(os.environ, CONTENOX_HOME=config.home)
    node_out = logs / "node.out"
    with contextlib.suppress(FileNotFoundError):
        if node_out.stat().st_size > _NODE_OUT_BYTES:  # keep one old copy, like node.log's rotation
            os.replace(node_out, logs / "node.out.1")
    with os.fdopen(os.open(node_out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "contenox", "node", "serve"], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
                                close_fds=True, cwd="/")


def ensure_node(config: Config, protocol: str = "rpc", *, timeout_s: float = _START_TIMEOUT_S) -> socket.socket:
    """A socket to the node, already past the protocol line; starts the node (detached) if none runs."""
    path = socket_path(config)
    sock = _try_connect(path, protocol)
    if sock is not None:
        return sock
    ensure_private_dir(socket_dir(config))
    with spawn_lock_path(config).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = _try_connect(path, protocol)
        if sock is not None:
            return sock
        process = _spawn(config)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            sock = _try_connect(path, protocol)
            if sock is not None:
                return sock
            if process.poll() is not None:
                if process.returncode not in (0, 1):
                    raise NodeUnavailable(f"the node exited with status {process.returncode} while starting; "
                                          f"see {Path(config.logs_dir) / 'node.out'}")
                # 1: another node still held the lock (one that is dying): start again once it is gone
                time.sleep(0.2)
                process = _spawn(config)
            time.sleep(0.05)
    raise NodeUnavailable(f"the node did not open {path} within {timeout_s:.0f} s")


def connect(config: Config, protocol: str = "rpc", *, start: bool = True) -> socket.socket | None:
    """A connected socket; with ``start=False`` None when no node runs."""
    if start:
        return ensure_node(config, protocol)
    return _try_connect(socket_path(config), protocol)


class NodeClient:
    """A blocking JSON-RPC client of the node's ``rpc`` protocol."""

    def __init__(self, sock: socket.socket) -> None:
        self.frames = SocketFrames(sock)
        self._ids = itertools.count(1)

    def __enter__(self) -> NodeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.frames.close()

    def call(self, method: str, params: dict[str, Any] | None = None,
             on_notification: Callable[[str, Any], None] | None = None,
             on_request: Callable[[str, Any], Any] | None = None) -> Any:
        """The result of ``method``; notifications go to ``on_notification``, the node's own requests (an agent
        turn's ``run_command``) to ``on_request``, whose return value answers them (none: refused)."""
        msg_id = next(self._ids)
        self.frames.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        while True:
            try:
                message = self.frames.receive()
            except (ConnectionError, OSError) as exc:
                raise NodeUnavailable(f"lost the node during {method}: {exc}") from exc
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" not in message:
                if on_notification is not None:
                    on_notification(message["method"], message.get("params"))
                continue
            if "method" in message:  # the node asks something of this client
                self._answer(message, on_request)
                continue
            if message.get("id") not in (msg_id, None):
                continue
            if "error" in message:
                error = message["error"]
                data = error.get("data") or {}
                raise ContenoxError.from_wire({**data, "message": error.get("message", "")}) or RemoteError(error)
            return message.get("result")


    def _answer(self, message: dict[str, Any], on_request: Callable[[str, Any], Any] | None) -> None:
        if on_request is None:
            self.frames.send({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": f"this client does not handle {message['method']}"}})
            return
        self.frames.send({"jsonrpc": "2.0", "id": message["id"],
                          "result": on_request(str(message["method"]), message.get("params"))})


@contextlib.contextmanager
def _client(config: Config, *, start: bool = True) -> Iterator[NodeClient | None]:
    sock = connect(config, start=start)
    if sock is None:
        yield None
        return
    with NodeClient(sock) as client:
        yield client


def call(config: Config, method: str, params: dict[str, Any] | None = None, *, start: bool = True,
         on_notification: Callable[[str, Any], None] | None = None,
         on_request: Callable[[str, Any], Any] | None = None) -> tuple[bool, Any]:
    """(whether a node answered, the result). A node that dies before answering anything (it was
    killed while this client connected) is replaced once: the request never reached a live node."""
    for attempt in (1, 2):
        with _client(config, start=start) as client:
            if client is None:
                return False, None
            heard = False

            def relay(name: str, value: Any) -> None:
                nonlocal heard
                heard = True
                if on_notification is not None:
                    on_notification(name, value)

            try:
                return True, client.call(method, params, relay, on_request)
            except NodeUnavailable:
                if heard or attempt == 2:
                    raise
        time.sleep(0.2)
    raise AssertionError("unreachable")


def replace_stale_node(config: Config, *, wait_s: float = 30.0) -> str | None:
    """When the running node is another build than this process (an upgrade, a changed checkout): stop it if
    nobody else uses it, so the next call starts this build; if it is in use, leave it. What happened, in a
    sentence for the user; None when the node is this build (or none runs)."""
    try:
        recorded = json.loads(build_path(config).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    theirs, pid, mine = recorded.get("build"), recorded.get("pid"), build_id()
    if not isinstance(theirs, str) or theirs == mine or not isinstance(pid, int) or not pid_alive(pid):
        return None
    answered, status = call(config, "status", start=False)
    if not answered or not isinstance(status, dict) or status.get("build") in (None, mine):
        return None
    if not _stop_if_idle(config, status, wait_s):
        return (f"the running node (pid {pid}) is build {theirs} and this is {mine}; it is in use, so it keeps "
                "running: run `contenox node stop` when it is idle to start this build")
    return f"restarted the node: it was build {theirs}, this is {mine}"


def _stop_if_idle(config: Config, status: dict[str, Any], wait_s: float) -> bool:
    """Stop the node ``status`` describes unless another client uses it; whether it stopped."""
    queue = status.get("queue") or {}
    if (int(status.get("clients", 0)) > 1 or queue.get("active") or queue.get("waiting")
            or any(w.get("busy") for w in status.get("workspaces", []))):
        return False
    call(config, "stop", start=False)
    deadline = time.monotonic() + wait_s
    while pid_alive(int(status["pid"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def switch_node_model(config: Config, name: str) -> str | None:
    """After the default model changed to ``name``: a running node switches to it (the next question loads
    it). What happened, for the user; None when no node runs."""
    try:
        answered, _ = call(config, "use_model", {"name": name}, start=False)
    except ContenoxError as exc:
        return f"the running node keeps its model for now: {exc.message}"
    return f"the running node now serves {name} (loaded with the next question)" if answered else None
