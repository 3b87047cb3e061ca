"""End to end: the editor reports where the user is (``contenox/focus``), the node prefills the code there and says
so (``$/contenox/anticipation``), and the chat's next question finds it cached (the real proxy, node and model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import gitrepo
from support.lsp_client import chat, start_window
from support.lsp_e2e_kit import NodeHome

# A workspace of its own: the node is shared with the other end-to-end tests, whose prompts must not find this
# one's code in the cache (they measure their own prefill).
FILES = {"util.py": 'def helper(x):\n    """Add one."""\n    return x + 1\n',
         "main.py": "from util import helper\n\n\ndef run():\n    return helper(41)\n",
         "report.py": "from main import run\n\n\ndef report():\n    return f'run gives {run()}'\n"}

pytestmark = pytest.mark.slow


async def test_focus_anticipates_and_the_question_finds_its_code_cached(node_home: NodeHome, tmp_path: Path) -> None:
    repo = gitrepo.make_repo(tmp_path / "repo", FILES)
    client, rec = await start_window(repo, node_home.env)
    try:
        await chat(client, "chat-0", "Hello")  # the editor's first request loads the model
        main_uri = (repo / "main.py").as_uri()
        bad = {"uri": main_uri, "line": -3}  # a bad notification is logged, never answered, nothing breaks
        client.protocol.notify("contenox/focus", bad)
        client.protocol.notify("contenox/focus", {"uri": main_uri, "line": 4, "thread": "panel-a"})
        await rec.wait(lambda: any(a["state"] == "warm" for a in rec.anticipations))
        warm = [a for a in rec.anticipations if a["state"] == "warm"][-1]
        assert warm["uri"] == main_uri and warm["tokens"] > 0 and "warm for main.py" in warm["text"]
        states = [a["state"] for a in rec.anticipations]
        assert states[-1] == "warm" and set(states) <= {"computing", "warm"}  # computing first unless all cached

        result = await chat(client, "chat-1", "What does this function return?", thread="panel-a")
        anticipated = result["explain"]["anticipated"]
        assert anticipated is not None and anticipated["used"] >= 1 and anticipated["cached_tokens"] > 0
        laid = [c for c in result["explain"]["retrieved"] if "anticipated" in c["reasons"]]
        assert any(c["id"].startswith("main.py:") for c in laid)  # the function at the cursor, laid out first
        assert any("seeded retrieval" in note for note in result["explain"]["notes"])
    finally:
        await client.shutdown_session()
