"""A thread as the model sees it: an append-only log of turns, rebased deliberately when it outgrows its budget.

Each recorded turn holds its *entry*, the last user message exactly as it was sent (retrieved code,
diff, terminal output, selection, question), and its answer. The next turn's history is those
entries and answers unchanged, so the engine's prefix cache serves everything up to the new turn.
Large material is entered once: a retrieved chunk or a file's diff already shown by a turn still in
the thread is referenced, not repeated. When the thread has more than ``max_history_turns`` turns or
more than ``thread_tokens`` tokens, it is rebased: its older turns become one summary line each (at
the end of the system message) and the newest half is kept in full; the rebase is named in
explain-context and the thread is append-only again from there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import msgspec

from contenox.planner.inputs import Chunk
from contenox.planner.journal import TurnRecord
from contenox.planner.map_base import MapChange, render_changes
from contenox.planner.token_cache import byte_hash

__all__ = ["ThreadView", "diff_delta", "map_delta", "partition_chunks", "split_diff", "summary_line", "thread_view"]

Count = Callable[[str], int]
_SUMMARY_LINES = 40
"""At most this many summary lines are shown; older ones are counted, not listed."""
_DIFF_FILE = re.compile(r"^diff --git a/(.*?) b/(.*)$", re.MULTILINE)


class ThreadView(msgspec.Struct, kw_only=True):
    """What the thread holds when a turn is planned."""

    history: list[tuple[tuple[str, ...], str]]
    """(entry parts, answer) of the turns kept in full, oldest first."""
    lines: list[str]
    """A summary line for each turn in ``history`` (used when budget fitting summarises more)."""
    summary: list[str]
    """Summary lines of the older turns, oldest first."""
    base: int
    """How many of the thread's turns are summarised."""
    chunks_seen: dict[str, str]
    """Chunk id -> byte hash of its text, for the chunks the kept turns entered."""
    history_chunks: list[tuple[str, ...]] = msgspec.field(default_factory=list)
    """The ids of the chunks each entry of ``history`` entered, aligned with it (a turn's tool steps enter none)."""
    diff_seen: dict[str, str]
    """Path -> byte hash of the patch last shown for it by a kept turn ('' once shown as reverted)."""
    map_seen: dict[str, dict[str, str]]
    """Base map hash -> (path -> byte hash of the map change last shown for it against that base)."""
    notes: list[str]


def summary_line(record: TurnRecord) -> str:
    """One line for a summarised turn: its question and the first line of its answer."""
    question = " ".join((record.prompt or record.user).split())
    answer = next((line.strip() for line in record.answer.splitlines() if line.strip()), "")
    return f"turn {record.turn}: {question[:160]} -> {answer[:200]}"


def thread_view(records: Sequence[TurnRecord], *, max_turns: int, max_tokens: int, count: Count) -> ThreadView:
    """The thread's layout for its next turn, from its recorded turns (oldest first)."""
    notes: list[str] = []
    if max_turns <= 0:
        return ThreadView(history=[], lines=[], summary=[], base=len(records), chunks_seen={}, diff_seen={},
                          map_seen={}, notes=["history off (planner.max_history_turns = 0)"] if records else [])
    base = min(records[-1].entry.base, len(records)) if records else 0

    def size(start: int) -> int:
        return sum(count(r.size_text()) for r in records[start:])

    if len(records) - base > max_turns or (max_tokens > 0 and size(base) > max_tokens):
        old = base
        base = max(base, len(records) - max(1, max_turns // 2))
        while max_tokens > 0 and base < len(records) - 1 and size(base) > max_tokens // 2:
            base += 1
        notes.append(f"thread rebased: turns {records[old].turn}-{records[base - 1].turn} summarised "
                     f"({len(records) - base} kept in full)")
    kept = records[base:]
    chunks: dict[str, str] = {}
    diff: dict[str, str] = {}
    maps: dict[str, dict[str, str]] = {}
    for record in kept:
        chunks.update(dict(record.entry.chunks))
        diff.update(dict(record.entry.diff_files))
        maps.setdefault(record.entry.map_base, {}).update(dict(record.entry.map_files))
    lines = [summary_line(r) for r in records[:base]]
    if len(lines) > _SUMMARY_LINES:
        lines = [f"({len(lines) - _SUMMARY_LINES} earlier turns not listed)", *lines[-_SUMMARY_LINES:]]
    history = [exchange for r in kept for exchange in r.exchanges()]
    history_chunks = [ids for r in kept
                      for ids in [tuple(c for c, _ in r.entry.chunks), *[()] * len(r.steps)]]
    kept_lines = [line for r in kept
                  for line in [summary_line(r), *[f"(tool step of turn {r.turn})"] * len(r.steps)]]
    return ThreadView(history=history, lines=kept_lines, summary=lines, base=base, chunks_seen=chunks,
                      history_chunks=history_chunks, diff_seen=diff, map_seen=maps, notes=notes)


def partition_chunks(chunks: Sequence[Chunk], seen: dict[str, str]) -> tuple[list[Chunk], list[Chunk]]:
    """(chunks to enter now, chunks the thread already holds unchanged), each in the given order."""
    new: list[Chunk] = []
    held: list[Chunk] = []
    for chunk in chunks:
        (held if seen.get(chunk.id) == byte_hash(chunk.text) else new).append(chunk)
    return new, held


def split_diff(diff: str) -> list[tuple[str, str]]:
    """A unified git diff as (path, that file's patch) in order; text before the first file is dropped."""
    starts = list(_DIFF_FILE.finditer(diff))
    out = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(diff)
        out.append((match.group(2), diff[match.start():end].strip("\n")))
    return out


def diff_delta(diff: str, seen: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...], list[str]]:
    """The part of ``diff`` the thread has not seen: (text, (path, hash) shown, notes).

    A file whose patch the thread already shows unchanged is left out; a file the thread showed as
    changed that no longer is (committed or reverted) is named, so the model's picture stays right.
    """
    files = split_diff(diff)
    if not files and diff.strip():  # not a git diff: all or nothing
        digest = byte_hash(diff)
        if seen.get("", None) == digest:
            return "", (), ["diff unchanged since an earlier turn of this thread"]
        return diff, (("", digest),), []
    shown: list[tuple[str, str]] = []
    parts: list[str] = []
    same: list[str] = []
    current = set()
    for path, patch in files:
        current.add(path)
        digest = byte_hash(patch)
        if seen.get(path) == digest:
            same.append(path)
            continue
        parts.append(patch)
        shown.append((path, digest))
    gone = sorted(p for p, h in seen.items() if p and h and p not in current)
    for path in gone:
        shown.append((path, ""))
    notes = []
    if same:
        notes.append(f"{len(same)} file(s) unchanged since an earlier turn of this thread, not repeated: "
                     + ", ".join(same[:5]) + (" ..." if len(same) > 5 else ""))
    text = "\n".join(parts)
    if gone:
        text += ("\n" if text else "") + "# no longer changed (committed or reverted): " + ", ".join(gone)
    return text, tuple(shown), notes


def map_delta(changes: Sequence[MapChange], seen: dict[str, str]
              ) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The repo-map changes the thread has not seen against the current base: (text, (path, hash) shown).
    A file the thread saw changed that is back to the base is named as such."""
    parts: list[str] = []
    shown: list[tuple[str, str]] = []
    current = set()
    for change in changes:
        current.add(change.path)
        text = render_changes([change])
        digest = byte_hash(text)
        if seen.get(change.path) != digest:
            if seen.get(change.path):  # the thread saw an earlier state of this file's change
                text = text.replace(f"{change.path}:", f"{change.path} (replaces its earlier change):", 1)
            parts.append(text)
            shown.append((change.path, digest))
    back = sorted(p for p, h in seen.items() if h and p not in current)
    shown += [(p, "") for p in back]
    text = "\n".join(parts)
    if back:
        text += ("\n" if text else "") + "back to the map above: " + ", ".join(back)
    return text, tuple(shown)
