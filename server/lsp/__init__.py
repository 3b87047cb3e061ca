"""contenox.lsp."""
