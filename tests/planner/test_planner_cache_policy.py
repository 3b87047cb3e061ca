"""The cache policy on its LRU mirror: a flood of low-class turns does not evict a kept prefix."""

from __future__ import annotations

from contenox.planner import CachePolicy

BLOCK = 32


def _ids(seed: int, n: int) -> list[int]:
    return [seed * 100_000 + i for i in range(n)]


def _run(policy: CachePolicy, session: str, ids: list[int], *, use_policy: bool) -> list[str]:
    warmed = []
    if use_policy:
        for order in policy.before_request(session, ids, max_new_tokens=32):
            policy.observe([*order.token_ids, 7])  # what engine.warm computes: the prefix and one token
            warmed.append(order.session_id)
    policy.observe(ids + _ids(999, 32))
    return warmed


def _scenario(use_policy: bool) -> tuple[int, int, list[str]]:
    policy = CachePolicy(capacity_tokens=64 * BLOCK)  # 64 blocks
    prefix_a = _ids(1, 12 * BLOCK)
    policy.keep("ws-a", prefix_a, "high")
    _run(policy, "ws-a", prefix_a + _ids(2, 40), use_policy=use_policy)
    warmed: list[str] = []
    for turn in range(4):  # workspace B pastes large logs: 20 new blocks each
        warmed += _run(policy, "ws-b", _ids(3, 4 * BLOCK) + _ids(10 + turn, 16 * BLOCK), use_policy=use_policy)
    return policy.cached_tokens(prefix_a), len(prefix_a), warmed


def test_plain_lru_evicts_the_idle_workspace_prefix():
    cached, size, warmed = _scenario(use_policy=False)
    assert cached < size
    assert warmed == []


def test_policy_rewarms_the_prefix_before_the_flood_evicts_it():
    cached, size, warmed = _scenario(use_policy=True)
    assert cached == size
    assert warmed and set(warmed) == {"ws-a"}


def test_no_orders_while_the_cache_has_room():
    policy = CachePolicy(capacity_tokens=64 * BLOCK)
    policy.keep("ws-a", _ids(1, 4 * BLOCK))
    policy.observe(_ids(1, 4 * BLOCK))
    assert policy.before_request("ws-b", _ids(2, 10 * BLOCK)) == []


def test_higher_class_wins_when_not_all_prefixes_fit():
    policy = CachePolicy(capacity_tokens=64 * BLOCK, max_kept_fraction=0.25)  # kept prefixes: 16 blocks at most
    policy.keep("low", _ids(1, 12 * BLOCK), "medium")
    policy.keep("top", _ids(2, 12 * BLOCK), "highest")
    policy.observe(_ids(1, 12 * BLOCK))
    policy.observe(_ids(2, 12 * BLOCK))
    policy.observe(_ids(4, 30 * BLOCK))  # more recent traffic
    orders = policy.before_request("flood", _ids(3, 24 * BLOCK))  # evicts 14 blocks: all of low, some of top
    assert [o.session_id for o in orders] == ["top"]
    assert "would be evicted" in orders[0].reason


def test_after_request_lists_evicted_kept_prefixes():
    policy = CachePolicy(capacity_tokens=16 * BLOCK)
    policy.keep("ws-a", _ids(1, 8 * BLOCK))
    policy.observe(_ids(1, 8 * BLOCK))
    assert policy.after_request() == []
    policy.observe(_ids(2, 16 * BLOCK))
    assert [o.session_id for o in policy.after_request()] == ["ws-a"]
    policy.release("ws-a")
    assert policy.after_request() == []
