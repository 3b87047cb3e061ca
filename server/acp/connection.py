"""Serve one ACP client (newline-delimited JSON-RPC) on one accepted node connection."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.interfaces import Agent

from contenox.node.contract import NodePort

from .agent import ContenoxAgent
from .lines import filtered

__all__ = ["serve_connection"]

log = logging.getLogger(__name__)
_ids = itertools.count(1)
_CLOSE_S = 5.0


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, node: NodePort) -> None:
    """Run the agent until the client disconnects; its running turns are cancelled then."""
    agent = ContenoxAgent(node, client_id=f"acp-{next(_ids)}")
    lines, pump = filtered(reader, writer)
    conn = AgentSideConnection(cast(Agent, agent), writer, lines, listening=False)
    log.info("%s: connected", agent.client_id)
    try:
        await conn.listen()
    finally:
        pump.cancel()
        for task in list(agent.running.values()):
            task.cancel()
        try:  # a peer that stopped reading must not hold the close (and the connection) forever
            await asyncio.wait_for(asyncio.shield(conn._conn.close()), _CLOSE_S)
        except (TimeoutError, Exception):
            log.info("%s: the client stopped reading; dropping the connection", agent.client_id)
            writer.transport.abort()
        log.info("%s: disconnected", agent.client_id)
