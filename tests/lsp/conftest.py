"""Fixtures for the LSP tests (the end-to-end kit lives in lsp_e2e_kit.py, shared with tests/acp)."""

from __future__ import annotations

from lsp_e2e_kit import node_home

__all__ = ["node_home"]
