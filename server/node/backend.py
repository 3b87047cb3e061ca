"""The node's lazy doors to the engine, the planner and the workspace.

They are imported on first use, so the daemon starts and answers ``status`` without loading OpenVINO,
tree-sitter or a model; the types are imported for checking only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from contenox.config import Config

if TYPE_CHECKING:
    from contenox.planner import Planner
    from contenox.runtime_ov import EngineLike, RequestHandle
    from contenox.workspace import Workspace

__all__ = ["load_engine", "make_planner", "open_workspace", "submit", "submit_candidate", "submit_completion"]

log = logging.getLogger(__name__)


def load_engine(config: Config) -> EngineLike:
    """Ensure the default model is installed, then start the engine (blocking: run in a thread)."""
    from contenox.runtime_ov import EngineOptions, ModelStore, ServedEngine, ServedOptions, start_engine

    model = ModelStore(config.models_dir).ensure(config.model.default)
    if config.engine.backend == "openai":  # a serving engine; the local model gives the tokenizer and profile
        options = ServedOptions.from_config(config.engine, config.model.default)
        return ServedEngine.start(model, options)
    log.info("starting engine for %s (%s)", model.name, "own process" if config.engine.process else "in-process")
    return start_engine(model, EngineOptions.from_config(config.engine, device=config.model.device),
                        process=config.engine.process)


def submit(engine: EngineLike, session_id: str, token_ids: list[int], max_new_tokens: int, *,
           tools: bool = False, require_call: bool = False, stable_tokens: int = 0, grammar: str = "",
           report_prefill: bool = True) -> RequestHandle:
    """Submit an interactive request; the engine's RequestHandle. ``tools``: a turn that offers the node's tools,
    whose calls are generated under their schemas once one begins (:func:`contenox.node.agent.tool_call_grammar`);
    ``require_call``: the answer must be one.
    ``stable_tokens``: the plan's stable prefix length (a serving engine's routing hint; 0: unknown). ``grammar``:
    the whole answer under it (the tool check's yes or no, a text-only answer)."""
    from contenox.node.agent import tool_call_grammar
    from contenox.runtime_ov import GenerateRequest, Priority

    return engine.submit(GenerateRequest(session_id=session_id, token_ids=token_ids,
                                         max_new_tokens=max_new_tokens, priority=Priority.INTERACTIVE,
                                         report_prefill=report_prefill, tool_calls=tool_call_grammar(require_call) if tools else None,
                                         stable_tokens=stable_tokens, grammar=grammar))


def submit_candidate(engine: EngineLike, session_id: str, token_ids: list[int], max_new_tokens: int, *,
                     sampling: tuple[float, float, int] | None, grammar: str, group: str,
                     stops: Sequence[int] = ()) -> RequestHandle:
    """Submit one candidate answer of a verified turn: greedy (``sampling`` None) or sampled (temperature, top-p,
    seed), under ``grammar`` when given; candidates of one ``group`` decode side by side. ``stops``: stop tokens
    besides the model's end (a fill-in-the-middle's)."""
    from contenox.runtime_ov import GenerateRequest, Priority, Sampling

    return engine.submit(GenerateRequest(
        session_id=session_id, token_ids=token_ids, max_new_tokens=max_new_tokens, priority=Priority.INTERACTIVE,
        sampling=Sampling(temperature=sampling[0], top_p=sampling[1], seed=sampling[2]) if sampling else None,
        grammar=grammar, group=group, stop_token_ids=tuple(stops)))


def submit_completion(engine: EngineLike, session_id: str, token_ids: list[int], max_new_tokens: int, *,
                      stops: Sequence[int]) -> RequestHandle:
    """Submit an inline completion: the engine's most urgent class (it preempts a turn's prefill at the next
    chunk), stopped at the FIM stop tokens."""
    from contenox.runtime_ov import GenerateRequest, Priority

    return engine.submit(GenerateRequest(session_id=session_id, token_ids=token_ids, max_new_tokens=max_new_tokens,
                                         priority=Priority.COMPLETION, stop_token_ids=tuple(stops)))


def open_workspace(config: Config, root: Path, cache_dir: Path) -> Workspace:
    from contenox.workspace import Workspace

    return Workspace.open(root, config.workspace, cache_dir)


def make_planner(config: Config, engine: EngineLike, state_dir: Path) -> Planner:
    """The workspace's planner. Its turns advertise the tools (and the node runs the calls) only for a model
    that passed ``contenox certify`` with these weights; otherwise explain-context says why not."""
    from contenox.node.agent import tool_policy_digest
    from contenox.planner import Planner
    from contenox.runtime_ov.certification import read_certification

    certification = read_certification(Path(engine.model.path), engine.profile.model_digest)
    tools = False
    if not config.tools.enabled:
        note = "tools.enabled is false"
    elif config.tools.ignore_certification:
        tools, note = True, ""
    elif certification is None:
        note = "this model is not certified for tool calls; `contenox certify` tests it"
    elif not certification.certified:
        note = (f"this model failed tool-call certification: {100 * certification.valid_call_rate:.0f}% valid, "
                f"{100 * certification.false_call_rate:.0f}% false calls")
    elif certification.policy_digest and certification.policy_digest != tool_policy_digest():
        note = ("this model was certified under other tool prompts or grammars than this contenox's "
                "(`contenox certify` tests it again)")
    elif certification.tool_check and not config.tools.check:
        note = "this model was certified with the tool check, and tools.check is false"
    elif certification.require_call and not config.tools.require_call:
        note = "this model was certified with calls required after the tool check, and tools.require_call is false"
    else:
        tools, note = True, ""
    return Planner(engine.tokenizer, engine.profile, config.planner, state_dir=state_dir, tools=tools,
                   tools_note=note)
