"""Serve one ACP client (newline-delimited JSON-RPC) on one accepted node connection."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.interfaces import Agent

from contenox.node.contract import NodePort

from .agent import ContenoxAgent
from .lines import filtered
from .peer import PeerTransport

__all__ = ["serve_connection"]

log = logging.getLogger(__name__)
_ids = itertools.count(1)
_TURNS_END_S = 5.0
"""How long the cancelled turns of a gone client may take to end (the engine stops a request within a step)."""


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, node: NodePort) -> None:
    """Run the agent until the client disconnects; its running turns are cancelled then, and the connection ends
    at once (nothing more is written to a client that is gone)."""
    agent = ContenoxAgent(node, client_id=f"acp-{next(_ids)}")
    lines, pump = filtered(reader, writer)
    peer = PeerTransport(lines, writer)
    conn = AgentSideConnection(cast(Agent, agent), peer, listening=False)
    log.info("%s: connected", agent.client_id)
    try:
        await conn.listen()
    finally:
        pump.cancel()
        turns = list(agent.running.values())
        for task in turns:
            task.cancel()
        if turns:  # their prompts end "cancelled", into a connection that is already closed to them
            _, stuck = await asyncio.wait(turns, timeout=_TURNS_END_S)
            if stuck:
                log.warning("%s: %d turn(s) still ending after %.0f s", agent.client_id, len(stuck), _TURNS_END_S)
        peer.drop()
        await conn.close()  # cancels and awaits the SDK's handler tasks; no write can wait on the client now
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        log.info("%s: disconnected", agent.client_id)
