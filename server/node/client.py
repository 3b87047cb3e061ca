"""The CLI's side of the node: connect (starting the daemon on demand) and speak the ``rpc`` protocol.

Each function prints to stdout and returns an exit code; errors are one line on stderr,
``contenox: <kind>: <message>``, never a traceback (exit 2; 130 when interrupted).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec

import msgspec

from contenox.config import Config
from contenox.errors import ContenoxError, InvalidRequest, NodeUnavailable, PeerNotAllowed
from contenox.node.framing import SocketFrames
from contenox.node.paths import ensure_private_dir, socket_dir, socket_path, spawn_lock_path

__all__ = ["NodeClient", "RemoteError", "ask", "connect", "ensure_node", "explain", "status", "stop"]

P = ParamSpec("P")

_START_TIMEOUT_S = 60.0
_KNOWN = {cls.kind: cls for cls in (PeerNotAllowed, NodeUnavailable, InvalidRequest)}


class RemoteError(ContenoxError):
    """An error answered by the node; ``kind`` and ``code`` are the node's."""

    def __init__(self, error: dict[str, Any]) -> None:
        data = error.get("data") or {}
        super().__init__(str(error.get("message", "node error")), **(data.get("details") or {}))
        self.code = int(error.get("code", -32000))  # type: ignore[misc]
        self.kind = str(data.get("kind", "node_error"))  # type: ignore[misc]


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
    logs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CONTENOX_HOME=config.home)
    with (logs / "node.out").open("ab") as out:
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
             on_notification: Callable[[str, Any], None] | None = None) -> Any:
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
            if message.get("id") not in (msg_id, None):
                continue
            if "error" in message:
                raise RemoteError(message["error"])
            return message.get("result")


def _command(func: Callable[P, int]) -> Callable[P, int]:
    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return func(*args, **kwargs)
        except ContenoxError as exc:
            if kwargs.get("json_output"):
                print(msgspec.json.encode({"error": exc.to_dict()}).decode())
            print(f"contenox: {exc.kind}: {exc.message}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("contenox: interrupted", file=sys.stderr)
            return 130
        except OSError as exc:
            print(f"contenox: node_unavailable: {exc}", file=sys.stderr)
            return 2

    return wrapper


@contextlib.contextmanager
def _client(config: Config, *, start: bool = True) -> Iterator[NodeClient | None]:
    sock = connect(config, start=start)
    if sock is None:
        yield None
        return
    with NodeClient(sock) as client:
        yield client


def _call(config: Config, method: str, params: dict[str, Any] | None = None, *, start: bool = True,
          on_notification: Callable[[str, Any], None] | None = None) -> tuple[bool, Any]:
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
                return True, client.call(method, params, relay)
            except NodeUnavailable:
                if heard or attempt == 2:
                    raise
        time.sleep(0.2)
    raise AssertionError("unreachable")


def render_explain_dict(explain: dict[str, Any]) -> str:
    """The explain-context table, through the planner's renderer when it can take this JSON."""
    try:
        from contenox.planner import Explain, render_explain

        return str(render_explain(msgspec.convert(explain, type=Explain)))
    except Exception:  # the planner renderer is optional here: fall back to a plain table
        return _plain_table(explain)


def _plain_table(explain: dict[str, Any]) -> str:
    lines = [f"{'segment':<14}{'tokens':>8}{'cached':>8}{'new':>8}  invalidated by"]
    for seg in explain.get("segments", []):
        lines.append(f"{seg.get('kind', ''):<14}{seg.get('tokens', 0):>8}{seg.get('cached', 0):>8}"
                     f"{seg.get('new', 0):>8}  {seg.get('invalidated_by') or ''}")
    totals = explain.get("totals", {})
    lines.append(f"{'total':<14}{totals.get('tokens', 0):>8}{totals.get('cached', 0):>8}{totals.get('new', 0):>8}"
                 f"  hit {totals.get('hit_pct', 0)}%  ttft {explain.get('ttft_ms', 0)} ms")
    return "\n".join(lines)


@_command
def ask(config: Config, cwd: Path, prompt: str, *, json_output: bool = False, pins: Sequence[str] = ()) -> int:
    """One turn for ``cwd``'s workspace: stream the answer, then the explain table (or one JSON object)."""

    def on_notification(method: str, params: Any) -> None:
        if method == "chunk" and not json_output and isinstance(params, dict):
            sys.stdout.write(str(params.get("text", "")))
            sys.stdout.flush()

    pinned = [str((cwd / p).resolve()) for p in pins]  # as the user typed them: relative to cwd
    _, result = _call(config, "ask", {"cwd": str(cwd), "prompt": prompt, "pins": pinned,
                                      "json": json_output}, on_notification=on_notification)
    if json_output:
        print(msgspec.json.encode(result).decode())
    else:
        print("\n")
        print(render_explain_dict(result.get("explain") or {}))
    return 0


@_command
def explain(config: Config, cwd: Path, json_output: bool = False) -> int:
    _, result = _call(config, "explain", {"cwd": str(cwd)})
    if json_output:
        print(msgspec.json.encode(result).decode())
    elif result is None:
        print("no turn yet in this workspace")
    else:
        print(render_explain_dict(result))
    return 0


@_command
def status(config: Config, json_output: bool = False) -> int:
    """The running node's status; says so (exit 1) when no node runs, without starting one."""
    running, result = _call(config, "status", start=False)
    if not running:
        if json_output:
            print(msgspec.json.encode({"running": False}).decode())
        else:
            print(f"no node running ({socket_path(config)})")
        return 1
    if json_output:
        print(msgspec.json.encode({"running": True, **result}).decode())
        return 0
    model = result["model"]
    print(f"node pid {result['pid']}, up {result['uptime_s']} s, {result['clients']} client(s)")
    print(f"model {model['name']}: {model['state']}" + (f" ({model['error']})" if model.get("error") else ""))
    cache = result.get("cache")
    if isinstance(cache, dict):
        print("cache " + ", ".join(f"{k} {v}" for k, v in cache.items()))
    queue = result["queue"]
    print(f"queue {len(queue['active'])} running, {len(queue['waiting'])} waiting")
    for ws in result["workspaces"]:
        print(f"  {ws['root']}  session {ws['session_id']}  {ws['turns']} turn(s)"
              + (f"  pins {', '.join(ws['pins'])}" if ws["pins"] else ""))
    return 0


@_command
def stop(config: Config) -> int:
    """Ask the running node to stop and wait until its socket is gone."""
    running, _ = _call(config, "stop", start=False)
    if not running:
        print("no node running")
        return 0
    path = socket_path(config)
    deadline = time.monotonic() + 30
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    print("node stopped" if not path.exists() else "node is still stopping")
    return 0
