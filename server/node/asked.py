"""Questions asked of a workspace that have no answer in the journal, for every client.

``<workspace folder>/asked.jsonl`` is append-only: a line when a turn starts (``ask``), and one when it ends
without an answer (``end``, with why: stopped, failed) or with one (``answered``: the journal holds it now). A
question whose ``ask`` has neither was under way when the node went away. A client showing a thread again (the VS
Code panel, ACP's ``session/load``, ``contenox threads``) gets them where they were asked, through the node's
``history``. Once the answered lines are most of the file, it is rewritten with only the open questions.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Literal

import msgspec

from contenox.jsonl import append_line
from contenox.node.persist import write_atomic

__all__ = ["CUT_OFF", "AskedLog", "Unanswered"]

log = logging.getLogger(__name__)

CUT_OFF = "cut off: the node went away before the answer was finished"
_FILE = "asked.jsonl"
_COMPACT_AT = 64
"""Answered lines in the file before it is rewritten with the open questions only."""


class _Line(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    op: Literal["ask", "end", "answered"]
    id: str
    thread: str = ""
    prompt: str = ""
    at: float = 0.0
    why: str = ""


class Unanswered(msgspec.Struct, frozen=True, kw_only=True):
    """A question without an answer in the journal."""

    id: str
    thread: str
    prompt: str
    asked_at: float
    why: str
    """Why there is no answer (stopped, the error, or :data:`CUT_OFF`); empty while its turn runs."""


class AskedLog:
    """One workspace's open questions (thread-safe; every change is one appended line)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / _FILE
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._running: set[str] = set()
        """Questions this node is answering now (an open ``ask`` of an earlier node was cut off)."""
        self._prefix = uuid.uuid4().hex[:12]  # ids unique across nodes and logs of one folder

    def ask(self, thread: str, prompt: str) -> str:
        """Record a question as its turn starts; its id, to :meth:`end` it with."""
        ask_id = f"{self._prefix}-{next(self._ids)}"
        with self._lock:
            self._running.add(ask_id)
            self._append(_Line(op="ask", id=ask_id, thread=thread, prompt=prompt, at=time.time()))
        return ask_id

    def end(self, ask_id: str, why: str = "") -> None:
        """The question's turn ended: answered (``why`` empty: the journal holds it now) or not, and why."""
        with self._lock:
            self._running.discard(ask_id)
            self._append(_Line(op="end", id=ask_id, why=why) if why else _Line(op="answered", id=ask_id))

    def open(self, thread: str | None = None) -> list[Unanswered]:
        """The questions without an answer (of ``thread``, or all), oldest first; one still running has no why."""
        with self._lock:
            asked, answered = self._read()
            if answered >= _COMPACT_AT and answered > len(asked):
                self._compact(asked)
        return [u for u in asked.values() if thread is None or u.thread == thread]

    def _read(self) -> tuple[dict[str, Unanswered], int]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}, 0
        asked: dict[str, Unanswered] = {}
        answered = 0
        decoder = msgspec.json.Decoder(_Line)
        for line in data.splitlines():
            try:
                entry = decoder.decode(line)
            except msgspec.DecodeError:  # a line torn by a kill: the rest stands
                continue
            if entry.op == "ask":
                asked[entry.id] = Unanswered(id=entry.id, thread=entry.thread, prompt=entry.prompt,
                                             asked_at=entry.at, why="" if entry.id in self._running else CUT_OFF)
            elif entry.op == "answered":
                answered += 1
                asked.pop(entry.id, None)
            elif entry.id in asked:
                asked[entry.id] = msgspec.structs.replace(asked[entry.id], why=entry.why)
        return asked, answered

    def _compact(self, asked: dict[str, Unanswered]) -> None:
        lines = []
        for u in asked.values():
            lines.append(msgspec.json.encode(_Line(op="ask", id=u.id, thread=u.thread, prompt=u.prompt,
                                                   at=u.asked_at)))
            if u.why and u.id not in self._running:
                lines.append(msgspec.json.encode(_Line(op="end", id=u.id, why=u.why)))
        write_atomic(self.path, b"".join(line + b"\n" for line in lines))
        log.info("%s: kept the %d open question(s), dropped the answered ones", self.path, len(asked))

    def _append(self, entry: _Line) -> None:
        append_line(self.path, msgspec.json.encode(entry))
