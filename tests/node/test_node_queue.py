"""The turn queue: FIFO per client, round-robin across clients, one turn at a time per workspace."""

from __future__ import annotations

import asyncio

import pytest

from contenox.node.queue import TurnQueue


async def _run(queue: TurnQueue, order: list[str], name: str, client: str, workspace: str,
               release: asyncio.Event) -> None:
    async with queue.slot(client, workspace):
        order.append(name)
        await release.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_round_robin_across_clients_fifo_within_one() -> None:
    queue = TurnQueue(max_active=1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("a1", "a2", "a3", "b1", "c1")}
    tasks = [asyncio.create_task(_run(queue, order, "a1", "A", "w1", gates["a1"]))]
    await _settle()
    for name, client, ws in (("a2", "A", "w2"), ("a3", "A", "w3"), ("b1", "B", "w4"), ("c1", "C", "w5")):
        tasks.append(asyncio.create_task(_run(queue, order, name, client, ws, gates[name])))
        await _settle()
    assert order == ["a1"]
    assert [w["client"] for w in queue.snapshot()["waiting"]] == ["A", "A", "B", "C"]
    for name in ("a1", "a2", "b1", "c1", "a3"):
        gates[name].set()
        await _settle()
    await asyncio.gather(*tasks)
    assert order == ["a1", "a2", "b1", "c1", "a3"]  # A had its turn; B and C come before A's third


async def test_one_turn_per_workspace_other_workspaces_proceed() -> None:
    queue = TurnQueue(max_active=4)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("x1", "y1", "z1")}
    t1 = asyncio.create_task(_run(queue, order, "x1", "X", "shared", gates["x1"]))
    await _settle()
    t2 = asyncio.create_task(_run(queue, order, "y1", "Y", "shared", gates["y1"]))
    t3 = asyncio.create_task(_run(queue, order, "z1", "Z", "other", gates["z1"]))
    await _settle()
    assert order == ["x1", "z1"]  # y1 waits for the shared workspace; z1 does not wait for it
    gates["x1"].set()
    await _settle()
    assert order == ["x1", "z1", "y1"]
    gates["y1"].set()
    gates["z1"].set()
    await asyncio.gather(t1, t2, t3)
    assert queue.snapshot() == {"max_active": 4, "active": [], "waiting": []}


async def test_cancelled_while_waiting_leaves_the_queue() -> None:
    queue = TurnQueue(max_active=1)
    order: list[str] = []
    hold = asyncio.Event()
    first = asyncio.create_task(_run(queue, order, "first", "A", "w", hold))
    await _settle()
    waiting = asyncio.create_task(_run(queue, order, "waiting", "B", "w", asyncio.Event()))
    await _settle()
    assert len(queue.snapshot()["waiting"]) == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert queue.snapshot()["waiting"] == []
    hold.set()
    await first
    assert order == ["first"]
    assert queue.snapshot()["active"] == []
