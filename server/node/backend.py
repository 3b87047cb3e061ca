"""The node's only doors into the layers below it: engine, planner and workspace.

Everything the node needs from ``runtime_ov``, ``planner`` and ``workspace`` goes through this module,
imported lazily (the daemon starts and answers ``status`` without loading OpenVINO or a model).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from contenox.config import Config

__all__ = [
    "build_inputs",
    "explain_to_dict",
    "load_engine",
    "make_planner",
    "open_workspace",
    "stable_prefix",
    "submit",
    "to_plain",
]

log = logging.getLogger(__name__)


def load_engine(config: Config) -> Any:
    """Ensure the default model is installed, then start the engine (blocking: run in a thread)."""
    from contenox.runtime_ov import Engine, EngineOptions, ModelStore

    model = ModelStore(config.models_dir).ensure(config.model.default)
    log.info("starting engine for %s", model.name)
    return Engine.start(model, EngineOptions.from_config(config.engine))


def submit(engine: Any, session_id: str, token_ids: list[int], max_new_tokens: int) -> Any:
    """Submit an interactive request; the engine's RequestHandle."""
    from contenox.runtime_ov import GenerateRequest, Priority

    return engine.submit(GenerateRequest(session_id=session_id, token_ids=token_ids,
                                         max_new_tokens=max_new_tokens, priority=Priority.INTERACTIVE))


def open_workspace(config: Config, root: Path, cache_dir: Path) -> Any:
    from contenox.workspace import Workspace

    return Workspace.open(root, config.workspace, cache_dir)


def make_planner(config: Config, engine: Any, state_dir: Path) -> Any:
    from contenox.planner import Planner

    return Planner(engine.tokenizer, engine.profile, config.planner, state_dir=state_dir)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def mentioned_names(text: str) -> tuple[str, ...]:
    """Identifier-looking words of the prompt: the repo map ranks their definitions higher."""
    seen: dict[str, None] = {}
    for word in _IDENT.findall(text):
        seen.setdefault(word, None)
    return tuple(seen)[:64]


def build_inputs(config: Config, engine: Any, workspace: Any, *, prompt: str, selection: str | None,
                 pins: Sequence[str], history: Sequence[tuple[str, str]], terminal: str) -> Any:
    """The planner's inputs for one turn (blocking: reads files and git state)."""
    from contenox.planner import PlannerInputs

    user = prompt if not selection else f"{prompt}\n\n```\n{selection}\n```"
    count = engine.tokenizer.encode
    repo_map = workspace.repo_map(config.planner.repo_map_tokens, lambda text: len(count(text)),
                                  mentioned=mentioned_names(user), pinned=tuple(pins))
    pinned: list[tuple[str, str]] = []
    for path in pins:
        pinned.append((path, workspace.read_text(path)))
    return PlannerInputs(
        instructions=list(workspace.instructions()),
        repo_map=repo_map,
        pins=pinned,
        history=list(history),
        diff=workspace.diff_text(),
        terminal=terminal,
        user=user,
    )


def stable_prefix(plan: Any) -> list[int]:
    """The plan's leading ids that stay valid for the next turn (everything before the diff)."""
    token_ids = [int(t) for t in plan.token_ids]
    segments = getattr(getattr(plan, "manifest", None), "segments", None) or ()
    for segment in segments:
        kind = getattr(segment, "kind", None)
        start = getattr(segment, "start", None)
        if kind in ("diff", "terminal", "user") and isinstance(start, int):
            return token_ids[:start]
    return token_ids


def to_plain(value: Any) -> Any:
    """msgspec structs, dataclasses and plain objects as JSON-ready builtins."""
    return msgspec.to_builtins(value, builtin_types=None, str_keys=True, enc_hook=_enc_hook)


def _enc_hook(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def explain_to_dict(explain: Any) -> dict[str, Any]:
    """An Explain as the JSON dict of docs/internal-api.md."""
    if hasattr(explain, "to_json"):
        data = explain.to_json()
        if isinstance(data, (bytes, str)):
            data = msgspec.json.decode(data)
        return dict(data)
    return dict(to_plain(explain))
