"""contenox.planner: deterministic context segments, turn manifests, cache policy, explain-context.

See docs/internal-api.md (planner). Never imports openvino, pygls, lsprotocol, acp, tree_sitter or
pygit2: the tokenizer and the engine's cache prediction are handed in.
"""

from contenox.planner.explain import (
    Citations,
    Explain,
    ExplainSegment,
    ExplainTotals,
    render_explain,
    render_markdown,
)
from contenox.planner.inputs import Chunk, Pin, PlannerInputs, build_inputs, change_reasons
from contenox.planner.journal import Journal, ThreadEntry, TurnRecord
from contenox.planner.manifest import ChunkRecord, Identity, Manifest, SegmentRecord
from contenox.planner.planner import MetricsLike, Planner, TurnPlan
from contenox.planner.segments import CACHE_CLASS, SEGMENT_KINDS

__all__ = [
    "CACHE_CLASS",
    "SEGMENT_KINDS",
    "Chunk",
    "ChunkRecord",
    "Citations",
    "Explain",
    "ExplainSegment",
    "ExplainTotals",
    "Identity",
    "Journal",
    "Manifest",
    "MetricsLike",
    "Pin",
    "Planner",
    "PlannerInputs",
    "SegmentRecord",
    "ThreadEntry",
    "TurnPlan",
    "TurnRecord",
    "build_inputs",
    "change_reasons",
    "render_explain",
    "render_markdown",
]
