"""Persisted turns of one workspace session: an append-only JSON-lines file of manifests.

``<state_dir>/turns.jsonl`` holds one record per finished turn (manifest, explain, the user text
and the answer). The history segment is rebuilt from it after a restart. A torn last line (crash
mid-write) or a record of another format version is skipped with a warning, never fatal.
"""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec

from contenox.jsonl import append_line
from contenox.planner.explain import Explain
from contenox.planner.manifest import Manifest

__all__ = ["Journal", "ThreadEntry", "ToolStep", "TurnRecord", "slim"]

log = logging.getLogger(__name__)

JOURNAL_VERSION = 1
_SUMMARY_CHARS = 200
"""What a summarised turn keeps of its question and of its answer's first line (its summary line shows less)."""


class ThreadEntry(msgspec.Struct, frozen=True, kw_only=True):
    """What one turn entered into its thread and what of the workspace it showed, so the thread's next turn
    repeats none of it (see :mod:`contenox.planner.thread`)."""

    parts: tuple[str, ...] = ()
    """The last user message as the parts it was tokenized in (the next turn's history tokenizes it the same
    way: a tokenizer may merge across a part boundary)."""
    chunks: tuple[tuple[str, str], ...] = ()
    """(chunk id, byte hash) of the retrieved chunks the turn entered."""
    diff_files: tuple[tuple[str, str], ...] = ()
    """(path, byte hash) of the per-file diff patches the turn showed ('' once shown as no longer changed)."""
    map_base: str = ""
    """Byte hash of the repo map the turn was planned with (its map changes are relative to it)."""
    map_files: tuple[tuple[str, str], ...] = ()
    """(path, byte hash) of the per-file repo-map changes the turn showed."""
    base: int = 0
    """How many of the thread's earlier turns were summarised (not in full) in the turn."""


class ToolStep(msgspec.Struct, frozen=True, kw_only=True):
    """One step of an agent turn: the model's answer holding its tool call(s), and the results it was given
    (the next user message, framed as the template frames a tool result)."""

    call: str
    result: str


class TurnRecord(msgspec.Struct, frozen=True, kw_only=True):
    v: int = JOURNAL_VERSION
    turn: int
    thread: str
    user: str
    """What entered the thread's history (the prompt with any selection folded in)."""
    answer: str
    manifest: Manifest | None
    """None only in memory, once a later turn of the thread holds the manifest to compare with (:func:`slim`)."""
    explain: Explain | None
    """None only in memory, once a later turn was recorded (:func:`slim`)."""
    recorded_at: float
    prompt: str = ""
    """The user's own words (empty in records written before it was kept: ``user`` stands in)."""
    entry: ThreadEntry = msgspec.field(default_factory=lambda: ThreadEntry())
    steps: tuple[ToolStep, ...] = ()
    """The tool steps before the answer, in order (an agent turn); the thread holds them as they were sent."""
    finish_reason: str = ""
    """How the answer ended (``length``: cut at the limit, ``repetition``: stopped looping; empty in records
    written before it was kept): a client showing the thread again says so under the answer."""

    def entry_parts(self) -> tuple[str, ...]:
        """``user`` as the parts it was tokenized in (one part for records written before parts were kept)."""
        return self.entry.parts or (self.user,)

    def exchanges(self) -> list[tuple[tuple[str, ...], str]]:
        """The turn as the thread holds it: (user parts, assistant answer) messages; an agent turn's tool
        calls and results are messages of their own, in order, before its answer."""
        users = [self.entry_parts(), *((step.result,) for step in self.steps)]
        answers = [*(step.call for step in self.steps), self.answer]
        return list(zip(users, answers, strict=True))

    def size_text(self) -> str:
        """Everything the turn holds in its thread (for its token count)."""
        return self.user + self.answer + "".join(step.call + step.result for step in self.steps)


def slim(records: list[TurnRecord]) -> list[TurnRecord]:
    """The records as the planner keeps them in memory, bounded per thread: the manifest and explain of the
    thread's last turn (and the explain of the workspace's last turn) only, and for turns already summarised
    (before the thread's base) only what their summary line shows. The journal on disk keeps everything."""
    last_of_thread: dict[str, int] = {}
    for index, record in enumerate(records):
        last_of_thread[record.thread] = index
    position: dict[str, int] = {}
    out: list[TurnRecord] = []
    for index, record in enumerate(records):
        place = position[record.thread] = position.get(record.thread, -1) + 1
        base = records[last_of_thread[record.thread]].entry.base
        changes: dict[str, object] = {}
        if index != last_of_thread[record.thread] and record.manifest is not None:
            changes["manifest"] = None
        if index != len(records) - 1 and record.explain is not None:
            changes["explain"] = None
        if place < base and (record.entry != ThreadEntry(base=record.entry.base) or record.steps):
            question = " ".join((record.prompt or record.user).split())[:_SUMMARY_CHARS]
            answer = next((line.strip() for line in record.answer.splitlines() if line.strip()), "")
            changes.update(user=question, prompt=question, answer=answer[:_SUMMARY_CHARS], entry=ThreadEntry(
                base=record.entry.base), steps=())
        out.append(msgspec.structs.replace(record, **changes) if changes else record)
    return out


class Journal:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "turns.jsonl"
        self._decoder = msgspec.json.Decoder(TurnRecord)
        self._encoder = msgspec.json.Encoder()

    def load(self) -> list[TurnRecord]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        records: list[TurnRecord] = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = self._decoder.decode(line)
            except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
                log.warning("planner: %s line %d unreadable, skipped: %s", self.path, number, exc)
                continue
            if record.v != JOURNAL_VERSION:
                log.warning("planner: %s line %d has format %d, skipped", self.path, number, record.v)
                continue
            records.append(record)
        return records

    def _lines(self) -> list[bytes]:
        try:
            return [line for line in self.path.read_bytes().splitlines() if line.strip()]
        except FileNotFoundError:
            return []

    def count(self) -> int:
        """How many turns the journal holds: its whole lines (a record is one JSON object; a line a killed node
        tore does not end with its closing brace), nothing decoded: the workspace's turn count."""
        return sum(1 for line in self._lines() if line.rstrip().endswith(b"}"))

    def last(self) -> TurnRecord | None:
        """The last readable turn (decoded from the end: a torn last line is passed over), or None."""
        for line in reversed(self._lines()):
            try:
                record = self._decoder.decode(line)
            except msgspec.DecodeError:
                continue
            if record.v == JOURNAL_VERSION:
                return record
        return None

    def append(self, record: TurnRecord) -> None:
        append_line(self.path, self._encoder.encode(record))
