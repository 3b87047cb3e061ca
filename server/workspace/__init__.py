"""contenox.workspace."""
