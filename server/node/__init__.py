"""contenox.node: the per-user daemon that owns the engine, the workspaces and the cache.

Protocol adapters call :class:`Node` (docs/internal-api.md, "node core"); the CLI goes through
:mod:`contenox.node.client`; ``contenox node serve`` runs :func:`contenox.node.daemon.serve`.
"""

from contenox.node.state import Node
from contenox.node.turns import EventCallback, TurnEvent, TurnOutcome, TurnRequest

__all__ = ["EventCallback", "Node", "TurnEvent", "TurnOutcome", "TurnRequest"]
