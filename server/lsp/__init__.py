"""contenox.lsp: the Language Server Protocol adapter (one pygls LanguageServer per node connection)."""

from .connection import serve_connection

__all__ = ["serve_connection"]
