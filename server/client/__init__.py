"""contenox.client: what runs in a client process (the CLI, ``contenox lsp``, ``contenox acp``).

A socket client of the node's ``rpc`` protocol that starts the daemon on demand, a private node for eval and
benchmark runs, and the stdio pipe that carries an editor's LSP or ACP stream to the node. Nothing here prints.
"""

from contenox.client.node_client import (
    NodeClient,
    RemoteError,
    call,
    connect,
    ensure_node,
    replace_stale_node,
    switch_node_model,
)
from contenox.client.private_node import PrivateNode
from contenox.client.stdio_pipe import Relay, pipe_stdio

__all__ = ["NodeClient", "PrivateNode", "Relay", "RemoteError", "call", "connect", "ensure_node", "pipe_stdio", "replace_stale_node",
           "switch_node_model"]
