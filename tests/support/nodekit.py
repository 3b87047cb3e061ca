"""Helpers for node tests: find, wait for and kill the node; raw connections for bad input."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

from contenox import client
from contenox.config import Config, load_config
from contenox.jsonrpc import SocketFrames, encode_frame
from contenox.node.paths import daemon_lock_path


def node_pid(config: Config) -> int | None:
    try:
        text = daemon_lock_path(config).read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def pid_alive(pid: int) -> bool:
    """True until the process is fully gone: a multi-threaded process's leader turns zombie while its
    other threads (and its open sockets) still live, so a zombie counts as gone only once reaped."""
    try:
        reaped, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: gone when /proc no longer lists it
        return os.path.exists(f"/proc/{pid}")
    return reaped != pid


def wait_gone(pid: int, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def kill_node(config: Config) -> None:
    pid = node_pid(config)
    if pid is None or not pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    if not wait_gone(pid, 30):
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid, 10)


def write_config(home: Path, text: str) -> Config:
    """Write ``text`` as the home's config; the test model stays the default unless ``text`` names one."""
    if "[model]" not in text:
        text = '[model]\ndefault = "smollm2-135m"\n\n' + text
    (home / "config.toml").write_text(text, encoding="utf-8")
    return load_config(home)


class RawConnection:
    """A raw ``rpc`` connection for sending bad bytes and reading whatever comes back."""

    def __init__(self, config: Config, protocol: str = "rpc") -> None:
        sock = client.ensure_node(config, protocol)
        sock.settimeout(60)
        self.frames = SocketFrames(sock)
        self.sock = sock

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, message: Any) -> None:
        self.sock.sendall(encode_frame(message))

    def send_json_text(self, body: bytes) -> None:
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive(self) -> Any:
        return self.frames.receive()

    def request(self, msg_id: int, method: str, params: Any = None) -> Any:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        while True:
            message = self.receive()
            if message.get("id") == msg_id:
                return message

    def close(self) -> None:
        self.frames.close()


def connect_plain(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    return sock


