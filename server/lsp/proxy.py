"""``contenox lsp``: the editor's stdio, piped byte for byte to an ``lsp`` connection on the node."""

from __future__ import annotations

from contenox.config import Config
from contenox.node.stdio_pipe import pipe_stdio

__all__ = ["main"]


def main(config: Config) -> int:
    """Speak LSP through the node (started under its lock if none runs)."""
    return pipe_stdio(config, "lsp")
