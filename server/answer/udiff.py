"""Unified diffs: the second edit format, the one the tool loop's ``propose_edit`` call carries.

A model's diff rarely applies as written (hunk counts off, one context line before and none after, ``a/`` and
``b/`` prefixes or not), so :func:`apply_unified_diff` lays it on the file's text with ``git apply`` in a scratch
folder, tolerantly; the user then reviews the change recomputed from the two texts
(:func:`contenox.answer.edits.unified_diff`), never the model's diff.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

__all__ = ["apply_unified_diff"]

_GIT_TIMEOUT_S = 20


def apply_unified_diff(rel: str, old: str | None, diff: str) -> tuple[str | None, str]:
    """``diff`` applied to ``old`` (None: no such file) by ``git apply`` in a scratch folder: the new text, or
    None and git's reason. Paths with and without the ``a/``/``b/`` prefixes are accepted, hunk line counts are
    recounted, and a hunk whose context git will not anchor (models often write one context line before and none
    after) is tried with less context (``-C1``, then ``-C0``: the removed lines must still match). The user
    reviews the change as it comes out, recomputed from the two texts, not the model's diff."""
    with tempfile.TemporaryDirectory(prefix="contenox-edit-") as scratch:
        target = Path(scratch) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if old is not None:
            target.write_text(old, encoding="utf-8")
        patch = Path(scratch) / ".contenox.patch"
        patch.write_text(diff, encoding="utf-8")
        reason = ""
        # less context only where removed lines anchor every hunk: a hunk that only adds lines has nothing else
        # to place it (with -C0 its lines land at its line number whatever its context says: the 1.5B's
        # docstring-splitting insertion came out as a diff that "applied")
        fallbacks: tuple[tuple[str, ...], ...] = (("-C1",), ("-C0",)) if _anchored(diff) else ()
        for strip in ("-p1", "-p0"):
            for context in ((), *fallbacks):
                options = [strip, "--recount", *context, str(patch)]
                check = subprocess.run(["git", "apply", "--check", *options], cwd=scratch, capture_output=True,
                                       text=True, timeout=_GIT_TIMEOUT_S)
                if check.returncode != 0:
                    reason = reason or _last_line(check.stderr) or "git apply refused the diff"
                    continue
                subprocess.run(["git", "apply", *options], cwd=scratch, capture_output=True, text=True,
                               timeout=_GIT_TIMEOUT_S, check=True)
                if not target.exists():
                    return None, f"the diff does not change {rel}"
                return target.read_text(encoding="utf-8"), ""
        return None, reason


def _anchored(diff: str) -> bool:
    """Every hunk of ``diff`` removes a line (what git must find in the file, with or without context)."""
    hunks = re.split(r"^@@[^\n]*@@[^\n]*\n", diff, flags=re.MULTILINE)[1:]
    return bool(hunks) and all(re.search(r"^-(?!--)", hunk, re.MULTILINE) for hunk in hunks)


def _last_line(text: str) -> str:
    lines = [line.removeprefix("error: ") for line in text.strip().splitlines()]
    return lines[-1] if lines else ""
