"""contenox.node: the node core, which owns the engine, the workspaces and the cache.

Protocol adapters hold a :class:`~contenox.node.contract.NodePort` (the contract, in
:mod:`contenox.node.contract`); :class:`Node` implements it. The daemon (:mod:`contenox.daemon`) is
the composition root that serves the adapters on the node's socket.
"""

from contenox.node.contract import (
    EventCallback,
    Exchange,
    NodePort,
    ThreadInfo,
    TurnEvent,
    TurnOutcome,
    TurnRequest,
)
from contenox.node.node import Node

__all__ = ["EventCallback", "Exchange", "Node", "NodePort", "ThreadInfo", "TurnEvent", "TurnOutcome", "TurnRequest"]
