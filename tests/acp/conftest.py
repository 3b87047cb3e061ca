"""ACP tests share the LSP tests' fake node (tests/lsp/lsp_fake_node.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
