"""Questions about the code in view: the eval modes that measure anticipated context.

Each task's question is asked with its must-cite file open at the definition the task names (the *place*),
three ways, each in its own private node (a fresh engine, so no mode serves another's cache):

- ``inview``: today's layout. The node has no anticipation; the question carries the place (the open file and
  the cursor line seed retrieval), so its prompt holds the same kind of code as the others'.
- ``anticipated``: the editor reports the place (``focus``) and, for a task with a failing run, that run's
  output (as VS Code's terminal does), stays idle for the think time (``--think-s``, 10 s), then the question
  comes, without the output: the node adds the run the editor reported. Before the think time, an inline completion at the place is timed while the
  anticipation is prefilling (the ``inview`` node times the same completion with nothing running: the cost a
  completion pays for anticipation).
- ``moved``: as ``anticipated``, in a workspace the user was already working in: the editor was at another
  file of it first, long enough for that place to be anticipated (untimed: the stable segments are cached, as
  after any earlier work there), then moves to the place, stays idle for the think time and asks.
- ``typed``: as ``anticipated``, then the question is typed into the chat box (:func:`typing`: a fast typist's
  pace, a pause at each clause) and sent as its last character is typed; the editor reports the draft at each pause,
  as VS Code's chat does 600 ms after the last keystroke, so the node anticipates the code the question names while
  it is being written. The question does not wait at its end: the whole question is never a draft.
- ``floor``: the place and the question itself as the prompt box's draft are anticipated and the question
  waits until that prefill is done: everything but the question is cached, the TTFT floor of this prompt.

TTFT is timed by the client: from sending the question to its first streamed chunk.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from contenox.eval.tasks import Task

__all__ = ["IN_VIEW_MODES", "InView", "Place", "after_question", "before_question", "place_of", "typing"]

IN_VIEW_MODES = ("inview", "anticipated", "moved", "typed", "floor")
_SETTLE_S = 300.0
TYPE_CPS = 5.0
"""``typed``: characters typed a second (60 words a minute: a fast typist; 40 is a common average)."""
PAUSE_S = 1.0
"""``typed``: the typist's pause at each clause's end (after ``.,;:?!`` and a space)."""
DRAFT_DEBOUNCE_S = 0.6
"""How long after the last keystroke the editor sends the draft (VS Code's ``DRAFT_DEBOUNCE_MS``)."""
_CLAUSE_END = re.compile(r"[.,;:?!](?=\s)")


class Place(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    line: int
    """1-based."""


class InView(msgspec.Struct, frozen=True, kw_only=True):
    """One in-view question's measurements (besides the task's result)."""

    place: str
    think_s: float = 0.0
    moved_from: str = ""
    """``moved``: where the editor was before the place ('' : the workspace had no other file to be at)."""
    warm_before_question: bool = False
    """The anticipation's prefill was done when the question came."""
    anticipation_state: str = ""
    """The anticipation's state when the question came (``anticipated`` / ``floor``)."""
    waited_s: float = 0.0
    """From the focus to the question."""
    completion_ms: float | None = None
    """An inline completion at the place: while the anticipation prefills (``anticipated``), or with nothing
    running (``inview``)."""
    completion_during: str = ""
    """What ran while the completion did: ``anticipation`` or ``nothing``."""
    ttft_client_ms: float | None = None
    anticipated: dict[str, Any] | None = None
    """explain-context's account of the anticipated part (``anticipated`` / ``floor``)."""
    prefilled_tokens: int = 0
    """Tokens of retrieved code the node's anticipations computed for this task (its ``again`` after the answer
    included: that one is never used here)."""
    typed_s: float = 0.0
    """``typed``: how long the question took to type (after the think time)."""
    drafts: int = 0
    """``typed``: drafts the editor reported while the question was typed."""


def typing(ask: str, cps: float = TYPE_CPS, pause_s: float = PAUSE_S) -> tuple[list[tuple[float, str]], float]:
    """The drafts an editor reports while ``ask`` is typed at ``cps`` characters a second with a ``pause_s`` pause
    at each clause's end: (seconds from the first keystroke, the draft so far) for each pause long enough for the
    editor's debounce, and the second the last character is typed (the question is sent then, without a pause)."""
    text = ask.strip()
    drafts: list[tuple[float, str]] = []
    pauses = 0
    for match in _CLAUSE_END.finditer(text):
        typed_at = match.end() / cps + pauses * pause_s
        pauses += 1
        if pause_s >= DRAFT_DEBOUNCE_S:
            drafts.append((round(typed_at + DRAFT_DEBOUNCE_S, 3), text[: match.end()]))
    return drafts, round(len(text) / cps + pauses * pause_s, 3)


def place_of(task: Task, tree: Path) -> Place:
    """Where the user looks: the task's selection, else the first must-cite symbol's definition in the first
    must-cite file that defines it, else the first must-cite file's first line."""
    if task.selection is not None:
        return Place(path=task.selection.path, line=task.selection.start_line)
    for path in task.must_cite_files:
        try:
            lines = (tree / path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for symbol in task.must_cite_symbols:
            name = re.escape(symbol.rsplit(".", 1)[-1])
            pattern = re.compile(rf"^\s*(?:async\s+def|def|class|function|const|let|var)\s+{name}\b|"
                                 rf"^\s*{name}\s*[:=(]")
            for number, line in enumerate(lines, 1):
                if pattern.search(line):
                    return Place(path=path, line=number)
    return Place(path=task.must_cite_files[0] if task.must_cite_files else "", line=1)


def elsewhere(task: Task, tree: Path, place: Place) -> Place | None:
    """Where the user was before the place (``moved``): the first file, by path, of the place's language that is
    neither a must-cite file nor a test, at its first line; None when the workspace has no such file."""
    suffix = Path(place.path).suffix
    skip = {*task.must_cite_files, place.path}
    for path in sorted(p.relative_to(tree).as_posix() for p in tree.rglob(f"*{suffix}") if p.is_file()):
        parts = path.split("/")
        if path in skip or any(part.startswith(".") or part.startswith("test") for part in parts):
            continue
        return Place(path=path, line=1)
    return None


def _workspace_state(call: Any, tree: Path) -> tuple[str, int]:
    """(the state of the anticipation of the workspace at ``tree``, or '' for none; the node's prefilled tokens)."""
    status = call("status", {})
    anticipate = (status.get("anticipate") or {}) if isinstance(status, dict) else {}
    root = str(tree.resolve())
    states = [w.get("state", "") for w in (anticipate.get("workspaces") or {}).values() if w.get("root") == root]
    return (states[-1] if states else ""), int(anticipate.get("prefilled_code_tokens")
                                               or anticipate.get("prefilled_tokens") or 0)


def _completion(call: Any, tree: Path, place: Place) -> float | None:
    text = (tree / place.path).read_text(encoding="utf-8")
    line = text.splitlines()[place.line - 1] if place.line <= len(text.splitlines()) else ""
    started = time.perf_counter()
    result = call("complete", {"cwd": str(tree), "path": str(tree / place.path), "text": text,
                               "line": place.line - 1, "character": len(line), "use_cache": False})
    if not isinstance(result, dict) or result.get("ended") == "unavailable":
        return None
    return round((time.perf_counter() - started) * 1000.0, 1)


def before_question(call: Any, mode: str, task: Task, tree: Path, thread: str, *, think_s: float
                    ) -> tuple[Place, dict[str, Any], InView]:
    """What happens before the question in ``mode``: the ask's params that differ (the place, or no terminal
    output where the editor reported it) and the measurements so far."""
    place = place_of(task, tree)
    where = f"{place.path}:{place.line}"
    call("completion_info", {})  # the model is loaded, as in an editor that asked for completions already
    if mode == "inview":
        completion = _completion(call, tree, place)
        return place, {"open_file": place.path, "selection_lines": [place.line, place.line]}, InView(
            place=where, completion_ms=completion, completion_during="nothing" if completion is not None else "")
    before_place = elsewhere(task, tree, place) if mode == "moved" else None
    if before_place is not None:  # untimed: the user's earlier work in the workspace
        call("focus", {"cwd": str(tree), "path": before_place.path, "line": before_place.line, "thread": thread})
        deadline = time.monotonic() + _SETTLE_S
        while time.monotonic() < deadline and _workspace_state(call, tree)[0] != "warm":
            time.sleep(0.1)
    _, before = _workspace_state(call, tree)
    started = time.monotonic()
    draft = task.ask if mode == "floor" else ""
    terminal = task.terminal.strip("\n")
    call("focus", {"cwd": str(tree), "path": place.path, "line": place.line, "thread": thread, "draft": draft,
                   "terminal": terminal})
    completion = None
    if mode in ("anticipated", "moved", "typed"):  # a completion while the anticipation prefills, then the think time
        while time.monotonic() - started < think_s and _workspace_state(call, tree)[0] not in ("computing", "warm"):
            time.sleep(0.05)
        completion = _completion(call, tree, place) if _workspace_state(call, tree)[0] == "computing" else None
        time.sleep(max(0.0, think_s - (time.monotonic() - started)))
    else:  # floor: until everything but the question is computed
        while time.monotonic() - started < _SETTLE_S and _workspace_state(call, tree)[0] != "warm":
            time.sleep(0.1)
    typed_s, drafts = 0.0, 0
    if mode == "typed":
        schedule, typed_s = typing(task.ask)
        began = time.monotonic()
        for at, text in schedule:
            time.sleep(max(0.0, began + at - time.monotonic()))
            call("focus", {"cwd": str(tree), "path": place.path, "line": place.line, "thread": thread, "draft": text,
                           "terminal": terminal})
            drafts += 1
        time.sleep(max(0.0, began + typed_s - time.monotonic()))
    state, _ = _workspace_state(call, tree)
    return place, {"terminal": ""} if terminal else {}, InView(place=where, think_s=think_s if mode != "floor" else 0.0,
                             moved_from=f"{before_place.path}:{before_place.line}" if before_place else "",
                             warm_before_question=state == "warm", anticipation_state=state,
                             waited_s=round(time.monotonic() - started, 2), completion_ms=completion,
                             completion_during="anticipation" if completion is not None else "",
                             prefilled_tokens=-before, typed_s=typed_s, drafts=drafts)


def after_question(call: Any, mode: str, tree: Path, view: InView, explain: dict[str, Any],
                   ttft_client_ms: float | None) -> InView:
    """The measurements once the answer came; waits for the node's anticipations to settle (the node anticipates
    the place again after the answer) so they never run beside the next task."""
    prefilled = 0
    if mode != "inview":
        deadline = time.monotonic() + _SETTLE_S
        while time.monotonic() < deadline and _workspace_state(call, tree)[0] in ("scheduled", "planned", "computing"):
            time.sleep(0.2)
        prefilled = view.prefilled_tokens + _workspace_state(call, tree)[1]
    return msgspec.structs.replace(view, ttft_client_ms=ttft_client_ms, anticipated=explain.get("anticipated"),
                                   prefilled_tokens=prefilled)
