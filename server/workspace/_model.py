"""Data the workspace layer hands out: tags, index status, change events, search and symbol hits, retrieved
code chunks."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "ChangeEvent",
    "ChangeKind",
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
    "Segment",
    "SkippedFile",
    "SymbolInfo",
    "SymbolLocation",
]

Segment = Literal["repo_map", "pins", "diff", "instructions"]
ChangeKind = Literal["added", "untracked", "modified", "deleted", "renamed", "staged", "committed"]


class Definition(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One definition in a file; lines are 1-based, ``text`` is its first source line (trimmed)."""

    name: str
    kind: str
    line: int
    end_line: int
    text: str


class FileTags(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """Definitions and reference counts of one file's content (what the tags cache stores)."""

    defs: tuple[Definition, ...] = ()
    refs: tuple[tuple[str, int], ...] = ()
    """(identifier, occurrences), sorted by identifier."""
    partial: bool = False
    """The parse had syntax errors; the tags come from the partial tree."""


class SkippedFile(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    reason: Literal["binary", "too_large", "symlink_outside", "symlink_dir", "unreadable", "submodule",
                    "special", "file_cap"]
    detail: str = ""


class IndexStatus(msgspec.Struct, frozen=True, kw_only=True):
    root: str
    is_git: bool
    head: str | None
    """HEAD commit id, or None (no git, empty repository)."""
    branch: str | None
    """Branch name, or None when detached / no git."""
    detached: bool
    empty_repo: bool
    files: int
    """Files indexed (text, within the size cap)."""
    tagged_files: int
    definitions: int
    languages: dict[str, int]
    skipped: tuple[SkippedFile, ...]
    non_utf8: tuple[str, ...]
    """Indexed as bytes (tags still extracted) but not valid UTF-8 text."""
    partial: tuple[str, ...]
    """Files with syntax errors whose tags come from a partial tree."""
    errors: tuple[str, ...]
    overlays: tuple[str, ...]
    cache_hits: int
    cache_misses: int
    cache_rebuilt: int
    """Cache entries found corrupt or of another version and rebuilt."""


class ChangeEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One change since the previous refresh and the planner segments it invalidates."""

    kind: ChangeKind
    path: str = ""
    """Relative path ('' for repository-wide events such as a commit)."""
    old_path: str = ""
    """For renames: the previous path."""
    segments: tuple[Segment, ...] = ()


class SearchHit(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    line: int
    column: int
    text: str


class SymbolLocation(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    kind: str
    path: str
    line: int
    end_line: int
    text: str


class SymbolInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A symbol's place in the repository graph (LSP hover)."""

    name: str
    definitions: tuple[SymbolLocation, ...]
    referenced_by: tuple[str, ...]
    """Files referencing the name, highest ranked first."""
    rank: float
    """Highest PageRank among the defining files (they sum to 1 over the repository)."""
    rank_position: int
    """1-based position of the best defining file in the file ranking."""
    files_ranked: int


class RelatedHit(msgspec.Struct, frozen=True, kw_only=True):
    """A "find related code" result: a definition of a name in the text, or a lexical match."""

    kind: Literal["definition", "reference"]
    name: str
    path: str
    line: int
    text: str
    score: float


class DiffHunk(msgspec.Struct, frozen=True, kw_only=True):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str


class DiffFile(msgspec.Struct, frozen=True, kw_only=True):
    """One file of the diff against HEAD (paths relative to the workspace root)."""

    path: str
    old_path: str
    status: Literal["added", "deleted", "modified", "renamed", "untracked", "typechange", "other"]
    binary: bool
    additions: int
    deletions: int
    hunks: tuple[DiffHunk, ...]


class RetrievalQuery(msgspec.Struct, frozen=True, kw_only=True):
    """What a turn is about: the question and the editor / terminal context that points into the code."""

    text: str
    """The question."""
    selection: str = ""
    """Selected text."""
    open_file: str | None = None
    """Workspace-relative path of the active editor file."""
    selection_lines: tuple[int, int] | None = None
    """1-based inclusive line range of the selection in ``open_file``."""
    diff: str = ""
    """Current unified diff (``Workspace.diff_text()``): its changed lines seed the graph neighbours."""
    terminal: str = ""
    """Terminal or test output: stack traces and ``path:line`` references."""


class RetrievedChunk(msgspec.Struct, frozen=True, kw_only=True):
    """One chunk of code chosen for a turn, with why it was chosen."""

    path: str
    start_line: int
    end_line: int
    name: str
    kind: str
    header: str
    """The enclosing class (impl, namespace) line, or ''."""
    text: str
    """The chunk's source lines (editor overlays included)."""
    tokens: int
    """``count_tokens(self.render())``."""
    score: float
    """Fused reciprocal-rank score."""
    reasons: tuple[str, ...]

    @property
    def id(self) -> str:
        """``path:start-end``: what ``exclude`` takes to leave a chunk out next time."""
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def render(self) -> str:
        """The chunk as it goes into a prompt: its location, its enclosing line, its text."""
        header = f"{self.header}\n    ...\n" if self.header else ""
        return f"{self.id} ({self.name})\n{header}{self.text}\n"


class Retrieval(msgspec.Struct, frozen=True, kw_only=True):
    chunks: tuple[RetrievedChunk, ...]
    """In fused order, best first."""
    dropped: tuple[str, ...]
    """Candidates left out, with why (``pkg/a.py:10-200 Foo (540 tokens) over budget``)."""
    budget: int
    used: int
