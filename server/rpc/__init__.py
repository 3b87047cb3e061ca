"""contenox.rpc: the node's own protocol, the one the ``contenox`` CLI speaks (an adapter beside lsp and acp).

Content-Length framed JSON-RPC 2.0 over a node connection; see :mod:`contenox.rpc.connection`.
"""

from contenox.rpc.connection import RpcConnection

__all__ = ["RpcConnection"]
