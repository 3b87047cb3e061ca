"""Stopping an answer that repeats itself.

Small models fall into loops: the same list of paths, the same three lines, over and over until the
token cap. :class:`RepetitionGuard` watches the streamed text and reports a loop once its tail is one
unit repeated: at least 3 times and over at least 240 characters (so a short unit must repeat more, and a
ruler of dashes or a few equal lines of code do not count). The node then stops the engine and keeps the
text up to the end of the first repeat, naming the cut in explain-context.
"""

from __future__ import annotations

__all__ = ["RepetitionGuard"]

_MIN_UNIT = 8
_MAX_UNIT = 600
_MIN_SPAN = 240
_MIN_REPEATS = 3


class RepetitionGuard:
    def __init__(self) -> None:
        self.text = ""
        self.unit = 0
        """The repeated unit's length once a loop is found (else 0)."""
        self.repeats = 0

    def feed(self, chunk: str) -> bool:
        """Add streamed text; True once the text ends in a loop."""
        if self.unit or not chunk:
            return bool(self.unit)
        self.text += chunk
        text = self.text
        if len(text) < _MIN_SPAN:
            return False
        for unit in range(_MIN_UNIT, min(_MAX_UNIT, len(text) // _MIN_REPEATS) + 1):
            need = max(_MIN_REPEATS, -(-_MIN_SPAN // unit))
            if need * unit > len(text):
                continue
            tail = text[-unit:]
            if tail.strip() and all(text[-(k + 1) * unit:len(text) - k * unit] == tail for k in range(1, need)):
                count = need
                while (count + 1) * unit <= len(text) and text[-(count + 1) * unit:-count * unit] == tail:
                    count += 1
                self.unit, self.repeats = unit, count
                return True
        return False

    def kept(self) -> str:
        """The text without the repeats after the first (the whole text when no loop was found)."""
        if not self.unit:
            return self.text
        return self.text[:len(self.text) - (self.repeats - 1) * self.unit]
