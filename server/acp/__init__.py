"""contenox.acp."""
