"""contenox.acp: the Agent Client Protocol adapter (one agent per node connection)."""

from .connection import serve_connection

__all__ = ["serve_connection"]
