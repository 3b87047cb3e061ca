"""ACP tests share the LSP tests' fake node, pytest-lsp client and end-to-end kit (tests/support/)."""

from __future__ import annotations

from support.lsp_e2e_kit import node_home

__all__ = ["node_home"]
