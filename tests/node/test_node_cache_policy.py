"""The cache policy on the engine's block model: a flood of low-class turns does not evict a kept prefix.

The block model here is the real :class:`BlockModel`; ``_engine_run`` commits to it exactly what the
engine's runner commits when a request ends (prompt + generated[:-1], the last token's slot occupied).
"""

from __future__ import annotations

from contenox.node.cache_policy import CachePolicy
from contenox.runtime_ov.block_model import BlockModel, block_keys

BLOCK = 32


def _ids(seed: int, n: int) -> list[int]:
    return [seed * 100_000 + i for i in range(n)]


def _engine_run(blocks: BlockModel, prompt: list[int], generated: list[int]) -> None:
    blocks.commit(prompt + generated[:-1], occupied_tokens=len(prompt) + len(generated))


def _cached(blocks: BlockModel, ids: list[int]) -> int:
    return blocks.held(block_keys(ids, BLOCK)) * BLOCK


def _run(policy: CachePolicy, session: str, ids: list[int], *, use_policy: bool) -> list[str]:
    warmed = []
    if use_policy:
        for order in policy.before_request(session, ids, max_new_tokens=32):
            _engine_run(policy.blocks, order.token_ids, [7])  # engine.warm: the prefix and one token
            warmed.append(order.session_id)
    _engine_run(policy.blocks, ids, _ids(999, 32))
    return warmed


def _scenario(use_policy: bool) -> tuple[int, int, list[str]]:
    policy = CachePolicy(BlockModel(64, BLOCK))  # 64 blocks
    prefix_a = _ids(1, 12 * BLOCK)
    policy.keep("ws-a", prefix_a, "high")
    _run(policy, "ws-a", prefix_a + _ids(2, 40), use_policy=use_policy)
    warmed: list[str] = []
    for turn in range(4):  # workspace B pastes large logs: 20 new blocks each
        warmed += _run(policy, "ws-b", _ids(3, 4 * BLOCK) + _ids(10 + turn, 16 * BLOCK), use_policy=use_policy)
    return _cached(policy.blocks, prefix_a), len(prefix_a), warmed


def test_the_policy_reads_the_engines_block_model() -> None:
    blocks = BlockModel(64, BLOCK)
    policy = CachePolicy(blocks)
    assert policy.blocks is blocks
    assert (policy.capacity_blocks, policy.block_size) == (64, BLOCK)
    assert not hasattr(policy, "observe")


def test_plain_lru_evicts_the_idle_workspace_prefix() -> None:
    cached, size, warmed = _scenario(use_policy=False)
    assert cached < size
    assert warmed == []


def test_policy_rewarms_the_prefix_before_the_flood_evicts_it() -> None:
    cached, size, warmed = _scenario(use_policy=True)
    assert cached == size
    assert warmed and set(warmed) == {"ws-a"}


def test_no_orders_while_the_cache_has_room() -> None:
    policy = CachePolicy(BlockModel(64, BLOCK))
    policy.keep("ws-a", _ids(1, 4 * BLOCK))
    policy.blocks.commit(_ids(1, 4 * BLOCK))
    assert policy.before_request("ws-b", _ids(2, 10 * BLOCK)) == []


def test_pressure_counts_new_blocks_and_evicts_the_oldest_others() -> None:
    blocks = BlockModel(8, BLOCK)
    held = _ids(1, 6 * BLOCK)
    blocks.commit(held)
    assert blocks.pressure(held) == (0, set())  # all cached: nothing new, nothing evicted
    # two new prompt blocks, and 40 generated tokens take two more slots; the request touches its own
    # cached blocks, so it evicts none of them
    assert blocks.pressure(held + _ids(2, 2 * BLOCK), max_new_tokens=40) == (4, set())
    assert blocks.pressure(_ids(3, 4 * BLOCK)) == (4, set(block_keys(held, BLOCK)[:2]))  # the head goes first


def test_higher_class_wins_when_not_all_prefixes_fit() -> None:
    policy = CachePolicy(BlockModel(64, BLOCK), max_kept_fraction=0.25)  # kept prefixes: 16 blocks at most
    policy.keep("low", _ids(1, 12 * BLOCK), "medium")
    policy.keep("top", _ids(2, 12 * BLOCK), "highest")
    policy.blocks.commit(_ids(1, 12 * BLOCK))
    policy.blocks.commit(_ids(2, 12 * BLOCK))
    policy.blocks.commit(_ids(4, 30 * BLOCK))  # more recent traffic
    orders = policy.before_request("flood", _ids(3, 24 * BLOCK))  # evicts 14 blocks: all of low, some of top
    assert [o.session_id for o in orders] == ["top"]
    assert "would be evicted" in orders[0].reason


def test_after_request_lists_evicted_kept_prefixes() -> None:
    policy = CachePolicy(BlockModel(16, BLOCK))
    policy.keep("ws-a", _ids(1, 8 * BLOCK))
    policy.blocks.commit(_ids(1, 8 * BLOCK))
    assert policy.after_request() == []
    policy.blocks.commit(_ids(2, 16 * BLOCK))
    assert [o.session_id for o in policy.after_request()] == ["ws-a"]
    policy.release("ws-a")
    assert policy.after_request() == []
