"""Fixtures for the LSP tests (the end-to-end kit is support/lsp_e2e_kit.py, shared with tests/acp)."""

from __future__ import annotations

from support.lsp_e2e_kit import node_home

__all__ = ["node_home"]
