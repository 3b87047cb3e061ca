"""Grounded turns on the real default model, in process: the question's code is retrieved into the prompt,
the answer's citations are checked, and a second turn of the thread reuses everything before its question."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from contenox.config import load_config
from contenox.node import Node, TurnRequest

pytestmark = pytest.mark.slow

FILES = {
    "bank/accounts.py": "class Account:\n    def __init__(self, owner, balance=0):\n        self.owner = owner\n"
                        "        self.balance = balance\n\n    def deposit(self, amount):\n        if amount <= 0:\n"
                        "            raise ValueError('amount must be positive')\n        self.balance += amount\n",
    "bank/transfer.py": "from bank.accounts import Account\n\n\ndef transfer(src, dst, amount):\n"
                        "    src.balance -= amount\n    dst.deposit(amount)\n",
    "bank/report.py": "def summary(accounts):\n    return ', '.join(a.owner for a in accounts)\n",
    "main.py": "from bank.transfer import transfer\n\nprint(transfer)\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "bank"]):
        subprocess.run(cmd, cwd=root, check=True, env=env)
    return root


async def test_retrieved_code_enters_once_and_the_next_turn_reuses_it(home: Path, repo: Path) -> None:
    node = Node(load_config(home))
    try:
        ask = "Why can transfer() leave the source account with a negative balance?"
        first = await node.turn(TurnRequest(root=str(repo), prompt=ask, max_new_tokens=12, thread="t"))
        chunks = first.explain.retrieved
        assert [c.id for c in chunks][:2] == ["bank/transfer.py:4-6", "bank/accounts.py:6-9"]
        assert "defines transfer (mentioned)" in chunks[0].reasons
        assert all(c.status == "new" and c.tokens > 0 for c in chunks)
        assert {"bank/transfer.py", "bank/accounts.py"} <= set(first.files_in_prompt)
        assert first.explain.citations is not None  # the answer was checked against the workspace
        by_kind = {s.kind: s for s in first.explain.segments}
        assert by_kind["retrieved"].tokens > sum(c.tokens for c in chunks) > 0  # the chunks and their heading
        assert by_kind["tools"].tokens == 0 and any(n.startswith("tools: not advertised") for n in first.explain.notes)

        again = await node.turn(TurnRequest(root=str(repo), prompt=ask, max_new_tokens=12, thread="t"))
        explain = again.explain
        assert [c.id for c in explain.retrieved] == [c.id for c in chunks]
        assert all(c.status == "in thread" and c.tokens == 0 for c in explain.retrieved)
        segs = {s.kind: s for s in explain.segments}
        history = segs["history"]
        # everything before the question was served from the cache: the stable prefix and the whole first
        # turn (but the answer's last token, which the engine never computed, and the block after it)
        assert all(s.cached == s.tokens for s in explain.segments if s.kind in
                   ("system", "tools", "policy", "instructions", "repo_map", "pins"))
        assert history.cached >= history.tokens - 64 and history.tokens > segs["retrieved"].tokens
        assert explain.totals.cached >= sum(s.tokens for s in explain.segments[:7]) - 64
        assert any("2 chunk(s)" in n or "chunk(s) already in the thread" in n for n in explain.notes)
    finally:
        await node.close()
