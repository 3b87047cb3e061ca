"""End to end: ``textDocument/inlineCompletion`` through the real ``contenox lsp --stdio`` proxy and a real node on
Qwen2.5-Coder-0.5B (the test model SmolLM2 has no fill-in-the-middle tokens)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from contenox.runtime_ov.store import InstalledModel
from support import gitrepo
from support.lsp_client import request, start_window
from support.lsp_e2e_kit import NodeHome

pytestmark = pytest.mark.slow

MAIN = 'from util import helper\n\n\ndef doubled(x: int) -> int:\n    """helper(x), twice."""\n    \n'


@pytest.fixture(scope="module")
def fim_home(fim_model: InstalledModel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeHome]:
    home = tmp_path_factory.mktemp("fim-lsp-home")
    (home / "models").mkdir()
    (home / "models" / fim_model.name).symlink_to(fim_model.path, target_is_directory=True)
    (home / "config.toml").write_text(f'[model]\ndefault = "{fim_model.name}"\n\n[engine]\ncache_size_gb = 0.5\n\n'
                                      "[node]\nidle_exit_s = 120\n", encoding="utf-8")
    node = NodeHome(home, Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp")))
    yield node
    node.stop()
    shutil.rmtree(node.runtime, ignore_errors=True)


async def test_ghost_text_at_the_cursor_and_a_cancelled_keystroke(fim_home: NodeHome, tmp_path: Path) -> None:
    repo = gitrepo.make_repo(tmp_path / "repo", {**gitrepo.TINY_APP, "main2.py": MAIN})
    client, rec = await start_window(repo, fim_home.env)
    try:
        assert rec.initialized is not None and rec.initialized.capabilities.inline_completion_provider
        info = await request(client, "contenox/completionInfo", {})
        assert info["available"] is True and info["model"] == "qwen2.5-coder-0.5b"
        uri = (repo / "main2.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=MAIN)))
        position = types.Position(line=5, character=4)
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position,
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic))

        # a keystroke's request cancelled by the next one: the editor gets RequestCancelled, the node carries on
        msg_id = f"inline-{uuid.uuid4().hex[:6]}"
        stale = asyncio.ensure_future(client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id))
        await asyncio.sleep(0.2)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        with pytest.raises(JsonRpcException) as cancelled:
            await asyncio.wait_for(stale, 120)
        assert cancelled.value.code == -32800

        result = await asyncio.wait_for(client.text_document_inline_completion_async(params), 300)
        assert isinstance(result, types.InlineCompletionList) and len(result.items) == 1
        item = result.items[0]
        assert isinstance(item.insert_text, str) and item.insert_text.strip()
        assert item.range is not None and item.range.start == position == item.range.end
        assert "\ndef " not in item.insert_text
    finally:
        await client.shutdown_session()
        await client.stop()
