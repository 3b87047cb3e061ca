"""contenox.workspace: what the planner knows of a repository.

Tree-sitter tags per file (cached by git blob id), a file graph ranked by personalized PageRank, a
deterministic token-budgeted repo map, git-driven change events, editor overlays, search, symbol lookup and
question-driven retrieval of code chunks.
This is the only package importing ``tree_sitter`` and ``pygit2``.
"""

from contenox.workspace._calls import asks_how_it_works
from contenox.workspace._mentions import changed_lines
from contenox.workspace._model import (
    ChangeEvent,
    Definition,
    DiffFile,
    DiffHunk,
    FileTags,
    IndexStatus,
    RelatedHit,
    Retrieval,
    RetrievalQuery,
    RetrievedChunk,
    SearchHit,
    SkippedFile,
    SymbolInfo,
    SymbolLocation,
)
from contenox.workspace._rename import rename_identifier, retarget_imports
from contenox.workspace._retrieve import points_at
from contenox.workspace._returns import dropped_returns
from contenox.workspace._state import INSTRUCTION_FILES
from contenox.workspace._workspace import Workspace

__all__ = [
    "INSTRUCTION_FILES",
    "ChangeEvent",
    "Definition",
    "DiffFile",
    "DiffHunk",
    "FileTags",
    "IndexStatus",
    "RelatedHit",
    "Retrieval",
    "RetrievalQuery",
    "RetrievedChunk",
    "SearchHit",
    "SkippedFile",
    "SymbolInfo",
    "SymbolLocation",
    "Workspace",
    "asks_how_it_works",
    "changed_lines",
    "dropped_returns",
    "points_at",
    "rename_identifier",
    "retarget_imports",
]
