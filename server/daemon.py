"""``contenox node serve``: the per-user daemon on a private Unix socket.

The composition root: it builds the :class:`~contenox.node.Node` and hands each connection to its
protocol adapter. Single instance (an flock held for the daemon's life), socket directory 0700 and
socket 0600, peers checked with SO_PEERCRED (same uid only). Each connection names its protocol in its
first line, ``CONTENOX/1 lsp|acp|rpc``, and is served by :func:`contenox.lsp.serve_connection`,
:func:`contenox.acp.serve_connection` or :class:`contenox.rpc.RpcConnection`. SIGTERM/SIGINT and
``stop`` cancel in-flight turns, flush state and remove the socket; with no clients for
``node.idle_exit_s`` seconds the daemon exits by itself.

On a refused peer or an unknown protocol line the daemon writes one JSON-RPC error (``id: null``,
Content-Length framed) and closes the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import json
import logging
import logging.handlers
import os
import signal
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from contenox import acp, lsp
from contenox.buildinfo import build_id
from contenox.config import Config
from contenox.errors import ContenoxError, InvalidRequest, PeerNotAllowed
from contenox.jsonrpc import error_frame
from contenox.node import Node
from contenox.node.paths import build_path, daemon_lock_path, ensure_private_dir, socket_dir, socket_path
from contenox.node.persist import tighten_modes, write_atomic
from contenox.rpc import RpcConnection

__all__ = ["PROTOCOL_PREFIX", "Daemon", "peer_uid", "serve"]

log = logging.getLogger(__name__)

PROTOCOL_PREFIX = "CONTENOX/1"
_CLOSE_S = 5.0
_HANDSHAKE_TIMEOUT_S = 30.0
_REFUSE_LINGER_S = 2.0
_STREAM_LIMIT = 1 << 20
_PROTOCOLS = ("lsp", "acp", "rpc")


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


class Daemon:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.node = Node(config)
        self.socket_path = socket_path(config)
        self._stopping = asyncio.Event()
        self._connections: set[asyncio.Task[Any]] = set()
        self._ids = itertools.count(1)
        self._idle_since = 0.0

    def stop(self) -> None:
        self._stopping.set()

    def _tighten_modes(self) -> None:
        """State and logs the user's alone, also those an earlier version left readable: once per home (this
        version creates them private; a marker in state/ says the walk was done, so starts do not repeat it)."""
        marker = self.config.state_dir / ".private-v1"
        if marker.exists():
            return
        for root in (self.config.state_dir, Path(self.config.logs_dir)):
            changed = tighten_modes(root)
            if changed:
                shown = ", ".join(str(p.relative_to(root)) if p != root else str(root) for p in changed[:8])
                log.warning("made %d paths under %s private (0600 files, 0700 folders; an earlier version left them "
                            "readable by others): %s%s", len(changed), root, shown,
                            f" and {len(changed) - 8} more" if len(changed) > 8 else "")
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch(mode=0o600)

    async def run(self) -> int:
        ensure_private_dir(socket_dir(self.config))
        lock = self._acquire_lock()
        if lock is None:
            print(f"contenox: node_unavailable: a node is already running on {self.socket_path}", file=sys.stderr)
            return 1
        loop = asyncio.get_running_loop()
        self.node.recover_state()
        self._tighten_modes()
        write_atomic(build_path(self.config), json.dumps({"pid": os.getpid(), "build": build_id()}).encode())
        try:
            sock = self._bind()
            # logged before the socket listens: a client that got in finds the line already in node.log
            log.info("node %d serving on %s", os.getpid(), self.socket_path)
            server = await asyncio.start_unix_server(self._accept, sock=sock, limit=_STREAM_LIMIT)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
            self._idle_since = loop.time()
            self.node.start_rewarm()
            idle = loop.create_task(self._idle_watch(), name="node-idle")
            await self._stopping.wait()
            log.info("node stopping")
            idle.cancel()
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, idle, return_exceptions=True)
            await self.node.close()
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            lock.close()
        log.info("node stopped")
        return 0

    def _acquire_lock(self) -> Any:
        handle = daemon_lock_path(self.config).open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return handle

    def _bind(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # we hold the lock: any socket file left here is stale
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.socket_path))
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        return sock  # start_unix_server makes it listen

    async def _idle_watch(self) -> None:
        idle_s = self.config.node.idle_exit_s
        if idle_s <= 0:
            return
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(5.0, max(idle_s / 4, 0.05)))
            if self._connections:
                self._idle_since = loop.time()
            elif loop.time() - self._idle_since >= idle_s:
                log.info("no clients for %.0f s: exiting", idle_s)
                self.stop()
                return

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.node.clients += 1
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("connection failed")
        finally:
            self.node.clients -= 1
            self._connections.discard(task)
            self._idle_since = asyncio.get_running_loop().time()
            writer.close()
            try:  # buffered output to a peer that no longer reads would hold this forever
                await asyncio.wait_for(writer.wait_closed(), _CLOSE_S)
            except TimeoutError:
                writer.transport.abort()
            except Exception:
                pass

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, exc: ContenoxError) -> None:
        """Write one error, half-close, and swallow what the peer still sends (closing a Unix socket
        with unread input would reset the peer before it reads the error)."""
        log.warning("refusing connection: %s", exc.message)
        writer.write(error_frame(None, exc.code, exc.message, exc.kind, exc.details))
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
            async with asyncio.timeout(_REFUSE_LINGER_S):
                while await reader.read(65536):
                    pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock)
        if uid != os.getuid():
            await self._refuse(reader, writer, PeerNotAllowed(
                f"uid {uid} may not use the node of uid {os.getuid()}", uid=uid))
            return
        try:
            line = await asyncio.wait_for(reader.readline(), _HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, ValueError, asyncio.LimitOverrunError):
            return
        prefix, _, protocol = line.decode("utf-8", "replace").strip().partition(" ")
        protocol = protocol.strip()
        if prefix != PROTOCOL_PREFIX or protocol not in _PROTOCOLS:
            await self._refuse(reader, writer, InvalidRequest(
                f"expected '{PROTOCOL_PREFIX} lsp|acp|rpc', got {line[:80]!r}"))
            return
        client_id = f"{protocol}-{next(self._ids)}"
        log.info("client %s connected", client_id)
        if protocol == "rpc":
            await RpcConnection(reader, writer, self.node, client_id, self.stop).serve()
        elif protocol == "lsp":
            await lsp.serve_connection(reader, writer, self.node)
        else:
            await acp.serve_connection(reader, writer, self.node)
        log.info("client %s disconnected", client_id)


def _setup_logging(config: Config) -> None:
    logs = Path(config.logs_dir)
    logs.mkdir(mode=0o700, parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(logs / "node.log", maxBytes=5_000_000, backupCount=3)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for other in root.handlers:
        if other is not handler and isinstance(other, logging.StreamHandler) and other.level < logging.WARNING:
            other.setLevel(logging.WARNING)
    if root.level > logging.DEBUG:  # pygls logs whole message bodies (file contents) at INFO
        logging.getLogger("pygls").setLevel(logging.WARNING)


def serve(config: Config) -> int:
    """Run the node in the foreground until stopped; the exit code.

    State is persisted as it changes, so once the daemon has stopped nothing is left to flush: a
    worker thread still busy (a model load that was under way) does not hold the exit up.
    """
    os.umask(0o077)  # transcripts, sessions, indexes and logs are the user's alone: files 0600, folders 0700
    _setup_logging(config)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        code = loop.run_until_complete(Daemon(config).run())
        loop.run_until_complete(loop.shutdown_asyncgens())
    except ContenoxError as exc:
        log.error("node failed: %s", exc.message)
        print(f"contenox: {exc.kind}: {exc.message}", file=sys.stderr)
        return 2
    finally:
        asyncio.set_event_loop(None)
        loop.close()  # does not wait for worker threads (asyncio.run would)
    busy = []
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(timeout=0.5)
            if thread.is_alive():
                busy.append(thread.name)
    if busy:
        log.info("exiting without waiting for %s", ", ".join(busy))
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    from contenox.config import load_config

    sys.exit(serve(load_config()))
