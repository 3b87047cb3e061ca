"""End to end: pytest-lsp drives the real ``contenox lsp --stdio`` proxy, the real node and the real model."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support import gitrepo
from support.lsp_client import chat, plain, request, start_window
from support.lsp_e2e_kit import NodeHome, make_repo

pytestmark = pytest.mark.slow


async def test_lsp_hover_code_action_chat_cache_status_and_cancel(node_home: NodeHome, tmp_path: Path) -> None:
    # the tiny app plus a file of its own: the shared node anticipated the tiny app's code for earlier tests (an ACP
    # answer's cited file), and this test measures its own prefill's progress
    repo = gitrepo.make_repo(tmp_path / "repo", {**gitrepo.TINY_APP, "notes.py": "NOTES = 'the lsp e2e test'\n"})
    client, rec = await start_window(repo, node_home.env)
    try:
        main_uri = (repo / "main.py").as_uri()
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=main_uri), position=types.Position(line=4, character=12)))
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert "`helper`" in hover.contents.value and "util.py" in hover.contents.value

        util_uri = (repo / "util.py").as_uri()
        selection = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=16))
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=util_uri), range=selection,
            context=types.CodeActionContext(diagnostics=[])))
        assert actions is not None
        titles = [a.title for a in actions]
        assert titles == ["Explain selection", "Find related code", "Ask Contenox about selection"]
        explain_action = actions[0]
        assert isinstance(explain_action, types.CodeAction) and explain_action.command is not None
        args = list(explain_action.command.arguments or [])
        args[0] = {**args[0], "chatId": "explain-1"}
        result = plain(await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=explain_action.command.command, arguments=args)), 300))
        assert result["text"] == rec.text("explain-1") and result["text"]
        first = result["explain"]
        assert first["totals"]["tokens"] > 0 and first["workspace"] == str(repo)
        await rec.wait(lambda: any(s["state"] == "idle" for s in rec.statuses))
        idle = [s for s in rec.statuses if s["state"] == "idle"][-1]
        assert idle["promptTokens"] == first["totals"]["tokens"] and idle["workspace"] == str(repo)
        assert any(s["state"] == "prefill" for s in rec.statuses)
        reports = [v for values in client.progress_reports.values() for v in values]
        kinds = [type(v).__name__ for v in reports]
        assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
        # the prefill reports how far it has got after each step, as a percentage of the prompt
        steps = [v for v in reports if isinstance(v, types.WorkDoneProgressReport) and v.percentage is not None]
        assert steps and all("new prompt tokens computed" in (v.message or "") for v in steps)
        percentages = [v.percentage or 0 for v in steps]
        assert percentages == sorted(percentages) and 0 < percentages[-1] < 100

        second = await chat(client, "chat-2", "What does helper return?")
        assert second["text"] == rec.text("chat-2")
        assert second["explain"]["turn"] == first["turn"] + 1
        assert second["explain"]["totals"]["cached"] > 0  # the stable prefix of the first turn was reused

        explain = await request(client, "contenox/explainContext", {"uri": util_uri})
        assert explain == second["explain"]
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=main_uri), position=types.Position(line=4, character=12)))
        assert hover is not None and "cached" in hover.contents.value  # type: ignore[union-attr]

        msg_id = f"long-{uuid.uuid4().hex[:6]}"
        long = asyncio.ensure_future(client.protocol.send_request_async(
            "contenox/chat", {"chatId": "long", "prompt": "Count from 1 to 500, one number per line.",
                              "maxNewTokens": 400}, msg_id=msg_id))
        await rec.wait(lambda: bool(rec.text("long")))
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        with pytest.raises(JsonRpcException) as cancelled:
            await asyncio.wait_for(long, 120)
        assert cancelled.value.code == -32800

        after = await chat(client, "after", "Say hi.")
        assert after["explain"]["turn"] > second["explain"]["turn"]  # the cancelled turn did not break the node
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_killed_window_loses_its_turn_and_the_other_window_carries_on(node_home: NodeHome,
                                                                            tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (doomed, drec), (other, orec) = await asyncio.gather(start_window(repo, node_home.env), start_window(repo, node_home.env))
    try:
        turn = asyncio.ensure_future(doomed.protocol.send_request_async("contenox/chat", {
            "chatId": "long", "prompt": "Count from 1 to 500, one number per line.", "maxNewTokens": 400}))
        await drec.wait(lambda: bool(drec.text("long")))
        assert len((await asyncio.to_thread(node_home.queue))["active"]) == 1
        assert doomed._server is not None
        doomed._server.kill()  # the editor window dies mid-decode: its proxy and connection go away
        turn.cancel()
        for _ in range(600):
            if not (await asyncio.to_thread(node_home.queue))["active"]:
                break
            await asyncio.sleep(0.1)
        assert (await asyncio.to_thread(node_home.queue))["active"] == []
        answer = await chat(other, "still-here", "Say hi.")
        assert answer["text"] == orec.text("still-here")
    finally:
        with contextlib.suppress(Exception):
            await doomed.stop()
        await other.shutdown_session()
        await other.stop()
