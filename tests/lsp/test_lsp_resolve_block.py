"""``contenox/resolveBlock`` (a chat code block's Apply) and ``$/contenox/chatProgress``, in-process over a socketpair.

The fake node runs the real edit resolver (``propose_edits`` + ``propagate_renames``) over the workspace's files,
so what comes back is what the node's machinery makes of the block: the definitions it replaces in the file its
heading names, renames carried to every use, a whole file only when the block is one."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from contenox.answer.resolve import whole_file_edit
from contenox.lsp import serve_connection
from contenox.workspace import SymbolInfo, SymbolLocation
from support.lsp_fake_node import FakeNode
from support.lsp_rpc_peer import RpcPeer

UTIL = "def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "util.py").write_text(UTIL)
    (root / "main.py").write_text("from util import helper\n\nprint(helper(1))\n")
    (root / "pkg" / "timed.py").write_text("def stamp(value):\n    return value\n\n\ndef age(value):\n    return 0\n")
    (root / "pkg" / "encoding.py").write_text("def encode(value):\n    return value\n")
    return root


@pytest.fixture
async def conn(workspace: Path) -> AsyncIterator[tuple[RpcPeer, FakeNode]]:
    node = FakeNode()
    a, b = socket.socketpair()
    sr, sw = await asyncio.open_unix_connection(sock=a)
    server = asyncio.ensure_future(serve_connection(sr, sw, node))
    cr, cw = await asyncio.open_unix_connection(sock=b)
    peer = RpcPeer(cr, cw)
    await peer.request("initialize", {"processId": None, "rootUri": workspace.as_uri(),
                                      "capabilities": {"window": {"workDoneProgress": True}}})
    peer.notify("initialized", {})
    yield peer, node
    await peer.close()
    await asyncio.wait_for(server, 10)


async def _resolve(peer: RpcPeer, **params: Any) -> dict[str, Any]:
    reply = await peer.request("contenox/resolveBlock", params)
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


async def test_a_block_headed_with_a_file_replaces_its_definition_there(conn: tuple[RpcPeer, FakeNode],
                                                                       workspace: Path) -> None:
    peer, node = conn
    block = "def stamp(value):\n    return f'{value}.stamped'\n"
    result = await _resolve(peer, text=block, heading="In `pkg/timed.py`:", question="stamp with a suffix",
                            lang="python")
    assert [e["path"] for e in result["edits"]] == ["pkg/timed.py"]  # not the editor's file, not encoding.py
    edit = result["edits"][0]
    assert edit["uri"] == (workspace / "pkg" / "timed.py").as_uri()
    assert edit["oldText"] == (workspace / "pkg" / "timed.py").read_text()
    assert edit["newText"] == ("def stamp(value):\n    return f'{value}.stamped'\n\n\ndef age(value):\n"
                               "    return 0\n")  # the definition replaced, the rest of the file kept
    assert "-    return value" in edit["diff"] and "+    return f'{value}.stamped'" in edit["diff"]
    assert result["wholeFile"] is False and result["named"] == "pkg/timed.py" and result["candidates"] == []
    assert node.resolved[-1][1].startswith("In `pkg/timed.py`:\n```python\n")
    assert node.resolved[-1][2] == "stamp with a suffix"
    assert (workspace / "pkg" / "timed.py").read_text().endswith("return 0\n")  # nothing written


async def test_a_rename_comes_back_as_every_files_diff(conn: tuple[RpcPeer, FakeNode], workspace: Path) -> None:
    peer, _ = conn
    result = await _resolve(peer, text="def plus_one(x):\n    return x + 1\n", heading="util.py",
                            question="Rename helper to plus_one everywhere")
    by_path = {e["path"]: e for e in result["edits"]}
    assert set(by_path) == {"util.py", "main.py"}
    assert "def plus_one(x):" in by_path["util.py"]["newText"] and "return plus_one(2)" in by_path["util.py"]["newText"]
    assert by_path["main.py"]["newText"] == "from util import plus_one\n\nprint(plus_one(1))\n"
    assert any("carried to every use" in note for note in result["notes"])


async def test_whole_file_only_when_the_block_is_one(conn: tuple[RpcPeer, FakeNode], workspace: Path) -> None:
    peer, _ = conn
    snippet = await _resolve(peer, text="x = 2\ny = 3\n", heading="util.py")
    assert snippet["edits"] == [] and snippet["wholeFile"] is False
    assert any("not the whole of util.py" in p for p in snippet["problems"])
    same = await _resolve(peer, text="def helper(x):\n    return x + 1\n", heading="util.py")  # what the file holds
    assert same["edits"] == [] and same["problems"] == [
        "the block repeats code util.py already has, as it is: nothing to change"]
    whole = UTIL.replace("return helper(2)", "return helper(3)") + "\n\nLIMIT = 10\n"
    result = await _resolve(peer, text=whole, heading="util.py")
    assert result["wholeFile"] is True and result["edits"][0]["newText"] == whole
    assert [e["path"] for e in result["edits"]] == ["util.py"]
    assert result["edits"][0]["newText"].endswith("LIMIT = 10\n")
    created = await _resolve(peer, text="def fresh():\n    return 1\n", heading="Create `pkg/fresh.py`:")
    assert [(e["path"], e["oldText"]) for e in created["edits"]] == [("pkg/fresh.py", None)]
    assert created["wholeFile"] is True and not (workspace / "pkg" / "fresh.py").exists()


async def test_a_block_naming_no_file_lists_the_files_defining_it(conn: tuple[RpcPeer, FakeNode],
                                                                  workspace: Path) -> None:
    peer, node = conn
    (workspace / "pkg" / "encoding.py").write_text("def helper(x):\n    return x\n")

    async def symbol_info(root: str, name: str) -> SymbolInfo | None:
        places = [p for p in ("util.py", "pkg/encoding.py") if f"def {name}(" in (workspace / p).read_text()]
        return SymbolInfo(name=name, definitions=tuple(
            SymbolLocation(name=name, kind="function", path=p, line=1, end_line=2, text="") for p in places),
            referenced_by=(), rank=0.0, rank_position=0, files_ranked=0) if places else None

    node.symbol_info = symbol_info  # type: ignore[method-assign]
    block = "def helper(x):\n    return x * 2\n"
    result = await _resolve(peer, text=block)
    assert result["edits"] == [] and result["named"] is None
    assert result["candidates"] == ["util.py", "pkg/encoding.py"]
    assert any("defined in 2 places" in p for p in result["problems"])
    picked = await _resolve(peer, text=block, path="pkg/encoding.py")  # the file the user picked
    assert [e["path"] for e in picked["edits"]] == ["pkg/encoding.py"]
    assert picked["edits"][0]["newText"] == "def helper(x):\n    return x * 2\n"
    unknown = await _resolve(peer, text="def nowhere():\n    pass\n")
    assert unknown["edits"] == [] and unknown["candidates"] == []


async def test_bad_params_are_invalid_requests(conn: tuple[RpcPeer, FakeNode]) -> None:
    peer, _ = conn
    for params in ({"text": "x", "path": "../etc/passwd"}, {"text": "x", "path": "/etc/passwd"}, {"text": ""},
                   {"text": "x", "heading": "a\nb"}, {"text": "x", "lang": "py thon"}):
        reply = await peer.request("contenox/resolveBlock", params)
        assert "error" in reply, params


async def test_the_chat_reports_its_prefill_progress_to_the_panel(conn: tuple[RpcPeer, FakeNode]) -> None:
    peer, _ = conn
    await peer.request("contenox/chat", {"chatId": "c9", "prompt": "hi"})
    progress = [n for n in peer.of("$/contenox/chatProgress") if n["chatId"] == "c9"]
    assert {"chatId": "c9", "state": "prefill", "text": "60 of 100 new prompt tokens computed", "done": 60,
            "total": 100} in progress
    assert progress[0]["state"] == "prefill" and progress[-1]["state"] == "decode"


def test_whole_file_edit() -> None:
    assert whole_file_edit("a.py", "x = 1\ny = 2\nz = 3\n", "x = 1\n") is None  # a snippet
    assert whole_file_edit("a.py", "x = 1\n", "x = 1\n") is None  # changes nothing
    assert whole_file_edit("a.py", "x = 1\ny = 2\n", "x = 1\n...\n") is None  # a placeholder
    edit = whole_file_edit("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3")
    assert edit is not None and edit.new_text == "x = 1\ny = 3\n" and edit.old_text == "x = 1\ny = 2\n"
    assert whole_file_edit("a.py", "import os\nA = 1\nB = 2\n", "print('hi')\nC = 3\nD = 4\n") is None  # unrelated
    two = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    assert whole_file_edit("a.py", two, "def a():\n    x = 1\n    y = 2\n    return 10\n") is None  # drops b
    new = whole_file_edit("b.py", None, "print(1)\n")
    assert new is not None and new.old_text is None and "new file mode" in new.diff
