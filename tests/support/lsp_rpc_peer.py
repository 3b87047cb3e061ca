"""A minimal Content-Length JSON-RPC peer for driving an LSP connection byte by byte in tests."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any


class RpcPeer:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ids = itertools.count(1)
        self.responses: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.answers: dict[str, Any] = {}
        """What server requests are answered with, by method (others: null)."""
        self.changed = asyncio.Condition()
        self.pump = asyncio.ensure_future(self._pump())

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def start_request(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        msg_id = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.responses[msg_id] = fut
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        _, fut = self.start_request(method, params)
        return await asyncio.wait_for(fut, 30)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def wait_notification(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        async def ready() -> list[dict[str, Any]]:
            async with self.changed:
                await self.changed.wait_for(lambda: len(self.of(method)) >= count)
            return self.of(method)
        return await asyncio.wait_for(ready(), 30)

    def of(self, method: str) -> list[dict[str, Any]]:
        return [n["params"] for n in self.notifications if n["method"] == method]

    async def _pump(self) -> None:
        while True:
            length = 0
            while True:
                line = await self.reader.readline()
                if not line:
                    return
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await self.reader.readexactly(length))
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answers.get(message["method"])})
            elif "method" in message:
                self.notifications.append(message)
            else:
                fut = self.responses.pop(message.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(message)
                elif message.get("id") is None:
                    self.notifications.append({"method": "<error>", "params": message})
            async with self.changed:
                self.changed.notify_all()

    async def close(self) -> None:
        self.writer.close()
        self.pump.cancel()
