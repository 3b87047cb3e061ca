"""Fill-in-the-middle prompts for inline completions: the model's FIM markers, a cached repo-level context
block, and the window of the current file around the cursor.

The prompt is ``repo context | current file | prefix | suffix``; only the part after the last edit is new at each
keystroke. The repo-level context is a *working set* of code chunks (definitions the file uses, places edited
recently) that is appended to and rebuilt only when it overflows, so it stays in the prefix cache across
keystrokes and across files. The prefix window starts at a line that moves in steps of :data:`_SNAP` lines, not
with each keystroke, for the same reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import msgspec

from contenox.runtime_ov.profile import Profile

__all__ = ["ContextEntry", "FimPrompt", "FimSupport", "FimTokens", "FimWindow", "WorkingSet", "build_fim_prompt",
           "cursor_window", "fim_support", "identifiers_near"]

_SNAP = 16
"""The prefix window's first line moves in steps of this many lines."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


class TokenizerLike(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode_raw(self, ids: Sequence[int]) -> str: ...


class FimTokens(msgspec.Struct, frozen=True, kw_only=True):
    prefix: int
    suffix: int
    middle: int
    file_sep: int | None
    repo_name: int | None
    stops: tuple[int, ...]


class FimSupport(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the loaded model can fill in the middle (inline completions), and if not why."""

    available: bool
    reason: str | None = None
    tokens: FimTokens | None = None
    repo_level: bool = False
    """The model has the repo-level form (other files before the current one)."""


def _special_id(tokenizer: TokenizerLike, marker: str) -> int | None:
    ids = tokenizer.encode(marker)
    if len(ids) != 1 or tokenizer.decode_raw(ids) != marker:
        return None
    return ids[0]


def fim_support(profile: Profile, tokenizer: TokenizerLike) -> FimSupport:
    """The profile's FIM format, checked against the tokenizer: each marker must be one special token."""
    fim = profile.fim
    if fim is None:
        return FimSupport(available=False, reason=f"{profile.id} has no fill-in-the-middle format in its profile; "
                                                  "inline completions need a FIM model such as qwen2.5-coder")
    ids: dict[str, int] = {}
    for marker in fim.markers():
        found = _special_id(tokenizer, marker)
        if found is None:
            return FimSupport(available=False, reason=f"{profile.id}: the profile's FIM marker {marker!r} is not one "
                                                      "special token of the model's tokenizer")
        ids[marker] = found
    tokens = FimTokens(prefix=ids[fim.prefix], suffix=ids[fim.suffix], middle=ids[fim.middle],
                       file_sep=ids.get(fim.file_sep), repo_name=ids.get(fim.repo_name),
                       stops=tuple(dict.fromkeys(ids[s] for s in fim.stops)))
    return FimSupport(available=True, tokens=tokens, repo_level=tokens.file_sep is not None)


class FimWindow(msgspec.Struct, frozen=True, kw_only=True):
    """The current file around the cursor, as the prompt shows it."""

    prefix: str
    suffix: str
    first_line: int
    """0-based line where ``prefix`` starts."""
    line_prefix: str
    """The cursor's line up to the cursor."""
    line_suffix: str
    """The cursor's line after the cursor."""
    cut_prefix_lines: int
    cut_suffix_lines: int


def cursor_window(text: str, line: int, character: int, count_tokens: Callable[[str], int], *,
                  prefix_tokens: int, suffix_tokens: int) -> FimWindow:
    """The prefix (from a line snapped to :data:`_SNAP`) and suffix around ``line``/``character`` (0-based),
    each within its token budget; what is cut is counted in lines."""
    lines = text.split("\n")
    line = min(max(line, 0), len(lines) - 1)
    current = lines[line]
    character = min(max(character, 0), len(current))
    line_prefix, line_suffix = current[:character], current[character:]
    start = max(0, (line - 4 * _SNAP) // _SNAP * _SNAP)
    while True:
        prefix = "\n".join([*lines[start:line], line_prefix])
        if start >= line or count_tokens(prefix) <= prefix_tokens:
            break
        start = min(line, start + _SNAP)
    if count_tokens(prefix) > prefix_tokens:  # one very long line: keep its end
        prefix = line_prefix[-prefix_tokens * 2:]
    after = lines[line + 1:]
    suffix_lines = [line_suffix]
    used = count_tokens(line_suffix)
    for extra in after:
        cost = count_tokens(extra + "\n")
        if used + cost > suffix_tokens:
            break
        suffix_lines.append(extra)
        used += cost
    return FimWindow(prefix=prefix, suffix="\n".join(suffix_lines), first_line=start, line_prefix=line_prefix,
                     line_suffix=line_suffix, cut_prefix_lines=start,
                     cut_suffix_lines=len(after) - (len(suffix_lines) - 1))


def identifiers_near(window: FimWindow, limit: int = 24) -> list[str]:
    """Identifiers of the window, nearest to the cursor first (the prefix read backwards, then the suffix)."""
    seen: dict[str, None] = {}
    for name in reversed(_IDENT.findall(window.prefix)):
        seen.setdefault(name)
    for name in _IDENT.findall(window.suffix):
        seen.setdefault(name)
    return list(seen)[:limit]


class ContextEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One chunk of another file in the repo-level context."""

    path: str
    start_line: int
    text: str
    why: str
    """"uses <name>" or "edited"."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.path, self.start_line)


class WorkingSet:
    """The repo-level context block of one workspace: entries in the order they were added.

    New entries are appended while the budget allows, so the block's tokens stay a prefix of the next
    prompt's; when an entry does not fit, the block is rebuilt from the entries wanted now (newest first) and
    the prefix cache misses once. An entry whose file changed is replaced the same way.
    """

    def __init__(self, budget_tokens: int, count_tokens: Callable[[str], int]) -> None:
        self.budget_tokens = budget_tokens
        self._count = count_tokens
        self.entries: list[ContextEntry] = []
        self._tokens: dict[tuple[str, int], int] = {}
        self.rebuilds = 0

    @property
    def tokens(self) -> int:
        return sum(self._tokens.values())

    def render(self, entry: ContextEntry) -> str:
        return f"{entry.path}\n{entry.text.rstrip()}\n"

    def want(self, wanted: Iterable[ContextEntry]) -> list[str]:
        """Make ``wanted`` (most important first) part of the block; returns what did not fit (named)."""
        wanted = list(dict((e.key, e) for e in wanted).values())
        current = {e.key: e for e in self.entries}
        changed = [e for e in wanted if e.key in current and current[e.key].text != e.text]
        missing = [e for e in wanted if e.key not in current]
        if changed:
            stale = {e.key for e in changed}
            self._reset([*wanted, *(e for e in self.entries if e.key not in stale)])
            return self._left_out(wanted)
        cost = {e.key: self._count(self.render(e)) for e in missing}
        if self.tokens + sum(cost.values()) <= self.budget_tokens:
            for entry in missing:
                self.entries.append(entry)
                self._tokens[entry.key] = cost[entry.key]
            return []
        self._reset([*wanted, *self.entries])
        return self._left_out(wanted)

    def _reset(self, order: list[ContextEntry]) -> None:
        self.rebuilds += 1
        self.entries, self._tokens = [], {}
        used = 0
        for entry in order:
            if entry.key in self._tokens:
                continue
            cost = self._count(self.render(entry))
            if used + cost > self.budget_tokens:
                continue
            self.entries.append(entry)
            self._tokens[entry.key] = cost
            used += cost

    def _left_out(self, wanted: list[ContextEntry]) -> list[str]:
        return [f"{e.path}:{e.start_line} ({e.why})" for e in wanted if e.key not in self._tokens]


class FimPrompt(msgspec.Struct, frozen=True, kw_only=True):
    token_ids: list[int]
    context_tokens: int
    """Tokens of the repo-level block (0 without it)."""
    window_tokens: int
    """Tokens of the current file's prefix and suffix (and the markers around them)."""
    context_files: tuple[str, ...]


def build_fim_prompt(tokens: FimTokens, tokenizer: TokenizerLike, window: FimWindow, path: str,
                     context: Sequence[ContextEntry], repo: str, render: Callable[[ContextEntry], str], *,
                     named: bool = False) -> FimPrompt:
    """``<repo_name>repo <file_sep>chunk... <file_sep>path <fim_prefix>prefix<fim_suffix>suffix<fim_middle>``; the
    repo-level parts only when the model has them and there is context or the file is to be ``named`` anyway
    (else the plain FIM form)."""
    head: list[int] = []
    if tokens.file_sep is not None and (context or named):
        if tokens.repo_name is not None:
            head += [tokens.repo_name, *tokenizer.encode(f"{repo}\n")]
        for entry in context:
            head += [tokens.file_sep, *tokenizer.encode(render(entry))]
        head += [tokens.file_sep, *tokenizer.encode(f"{path}\n")]
    tail = [tokens.prefix, *tokenizer.encode(window.prefix), tokens.suffix, *tokenizer.encode(window.suffix),
            tokens.middle]
    return FimPrompt(token_ids=head + tail, context_tokens=len(head), window_tokens=len(tail),
                     context_files=tuple(dict.fromkeys(e.path for e in context)))
