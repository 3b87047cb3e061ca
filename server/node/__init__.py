"""contenox.node."""
