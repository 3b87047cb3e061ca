"""The node's only doors into the layers below it: engine, planner and workspace.

Everything the node needs from ``runtime_ov``, ``planner`` and ``workspace`` goes through this module,
imported lazily (the daemon starts and answers ``status`` without loading OpenVINO or a model).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.config import Config

if TYPE_CHECKING:
    from contenox.planner import Explain, Planner, PlannerInputs, TurnPlan
    from contenox.runtime_ov import Engine, RequestHandle
    from contenox.workspace import ChangeEvent, Workspace

__all__ = [
    "build_inputs",
    "change_reasons",
    "explain_to_dict",
    "load_engine",
    "make_planner",
    "open_workspace",
    "resume_prefix",
    "submit",
    "to_plain",
]

log = logging.getLogger(__name__)


def load_engine(config: Config) -> Engine:
    """Ensure the default model is installed, then start the engine (blocking: run in a thread)."""
    from contenox.runtime_ov import Engine, EngineOptions, ModelStore

    model = ModelStore(config.models_dir).ensure(config.model.default)
    log.info("starting engine for %s", model.name)
    return Engine.start(model, EngineOptions.from_config(config.engine, device=config.model.device))


def submit(engine: Engine, session_id: str, token_ids: list[int], max_new_tokens: int) -> RequestHandle:
    """Submit an interactive request; the engine's RequestHandle."""
    from contenox.runtime_ov import GenerateRequest, Priority

    return engine.submit(GenerateRequest(session_id=session_id, token_ids=token_ids,
                                         max_new_tokens=max_new_tokens, priority=Priority.INTERACTIVE))


def open_workspace(config: Config, root: Path, cache_dir: Path) -> Workspace:
    from contenox.workspace import Workspace

    return Workspace.open(root, config.workspace, cache_dir)


def make_planner(config: Config, engine: Engine, state_dir: Path) -> Planner:
    from contenox.planner import Planner

    return Planner(engine.tokenizer, engine.profile, config.planner, state_dir=state_dir)


def change_reasons(events: Sequence[ChangeEvent]) -> dict[str, str]:
    """Why each planner segment changed since the last turn, in words, from the workspace's events."""
    paths: dict[str, list[str]] = {}
    for event in events:
        for kind in event.segments:
            paths.setdefault(str(kind), []).append(f"{event.kind} {event.path}".strip())
    reasons: dict[str, str] = {}
    for segment, items in paths.items():
        shown = ", ".join(items[:3]) + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
        reasons[segment] = f"{segment.replace('_', ' ')} changed: {shown}"
    return reasons


def build_inputs(config: Config, engine: Engine, workspace: Workspace, *, root: Path, prompt: str,
                 selection: str | None, pins: Sequence[str], terminal: str, thread: str,
                 reasons: dict[str, str]) -> PlannerInputs:
    """The planner's inputs for one turn (blocking: reads files and git state).

    The repo map is ranked by the pinned files only, never by the prompt's words: it must stay
    byte-identical from turn to turn so the prefix cache keeps it.
    """
    from contenox.planner import PlannerInputs

    user = prompt if not selection else f"{prompt}\n\n```\n{selection}\n```"
    encode = engine.tokenizer.encode

    def count(text: str) -> int:
        return len(encode(text))

    pinned = tuple(pins)

    def repo_map_at(budget: int) -> str:
        return workspace.repo_map(budget, count, pinned=pinned)

    return PlannerInputs(
        user=user,
        workspace=str(root),
        instructions=workspace.instructions(),
        repo_map=repo_map_at(config.planner.repo_map_tokens),
        repo_map_at=repo_map_at,
        pins=[(path, workspace.read_text(path)) for path in pinned],
        diff=workspace.diff_text(),
        terminal=terminal,
        thread=thread,
        change_reasons=reasons,
    )


def resume_prefix(plan: TurnPlan) -> list[int]:
    """Ids a restarted node re-warms for this thread: the stable segments plus the history."""
    try:
        end = plan.manifest.segment("history").token_end
    except KeyError:
        return plan.stable_prefix()
    return list(plan.token_ids[:end])


def to_plain(value: Any) -> Any:
    """msgspec structs, dataclasses and plain objects as JSON-ready builtins."""
    return msgspec.to_builtins(value, str_keys=True, enc_hook=_enc_hook)


def _enc_hook(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def explain_to_dict(explain: Explain) -> dict[str, Any]:
    """An Explain as the JSON dict of docs/internal-api.md."""
    data: Any = explain.to_json()
    if isinstance(data, (bytes, str)):
        data = msgspec.json.decode(data)
    return dict(data)
