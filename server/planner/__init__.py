"""contenox.planner."""
