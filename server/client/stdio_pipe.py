"""The stdio side of a protocol connection to the node: bytes piped both ways, untouched.

``contenox lsp`` and ``contenox acp`` are this pipe: the editor or agent client speaks its protocol
on stdio and the node answers on the socket.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading

from contenox.client.node_client import ensure_node
from contenox.config import Config

__all__ = ["pipe_stdio", "pump"]

log = logging.getLogger(__name__)
_CHUNK = 1 << 16


def _upstream(stdin_fd: int, sock: socket.socket) -> None:
    try:
        while data := os.read(stdin_fd, _CHUNK):
            sock.sendall(data)
    except OSError as exc:
        log.debug("stdin -> node stopped: %s", exc)
    finally:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)


def pump(sock: socket.socket, stdin_fd: int, stdout_fd: int) -> int:
    """Copy stdin -> socket (a daemon thread) and socket -> stdout until the node closes the connection."""
    threading.Thread(target=_upstream, args=(stdin_fd, sock), name="stdin->node", daemon=True).start()
    try:
        while data := sock.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(stdout_fd, view):]
    except OSError as exc:  # the editor went away (EPIPE) or the node reset the connection
        log.debug("node -> stdout stopped: %s", exc)
    finally:
        sock.close()
    return 0


def pipe_stdio(config: Config, protocol: str) -> int:
    """Connect to the node (starting it under its lock if none runs) and pipe stdio to ``protocol`` there."""
    sock = ensure_node(config, protocol)
    return pump(sock, sys.stdin.fileno(), sys.stdout.fileno())
