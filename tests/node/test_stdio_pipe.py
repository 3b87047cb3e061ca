"""The stdio <-> socket pump (client.stdio_pipe) behind ``contenox lsp`` / ``contenox acp``, on real pipes and a socketpair."""

from __future__ import annotations

import os
import socket
import threading

from contenox.client import pump


def test_pump_copies_both_ways_byte_for_byte() -> None:
    pump_fn = pump
    node_end, proxy_end = socket.socketpair()
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(pump_fn(proxy_end, stdin_r, stdout_w)))
    thread.start()
    payload = b"Content-Length: 2\r\n\r\n{}" * 1000 + bytes(range(256))
    os.write(stdin_w, payload)
    os.close(stdin_w)  # the editor closed stdin: the proxy half-closes the socket
    received = b""
    while chunk := node_end.recv(1 << 16):
        received += chunk
    assert received == payload
    node_end.sendall(b"\x00reply\xff" * 5000)
    node_end.close()  # the node closed the connection: the proxy exits 0
    thread.join(10)
    os.close(stdout_w)
    out = b""
    while chunk := os.read(stdout_r, 1 << 16):
        out += chunk
    os.close(stdout_r)
    assert out == b"\x00reply\xff" * 5000
    assert result == [0]

