"""A planner with an engine's prefix cache beside it, for planner tests that run no engine.

The planner keeps no model of the engine's cache: every caller passes ``predict_cached`` (the node and the
benches pass the engine's). :class:`MirroredPlanner` is the real :class:`~contenox.planner.Planner` with a real
:class:`~contenox.runtime_ov.block_model.BlockModel` standing for the engine: each plan is predicted by it, and
each recorded turn's prompt (with its tool steps) and answer are committed to it, as an engine that ran the turn
would hold them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contenox.planner import Explain, Planner, PlannerInputs, TurnPlan
from contenox.planner.planner import PredictCached
from contenox.runtime_ov.block_model import BlockModel

__all__ = ["MirroredPlanner"]


class MirroredPlanner(Planner):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache = BlockModel(capacity_blocks=1 << 16, block_size=self.identity.cache_block_size)

    def predict(self, ids: Sequence[int]) -> int:
        """What the standing-in engine's cache would serve of ``ids``."""
        return self.cache.predict(ids)

    def plan(self, inputs: PlannerInputs, predict_cached: PredictCached | None = None) -> TurnPlan:
        return super().plan(inputs, predict_cached or self.cache.predict)

    def record(self, plan: TurnPlan, metrics: Any, answer_text: str, *args: Any, **kwargs: Any) -> Explain:
        explain = super().record(plan, metrics, answer_text, *args, **kwargs)
        steps = kwargs.get("steps", args[1] if len(args) > 1 else ())
        prompt = self.step_ids(plan, steps) if steps else plan.token_ids
        self.cache.commit([*prompt, *self.tokenizer.encode(answer_text.strip())])
        return explain
