"""contenox.runtime_ov."""
