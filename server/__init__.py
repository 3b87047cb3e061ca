"""Contenox: a local, offline coding assistant node on OpenVINO GenAI.

The workspace becomes reusable model execution state: every turn is assembled from deterministic
segments so the engine's prefix cache serves what did not change, and every turn can explain
which tokens were cached and which were new.
"""

from contenox.errors import ContenoxError

__version__ = "0.1.0"

__all__ = ["ContenoxError", "__version__"]
