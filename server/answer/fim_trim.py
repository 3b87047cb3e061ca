"""Where an inline completion ends: the end of the line, the end of the block, or where it runs into the code
after the cursor. Applied to the text as it streams, so generation stops as soon as the end is known."""

from __future__ import annotations

import msgspec

__all__ = ["Trimmed", "trim_completion"]

MAX_LINES = 12


class Trimmed(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    ended: str | None
    """Why the completion ends here: "line" (the cursor's line has code after it), "block" (a line leaves the
    cursor's block), "suffix" (it repeats the code after the cursor), "lines" (:data:`MAX_LINES`); None: not yet."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def trim_completion(text: str, *, line_prefix: str, line_suffix: str, suffix: str, final: bool = False) -> Trimmed:
    """The part of ``text`` (the model's middle so far; ``final``: all of it) an editor should show at the
    cursor."""
    if line_suffix.strip():
        # Code after the cursor on its line: complete this line only.
        first, newline, _ = text.partition("\n")
        return Trimmed(text=first.rstrip() if newline or final else first, ended="line" if newline else None)
    lines = text.split("\n")
    base = _indent(line_prefix) if line_prefix.strip() else len(line_prefix.expandtabs(4))
    opens_block = line_prefix.rstrip().endswith((":", "{"))
    following = [s for s in suffix.split("\n")[1:] if s.strip()]
    next_code = following[0].strip() if following else None
    kept = [lines[0]]
    for line in lines[1:] if final else lines[1:-1]:  # while streaming, the last line may still grow
        stripped = line.strip()
        if not stripped:
            if base == 0 and not opens_block and "".join(kept).strip():
                return _done(kept, "block")  # a blank line ends a top-level group
            kept.append(line)
            continue
        if next_code is not None and stripped == next_code:
            return _done(kept, "suffix")
        indent = _indent(line.expandtabs(4))
        if indent < base:
            return _done(kept, "block")
        if opens_block and indent == base:
            if stripped.startswith(("}", ")", "]")):
                kept.append(line)
            return _done(kept, "block")
        kept.append(line)
        if len(kept) >= MAX_LINES:
            return _done(kept, "lines")
    if final:
        return Trimmed(text="\n".join(kept).rstrip(), ended=None)
    if len(lines) > 1:
        kept.append(lines[-1])
    return Trimmed(text="\n".join(kept), ended=None)


def _done(kept: list[str], why: str) -> Trimmed:
    while len(kept) > 1 and not kept[-1].strip():
        kept.pop()
    return Trimmed(text="\n".join(kept).rstrip(), ended=why)
