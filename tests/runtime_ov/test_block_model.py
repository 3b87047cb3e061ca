"""The block model mirrors OpenVINO's prefix cache: full 32-token blocks, chained, LRU, head first."""

from __future__ import annotations

import pytest

from contenox.runtime_ov.block_model import BlockModel


def ids(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


def test_empty_model_predicts_nothing() -> None:
    assert BlockModel(100).predict(ids(0, 500)) == 0


def test_commit_then_predict_counts_full_blocks_only() -> None:
    model = BlockModel(100)
    model.commit(ids(0, 100))  # 3 full blocks and a partial one
    assert model.predict([*ids(0, 100), 7, 8, 9]) == 96
    assert model.predict(ids(0, 50)) == 32
    assert model.used_blocks == 4  # the partial block holds a slot too


def test_last_prompt_token_is_always_recomputed() -> None:
    model = BlockModel(100)
    model.commit(ids(0, 64))
    assert model.predict(ids(0, 64)) == 32  # the full match still leaves the last block to compute
    assert model.predict(ids(0, 65)) == 64


def test_edit_at_k_keeps_floor_k_over_32_blocks() -> None:
    model = BlockModel(100)
    prompt = ids(0, 1000)
    model.commit(prompt)
    for k in (0, 31, 32, 500, 960):
        edited = [*prompt[:k], -1, *prompt[k + 1:]]
        assert model.predict(edited) == (k // 32) * 32


def test_a_different_prefix_does_not_match_equal_later_blocks() -> None:
    model = BlockModel(100)
    model.commit(ids(0, 128))
    shifted = [99999, *ids(1, 127)]
    assert model.predict(shifted) == 0


def test_lru_eviction_keeps_the_recently_used_prompt() -> None:
    model = BlockModel(8)
    a, b, c = ids(0, 128), ids(10_000, 128), ids(20_000, 128)  # 4 blocks each
    model.commit(a)
    model.commit(b)
    assert model.predict([*a, 1]) == 128 and model.predict([*b, 1]) == 128
    model.commit(a)  # touch a: b becomes least recently used
    model.commit(c)
    assert model.predict([*a, 1]) == 128
    assert model.predict([*c, 1]) == 128
    assert model.predict([*b, 1]) == 0
    assert model.used_blocks == 8


def test_pressure_evicts_a_chain_head_first_so_the_whole_chain_is_lost() -> None:
    model = BlockModel(5)
    model.commit(ids(0, 128))  # 4 blocks
    model.commit(ids(10_000, 64))  # 2 more: the oldest block, the first chain's head, must go
    assert model.predict([*ids(0, 128), 1]) == 0
    assert model.predict([*ids(10_000, 64), 1]) == 64


def test_a_re_touched_head_outlives_its_tail() -> None:
    model = BlockModel(6)
    model.commit(ids(0, 160))  # 5 blocks
    model.commit(ids(0, 64))  # the head 2 blocks are now the most recent of that chain
    model.commit(ids(10_000, 96))  # 3 more: the chain's 3 tail blocks go
    assert model.predict([*ids(0, 160), 1]) == 64


def test_a_partial_last_block_takes_a_slot() -> None:
    model = BlockModel(4)
    model.commit(ids(0, 64), occupied_tokens=70)  # 2 full blocks + 1 partial slot
    assert model.used_blocks == 3
    model.commit(ids(10_000, 32))  # the 4th slot
    model.commit(ids(20_000, 32))  # evicts the oldest: the first chain's head
    assert model.predict([*ids(0, 64), 1]) == 0


def test_invalid_capacity() -> None:
    with pytest.raises(ValueError):
        BlockModel(0)
