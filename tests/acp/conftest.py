"""ACP tests share the LSP tests' fake node, pytest-lsp client and end-to-end kit (tests/lsp/)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))

from lsp_e2e_kit import node_home

__all__ = ["node_home"]
