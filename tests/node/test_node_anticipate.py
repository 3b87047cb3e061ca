"""Anticipated context on the real default model, in process: the code at the user's place is prefilled before
the question, and the question's turn finds it cached, laid out first, byte for byte."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from contenox.config import load_config
from contenox.node import Node, TurnRequest
from contenox.node.contract import AnticipationStatus
from support import gitrepo
from support.nodekit import write_config

pytestmark = pytest.mark.slow

FILES = {
    "bank/accounts.py": "class Account:\n    def __init__(self, owner, balance=0):\n        self.owner = owner\n"
                        "        self.balance = balance\n\n    def deposit(self, amount):\n        if amount <= 0:\n"
                        "            raise ValueError('amount must be positive')\n        self.balance += amount\n\n"
                        "    def withdraw(self, amount):\n        if amount > self.balance:\n"
                        "            raise ValueError('insufficient funds')\n        self.balance -= amount\n",
    "bank/transfer.py": "from bank.accounts import Account\n\n\ndef transfer(src, dst, amount):\n"
                        "    src.withdraw(amount)\n    dst.deposit(amount)\n\n\n"
                        "def transfer_all(src, dst):\n    transfer(src, dst, src.balance)\n",
    "bank/report.py": "def summary(accounts):\n    return ', '.join(a.owner for a in accounts)\n",
    "main.py": "from bank.transfer import transfer\n\nprint(transfer)\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return gitrepo.make_repo(tmp_path / "repo", FILES)


def _node(home: Path) -> Node:
    """A node on the test model whose anticipation starts at once (no place delay, no typing pause)."""
    write_config(home, "[engine]\nmax_new_tokens = 8\ncache_size_gb = 0.5\n\n[anticipate]\ndelay_ms = 50\n"
                       "quiet_ms = 0\n")
    return Node(load_config(home))


async def _settled(node: Node, timeout: float = 120.0) -> dict[str, object]:
    """The node's anticipation status once no anticipation is planned or computing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = node.anticipator.status()
        states = [w["state"] for w in status["workspaces"].values()]
        if states and all(s in ("warm", "idle") for s in states) and not node.anticipator._tasks:
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"anticipation did not settle: {node.anticipator.status()}")


async def test_the_code_at_the_cursor_is_prefilled_before_the_question(home: Path, repo: Path) -> None:
    node = _node(home)
    seen: list[tuple[str, AnticipationStatus]] = []
    node.watch_anticipation(lambda client, status: seen.append((client, status)))
    try:
        await node.engine()  # anticipation never loads a model: the editor's first request did
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t", client_id="editor-1")
        status = await _settled(node)
        (entry,) = status["workspaces"].values()  # type: ignore[attr-defined]
        assert entry["state"] == "warm" and entry["tokens"] > 0 and entry["place"] == "bank/transfer.py:5"
        # what it computed: the stable segments (nothing was cached yet) and the code, counted apart
        assert status["prefilled_tokens"] > status["prefilled_code_tokens"] >= entry["tokens"] > 0
        assert [s.state for c, s in seen if c == "editor-1"] == ["computing", "warm"]
        assert seen[-1][1].path == "bank/transfer.py" and "warm for transfer.py" in seen[-1][1].text
        # the same place again (the cursor moved two lines): nothing new to do
        assert not await node.focus(str(repo), "bank/transfer.py", 7, thread="t", client_id="editor-1")

        outcome = await node.turn(TurnRequest(root=str(repo), prompt="What does this function do when the "
                                              "source account has too little money?", max_new_tokens=8, thread="t"))
        explain = outcome.explain
        anticipated = explain.anticipated
        assert anticipated is not None and anticipated.used >= 1
        retrieved = {s.kind: s for s in explain.segments}["retrieved"]
        block = node._engine.blocks.block_size  # type: ignore[union-attr]
        # everything the anticipation laid out first was served by the cache (up to the last partial block)
        assert anticipated.cached_tokens >= anticipated.anticipated_tokens - block > 0
        assert anticipated.cached_tokens == retrieved.cached and anticipated.retrieved_tokens == retrieved.tokens
        laid = [any(r.startswith("anticipated") for r in c.reasons) for c in explain.retrieved]
        assert laid[0] and laid == sorted(laid, reverse=True)  # the anticipated chunks first, then the question's
        selected = next(c for c in explain.retrieved if c.id == "bank/transfer.py:4-6")
        assert {"selected", "anticipated"} <= set(selected.reasons)  # the function at the cursor
        assert any("seeded retrieval" in note for note in explain.notes)
        assert "anticipated" in anticipated.summary() and f"{anticipated.cached_tokens:,} cached" in anticipated.summary()
        # measured by the engine: what it recomputed excludes the anticipated code
        assert explain.measured_recomputed_tokens is not None
        assert explain.measured_recomputed_tokens <= explain.totals.tokens - anticipated.cached_tokens + 256
    finally:
        await node.close()


async def test_a_question_in_another_thread_ignores_the_anticipation(home: Path, repo: Path) -> None:
    node = _node(home)
    try:
        await node.engine()
        await node.focus(str(repo), "bank/transfer.py", 5, thread="panel", client_id="editor-1")
        await _settled(node)
        outcome = await node.turn(TurnRequest(root=str(repo), prompt="What does summary() return?",
                                              max_new_tokens=8, thread="cli"))
        assert outcome.explain.anticipated is None
        assert not any("seeded retrieval" in note for note in outcome.explain.notes)
    finally:
        await node.close()


async def test_anticipation_off_in_the_config(home: Path, repo: Path) -> None:
    write_config(home, "[engine]\nmax_new_tokens = 8\ncache_size_gb = 0.5\n\n[anticipate]\nenabled = false\n")
    node = Node(load_config(home))
    try:
        assert not await node.focus(str(repo), "bank/transfer.py", 5, thread="t")
        assert node.anticipator.status()["workspaces"] == {}
    finally:
        await node.close()


FAILING_RUN = ("$ python -m pytest -q tests/test_transfer.py\n"
               "F\n"
               "    def test_transfer_all():\n"
               '  File "bank/transfer.py", line 10, in transfer_all\n'
               "    transfer(src, dst, src.balance)\n"
               '  File "bank/accounts.py", line 13, in withdraw\n'
               "    raise ValueError('insufficient funds')\n"
               "E   ValueError: insufficient funds\n"
               "1 failed in 0.02s")


async def test_a_failing_run_the_editor_saw_is_prefilled_and_goes_with_the_question(home: Path, repo: Path) -> None:
    node = _node(home)
    try:
        await node.engine()
        assert await node.focus(str(repo), "bank/transfer.py", 9, thread="t", terminal=FAILING_RUN + "\n")
        status = await _settled(node)
        (entry,) = status["workspaces"].values()  # type: ignore[attr-defined]
        assert entry["state"] == "warm" and entry["place"] == "bank/transfer.py:9, failing run"
        # the code and the run after it were computed: more than the code alone
        assert status["prefilled_tokens"] > status["prefilled_code_tokens"] + 60

        outcome = await node.turn(TurnRequest(root=str(repo), prompt="Why does this fail?", max_new_tokens=8,
                                              thread="t"))
        explain = outcome.explain
        segments = {s.kind: s for s in explain.segments}
        block = node._engine.blocks.block_size  # type: ignore[union-attr]
        # the question brought no output: the run the editor reported went with it, computed already
        assert segments["terminal"].tokens > 60 and segments["terminal"].cached >= segments["terminal"].tokens - block
        assert any("failing run ($ python -m pytest -q tests/test_transfer.py), reported by the editor" in note
                   for note in explain.notes)
        assert any(r.startswith("stack trace line") for c in explain.retrieved for r in c.reasons)
        # a question of another thread does not get it
        other = await node.turn(TurnRequest(root=str(repo), prompt="Why does this fail?", max_new_tokens=8,
                                            thread="cli"))
        assert {s.kind: s for s in other.explain.segments}["terminal"].tokens == 0
    finally:
        await node.close()


async def test_what_changed_between_turns_is_named_though_an_anticipation_refreshed_the_index_between(
        home: Path, repo: Path) -> None:
    """Each refresh of the index reports only what changed since the one before; an anticipation refreshes it
    too. The next turn still names every change since the last turn (the first edit, seen by the anticipation's
    refresh, and the second, seen by the turn's own), and the turn after that names none of them again."""
    node = _node(home)
    try:
        await node.turn(TurnRequest(root=str(repo), prompt="What does summary return?", max_new_tokens=8))
        (repo / "bank" / "report.py").write_text(FILES["bank/report.py"] + "\n\ndef total(accounts):\n"
                                                 "    return sum(a.balance for a in accounts)\n")
        await node.focus(str(repo), "bank/report.py", 4, thread="main")
        await _settled(node)  # its plan refreshed the index: the first edit was reported there
        (repo / "bank" / "transfer.py").write_text(FILES["bank/transfer.py"].replace("src.balance", "src.balance - 1"))
        outcome = await node.turn(TurnRequest(root=str(repo), prompt="What changed?", max_new_tokens=8))
        diff = next(s for s in outcome.explain.segments if s.kind == "diff")
        assert diff.invalidated_by is not None, outcome.explain.segments
        assert "bank/report.py" in diff.invalidated_by and "bank/transfer.py" in diff.invalidated_by
        again = await node.turn(TurnRequest(root=str(repo), prompt="And now?", max_new_tokens=8))
        named = " ".join(s.invalidated_by or "" for s in again.explain.segments)
        assert "bank/report.py" not in named and "bank/transfer.py" not in named
    finally:
        await node.close()


async def test_a_question_that_cuts_the_anticipation_short_is_laid_out_by_what_was_computed(
        home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The anticipation stops after its first piece of code (as if the question came then): the chunks the cache
    holds come first; the rest would cost the question their prefill, so they are its own chunks or left out."""
    node = _node(home)
    anticipator = node.anticipator
    real_quiet = anticipator._quiet

    def chunks_computed() -> int:
        (current,) = anticipator._current.values()
        engine = node._engine
        assert engine is not None
        return current.computed(engine.predict_cached(current.prefix_ids), engine.blocks.block_size)

    async def stop_after_some_code() -> None:
        if anticipator.prefilled_code_tokens > 0 and chunks_computed() >= 1:
            await asyncio.Event().wait()  # until the question's turn cancels it
        await real_quiet()

    monkeypatch.setattr(anticipator, "_quiet", stop_after_some_code)
    try:
        await node.engine()
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t", client_id="editor-1")
        deadline = time.monotonic() + 120
        while not (anticipator._current and chunks_computed() >= 1) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        (entry,) = anticipator.status()["workspaces"].values()
        assert entry["state"] == "computing" and 0 < anticipator.prefilled_code_tokens < entry["tokens"]
        (current,) = anticipator._current.values()
        assert 1 <= chunks_computed() < len(current.chunks)
        outcome = await node.turn(TurnRequest(root=str(repo), prompt="What does this function do when the "
                                              "source account has too little money?", max_new_tokens=8, thread="t"))
        anticipated = outcome.explain.anticipated
        assert anticipated is not None and anticipated.state == "computing" and anticipated.uncomputed >= 1
        assert anticipated.used + anticipated.kept >= 1 and anticipated.anticipated_tokens > 0
        assert "not computed yet when the question came" in anticipated.summary()
        block = node._engine.blocks.block_size  # type: ignore[union-attr]
        # what it laid out as anticipated was computed: the cache served it (up to the last partial block)
        assert anticipated.cached_tokens >= anticipated.anticipated_tokens - block
        laid = [c.id for c in outcome.explain.retrieved if "anticipated" in c.reasons]
        assert len(laid) == anticipated.used
    finally:
        await node.close()


async def test_typing_a_question_keeps_the_code_computed_for_the_place_first(home: Path, repo: Path) -> None:
    """The place was anticipated; the user begins typing a question there: the draft's anticipation keeps the
    place's computed code that it also wants first, so it only prefills what the draft adds."""
    node = _node(home)
    anticipator = node.anticipator
    try:
        await node.engine()
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t", client_id="editor-1")
        await _settled(node)
        (place,) = anticipator._current.values()
        before = anticipator.prefilled_code_tokens
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t", client_id="editor-1",
                                draft="Why does transfer_all move the whole balance, and what does summary print?")
        await _settled(node)
        (typed,) = anticipator._current.values()
        assert typed.focus.draft and typed.carried >= 1
        kept = [c.id for c in typed.chunks[: typed.carried]]
        assert kept == [c.id for c in place.chunks[: typed.carried]]  # in the place's order, byte for byte
        assert [c.text for c in typed.chunks[: typed.carried]] == [c.text for c in place.chunks[: typed.carried]]
        # what it prefilled of its code: only what follows the kept chunks (they were cached)
        kept_end = max(end for cid, end in typed._ends.items() if cid in kept)
        assert anticipator.prefilled_code_tokens - before <= typed.prefix - kept_end + 64
        engine = node._engine
        assert engine is not None
        assert typed.computed(engine.predict_cached(typed.prefix_ids), engine.blocks.block_size) == len(
            [c for c in typed.chunks if c.id in typed._ends or c.id in typed._held])
    finally:
        await node.close()


async def test_a_question_being_typed_is_anticipated_with_the_question_s_budget_not_the_place_s(
        home: Path, repo: Path) -> None:
    """The place's anticipation keeps to ``[anticipate] tokens``; the draft's retrieves as the question will."""
    write_config(home, "[engine]\nmax_new_tokens = 8\ncache_size_gb = 0.5\n\n[anticipate]\ndelay_ms = 50\n"
                       "quiet_ms = 0\ntokens = 60\n")
    node = Node(load_config(home))
    anticipator = node.anticipator
    try:
        await node.engine()
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t")
        await _settled(node)
        (place,) = anticipator._current.values()
        assert 0 < place.tokens < 120  # the code it chose under 60 tokens, with its framing
        assert await node.focus(str(repo), "bank/transfer.py", 5, thread="t",
                                draft="Why does transfer_all move the whole balance, and what does summary print?")
        await _settled(node)
        (typed,) = anticipator._current.values()
        assert typed.focus.draft and typed.tokens > 2 * place.tokens, (place.tokens, typed.tokens)  # all the code
    finally:
        await node.close()


async def test_a_draft_with_a_failing_run_pasted_after_it_is_anticipated_as_its_turn_will_be(
        home: Path, repo: Path) -> None:
    """A question typed and a failing run pasted after it in the chat box: the draft is split as the turn's
    question is (the run its terminal output), so the turn finds the run and the code computed."""
    node = _node(home)
    run = ("$ python -m pytest -q tests/test_transfer.py\nF\nbank/accounts.py:13: in withdraw\n"
           "    raise ValueError('insufficient funds')\nE   ValueError: insufficient funds\n1 failed in 0.02s")
    prompt = f"transfer_all fails with insufficient funds. Why?\n{run}"
    try:
        await node.engine()
        assert await node.focus(str(repo), "bank/transfer.py", 9, thread="t", draft=prompt)
        await _settled(node)
        (typed,) = node.anticipator._current.values()
        outcome = await node.turn(TurnRequest(root=str(repo), prompt=prompt, max_new_tokens=8, thread="t"))
        segments = {s.kind: s for s in outcome.explain.segments}
        assert segments["terminal"].tokens > 0 and segments["terminal"].cached == segments["terminal"].tokens
        anticipated = outcome.explain.anticipated
        assert anticipated is not None and anticipated.used >= 1 and typed.focus.draft == prompt
    finally:
        await node.close()
