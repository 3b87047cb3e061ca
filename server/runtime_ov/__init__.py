"""contenox.runtime_ov: the only package importing openvino.

The model store (catalog, profiles, digests, tokenizer) and the long-lived engine: one
ContinuousBatchingPipeline per loaded model, driven by one engine thread, with a block model of
its prefix cache, streaming, cancellation and per-request metrics.
"""

from contenox.runtime_ov.block_model import BlockModel
from contenox.runtime_ov.engine import Engine
from contenox.runtime_ov.metrics import EngineStats, RequestMetrics
from contenox.runtime_ov.options import EngineOptions
from contenox.runtime_ov.profile import Profile
from contenox.runtime_ov.remote import EngineLike, RemoteEngine, start_engine
from contenox.runtime_ov.requests import (
    CallTag,
    FinalEvent,
    GenerateRequest,
    PrefillEvent,
    Priority,
    RequestHandle,
    Sampling,
    TokenEvent,
    ToolCallGrammar,
)
from contenox.runtime_ov.served import ServedEngine, ServedOptions
from contenox.runtime_ov.store import InstalledModel, ModelStore
from contenox.runtime_ov.tokenizer import Tokenizer, load_tokenizer

__all__ = [
    "BlockModel",
    "CallTag",
    "Engine",
    "EngineLike",
    "EngineOptions",
    "EngineStats",
    "FinalEvent",
    "GenerateRequest",
    "InstalledModel",
    "ModelStore",
    "PrefillEvent",
    "Priority",
    "Profile",
    "RemoteEngine",
    "RequestHandle",
    "RequestMetrics",
    "Sampling",
    "ServedEngine",
    "ServedOptions",
    "TokenEvent",
    "Tokenizer",
    "ToolCallGrammar",
    "load_tokenizer",
    "start_engine",
]
