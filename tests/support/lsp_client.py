"""A pytest-lsp client for ``contenox lsp --stdio`` that records Contenox's custom notifications."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from support.lsp_e2e_kit import PYTHON


class Recorded:
    def __init__(self) -> None:
        self.chunks: list[tuple[str, str]] = []
        self.statuses: list[dict[str, Any]] = []
        self.anticipations: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.initialized: types.InitializeResult | None = None
        """The server's reply to ``initialize`` (its capabilities)."""

    def text(self, chat_id: str) -> str:
        return "".join(t for c, t in self.chunks if c == chat_id)

    async def wait(self, predicate: Any, timeout: float = 120) -> None:
        async def ready() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(ready(), timeout)


def _client_with(recorded: Recorded) -> LanguageClient:
    client = make_test_lsp_client()
    converter = client.protocol._converter

    def action(obj: Any, _: Any) -> Any:  # lsprotocol decodes a CodeAction with a command as a Command
        is_action = isinstance(obj.get("command"), dict) or "kind" in obj
        return converter.structure(obj, types.CodeAction if is_action else types.Command)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], action)  # noqa: UP007

    @client.feature("$/contenox/chatChunk")
    def chunk(params: Any) -> None:
        recorded.chunks.append((params.chatId, params.text))
        recorded.changed.set()

    @client.feature("$/contenox/cacheStatus")
    def status(params: Any) -> None:
        recorded.statuses.append(plain(params))
        recorded.changed.set()

    @client.feature("$/contenox/anticipation")
    def anticipation(params: Any) -> None:
        recorded.anticipations.append(plain(params))
        recorded.changed.set()

    return client


async def start_window(root: Path, env: dict[str, str]) -> tuple[LanguageClient, Recorded]:
    """A real ``contenox lsp --stdio`` subprocess (environment ``env``), initialized on ``root``."""
    recorded = Recorded()
    config = ClientServerConfig(server_command=[PYTHON, "-m", "contenox", "lsp", "--stdio"],
                                client_factory=lambda: _client_with(recorded), server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    recorded.initialized = await client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    return client, recorded


def plain(value: Any) -> Any:
    """pygls hands custom results over as namedtuples; tests read them as JSON dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


async def request(client: LanguageClient, method: str, params: Any, timeout: float = 300) -> Any:
    return plain(await asyncio.wait_for(client.protocol.send_request_async(method, params), timeout))


async def chat(client: LanguageClient, chat_id: str, prompt: str, **extra: Any) -> dict[str, Any]:
    result = await request(client, "contenox/chat", {"chatId": chat_id, "prompt": prompt, **extra})
    assert isinstance(result, dict)
    return result
