"""The node core: one engine, workspaces by resolved root, a fair turn queue, persisted sessions.

Protocol adapters (``contenox.lsp``, ``contenox.acp``, the CLI's ``rpc``) call :class:`Node`; the
contract is in docs/internal-api.md ("node core"). The model loads lazily on the first turn (or in the
background when persisted sessions are re-warmed after a restart).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox.answer.blocks import parse_edit_blocks
from contenox.answer.edits import ProposedEdit, ProposedEdits
from contenox.answer.imports import complete_imports
from contenox.answer.locations import calls_section, locations
from contenox.answer.moves import move_file, move_renamed_file
from contenox.answer.renames import (
    asked_names,
    keep_overwritten,
    propagate_renames,
    rename_asked,
    renamed_definitions,
)
from contenox.answer.repetition import RepetitionGuard
from contenox.answer.resolve import propose_edits
from contenox.buildinfo import build_id
from contenox.config import Config
from contenox.errors import (
    Cancelled,
    ContenoxError,
    EngineBusy,
    EngineCrashed,
    EngineError,
    InvalidRequest,
    PathOutsideWorkspace,
)
from contenox.node import backend
from contenox.node.agent import (
    ANSWER_GRAMMAR,
    CallMarkupFilter,
    call_shaped,
    edit_call_rest,
    edit_window,
    run_step,
    tool_schemas,
)
from contenox.node.anticipating import Anticipation, Anticipator, Focus, anticipated_tokens, reported_run
from contenox.node.asked import Unanswered
from contenox.node.completions import Completer
from contenox.node.contract import (
    AnticipationStatus,
    CommandHost,
    CompletionInfo,
    CompletionOutcome,
    CompletionRequest,
    EventCallback,
    Exchange,
    ModelChoice,
    ThreadInfo,
    TurnEvent,
    TurnOutcome,
    TurnRequest,
)
from contenox.node.paths import workspace_dir, workspace_key, workspace_root, workspaces_dir
from contenox.node.persist import sweep_temp_files
from contenox.node.queue import TurnQueue
from contenox.node.store import SavedPrefix, WorkspaceRecord, WorkspaceStore, migrate_legacy
from contenox.node.tasks import TaskSet
from contenox.node.tools import ToolResult, run_tool
from contenox.node.verifying import (
    Draft,
    ScratchCommands,
    VerifyJob,
    asks_for_change,
    asks_only_to_read,
    asks_to_edit,
    held_out,
    stacked_said,
    strip_edit_blocks,
    verification_error,
)
from contenox.node.verifying import describe as describe_verification
from contenox.node.verifying import skipped as skipped_verification
from contenox.node.warming import Warmer
from contenox.node.workspaces import WorkspaceState
from contenox.planner import toolcheck
from contenox.planner.anticipate import carried_over
from contenox.planner.fim import build_fim_prompt, cursor_window
from contenox.planner.journal import Journal, ToolStep
from contenox.planner.prompts import edit_step_request, rename_step_request
from contenox.planner.segments import chunk_part
from contenox.planner.toolcheck import TEXT_ONLY_GRAMMAR, Verdict
from contenox.planner.turn import Anticipated, Question, finish, prepare
from contenox.verify import edit_blocks_grammar, is_test_path, pasted_run, rename_grammar
from contenox.workspace import RetrievalQuery, points_at, rename_identifier, retarget_imports

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from contenox.answer.toolcalls import ParsedAnswer
    from contenox.planner import Chunk, Explain, Planner, TurnPlan
    from contenox.runtime_ov import EngineLike, FinalEvent
    from contenox.verify import ConsentStore, Verification
    from contenox.workspace import ChangeEvent, RelatedHit, SymbolInfo, SymbolLocation, Workspace

__all__ = ["Node"]

log = logging.getLogger(__name__)

_CANCEL_CONFIRM_S = 30.0
_REWARM_LIMIT = 4


def _proposed_edits(answer: str, workspace: Workspace, shown: tuple[str, ...], question: str = "") -> ProposedEdits:
    """The answer's edit blocks as diffs against the workspace's current text (editor buffers first), renames
    carried to every use (the file moved too where the question asks, with or without a rename and with or without
    the answer's blocks: :mod:`contenox.answer.moves`) and the imports the change leaves undone added
    (:mod:`contenox.answer.imports`)."""
    def read(path: str) -> str | None:
        try:
            return workspace.read_text(path)
        except ContenoxError:  # no such file, outside the root, binary: the block does not resolve there
            return None

    def locate(name: str) -> list[tuple[str, int, int]]:
        return [(found.path, found.line, found.end_line) for found in workspace.find_symbol(name)]

    def users(name: str) -> list[str]:
        return list(dict.fromkeys(hit.path for hit in workspace.search(name, regex=False, limit=5000, word=True)))

    proposed = propose_edits(answer, read, workspace.indexed_paths(), locate, shown, question)
    if proposed.edits:
        proposed = keep_overwritten(proposed, locate, question, users)
        renamed = propagate_renames(proposed, locate, users, read, rename_identifier, question)
        proposed = move_renamed_file(renamed, question, read, users, retarget_imports)
    proposed = move_file(proposed, question, read, users, retarget_imports)  # "move X to Y": the node's own change
    return complete_imports(proposed, read, locate, question) if proposed.edits else proposed


_BEYOND_LEAD = "Beyond the edit blocks, the offered change also has: "


def _beyond_blocks(edits: ProposedEdits) -> str:
    """The sentence an offered change's answer says what the node added to the model's edit blocks with: a rename
    carried to every use, its file moved, the imports and the export the change left out ('' when it added
    nothing)."""
    added = [note for note in edits.notes if note.startswith("import of `") or " exported from its package " in note
             or (note.startswith("rename of `") and " carried to every use" in note)
             or (note.startswith("file ") and ", as the question asks: " in note)]
    return (_BEYOND_LEAD + "; ".join(added) + ".") if added else ""


_EDIT_STEP_PLACES = 4
_INFILL_PREFIX_TOKENS = 1536
_INFILL_SUFFIX_TOKENS = 512
"""The file around a line verification fills in (as the probe that measured it: bench/probes/fim_lines.py); wider
than an inline completion's, which must answer while the user types."""
_INFILL_TOKENS = 48
"""A line's fill: one line, cut there if it runs on."""
_EDIT_STEP_DEFINITION_LINES = 150
_PATHLIKE = re.compile(r"[\w./-]+\.\w{1,8}")
_NAMED = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`|\*\*([A-Za-z_][\w.]*)\*\*")
"""A name the answer marks as code (backticks) or bold."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_TESTS = re.compile(r"\btests?\b", re.IGNORECASE)


def _edit_step_files(workspace: Workspace, answer: str, shown: tuple[str, ...], question: str) -> list[tuple[str, str]]:
    """What an edit step's blocks may edit (its grammar's SEARCH runs), localized as Agentless edits: the
    definitions the question names, then those the answer marks as code, each its own lines (up to 150); then
    the prompt's files the question or the answer names by path that hold none of those, whole; with no place
    found, the prompt's files in order. Test files only when the question speaks of tests
    ("the tests included"; naming a test function is not asking to change it); at most
    :data:`_EDIT_STEP_PLACES`."""
    tests = bool(_TESTS.search(question))
    names = [*_WORD.findall(question),
             *(a or b for a, b in _NAMED.findall(answer))]
    places: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()
    texts: dict[str, str | None] = {}

    def text_of(path: str) -> str | None:
        if path not in texts:
            try:
                texts[path] = workspace.read_text(path)
            except ContenoxError:
                texts[path] = None
        return texts[path]

    for name in dict.fromkeys(name.rsplit(".", 1)[-1] for name in names):
        if len(name) < 3:
            continue
        for found in workspace.find_symbol(name):
            if len(places) >= _EDIT_STEP_PLACES or (is_test_path(found.path) and not tests):
                continue
            if (found.path, found.line) in seen or not (text := text_of(found.path)):
                continue
            seen.add((found.path, found.line))
            end = min(found.end_line, found.line + _EDIT_STEP_DEFINITION_LINES - 1)
            places.append((found.path, "\n".join(text.splitlines()[found.line - 1:end]) + "\n"))
    # then the files the question or the answer names by path that no definition above is in (setup.py's
    # python_requires, a package's __init__.py and its __all__: a change there is no definition's); with no
    # place at all, the prompt's files too
    named = [path for path in dict.fromkeys(_PATHLIKE.findall(f"{question}\n{answer}")) if path in shown]
    held = {path for path, _ in places}
    for path in dict.fromkeys([*named, *(() if places else shown)]):
        if len(places) >= _EDIT_STEP_PLACES:
            break
        if path not in held and not (is_test_path(path) and not tests) and (text := text_of(path)):
            places.append((path, text))
    return places


_FENCE = re.compile(r"^\s*```", re.MULTILINE)


def _open_edit_block(text: str, fences: bool = False) -> bool:
    """``text`` ends inside an edit block: its last ``<<<<<<< SEARCH`` has no ``>>>>>>> REPLACE`` after it; with
    ``fences``, also inside a code block (an odd number of ``` fence lines: a quoted definition being rewritten,
    "here is the updated function", cut before its end does not parse)."""
    opened = text.rfind("<<<<<<< SEARCH")
    if opened >= 0 and text.find(">>>>>>> REPLACE", opened) < 0:
        return True
    return fences and len(_FENCE.findall(text)) % 2 == 1


_DOTTED = re.compile(r"[A-Za-z_][\w.]*")
_RENAME_HERE = re.compile(r"\brenam(?:e|ing)\s+(?:(?:this|the\s+(?:selected|current|highlighted))\s+"
                          r"(?!(?:file|module|package|folder|directory|variable|parameter|argument|attribute|field|"
                          r"constant|key|option|flag)\b)([A-Za-z]+)\b|it\b)", re.IGNORECASE)
"""A rename of the definition in front of the user ("Rename this function to ...", "rename this helper", "rename
it"): the place decides; a word that names no definition (this file, this variable) is no such rename."""


def _renamed_lines(workspace: Workspace, question: str, place: tuple[str, int, int] | None = None,
                   answer: str = "") -> list[tuple[str, str, str]]:
    """A question that asks to rename definitions it names: for each (up to three), its block written in up to
    the name, the definition's first line as the SEARCH part and, as its replacement, the line up to the name
    without the blank before it ("path\n<<<<<<< SEARCH\n    def old(self):\n=======\n    def"), that blank
    (" "), and the rest of the line after the name ("(self):"). The edit step opens with the first (written in)
    and the model writes the blank and a new name alone (its tokens carry the blank before a word: written in,
    the 0.5B's next token was a word out of place, ``istringstream`` for ``parse_stream``); the rest of the line
    stays as it is, and the rename reaches every use. (The 0.5B, asked for the blocks of "rename int_to_bytes to
    encode_int", changed the function's body; opened at the line, it renamed ``parse_stream`` and rewrote its
    parameters too.) The names after "rename" that the workspace defines, outside tests unless the question
    speaks of them; for "rename this function" (or "rename it"), the definition at the editor's ``place`` (its
    path and selected lines), the innermost one there of the kind asked. A question that names no definition
    but describes it by text it holds ("the wrapper that logs 'could not parse statement'"): the definition
    holding that quoted text; for "rename it" with no place, the first definition the ``answer`` marks as code
    (the answer says what "it" is). None when it asks no rename."""
    asked = rename_asked(question)  # the old names stand before the "to" of the new ones
    if asked is None:
        return []
    here = _RENAME_HERE.search(question)
    if here is not None and place is not None:  # else the names it gives, if any
        located = _definition_at(workspace, place, (here.group(1) or "").lower())
        if located is not None and (block := _renamed_line(workspace, located)) is not None:
            return [block]
    tests = bool(_TESTS.search(question))
    renamed: list[tuple[str, str, str]] = []
    names = (dotted.rstrip(".").rsplit(".", 1)[-1] for dotted in _DOTTED.findall(asked[0]))
    for name in dict.fromkeys(names):  # Duration.totimedelta: the method, not its class; each name once
        for place_ in workspace.find_symbol(name) if len(name) >= 3 and len(renamed) < 3 else ():
            if is_test_path(place_.path) and not tests:
                continue
            if (block := _renamed_line(workspace, place_)) is not None:
                renamed.append(block)
                break
    if renamed:
        return renamed
    for quoted in dict.fromkeys(a or b for a, b in _QUOTED.findall(question)):
        for hit in workspace.search(quoted, regex=False, limit=20):
            if is_test_path(hit.path) and not tests:
                continue
            located = _definition_at(workspace, (hit.path, hit.line, hit.line), "")
            if located is not None and (block := _renamed_line(workspace, located)) is not None:
                return [block]
    if here is not None and answer:  # "rename it": what the answer says "it" is
        for name in dict.fromkeys((a or b).rsplit(".", 1)[-1] for a, b in _NAMED.findall(answer)):
            for place_ in workspace.find_symbol(name) if len(name) >= 3 else ():
                if not (is_test_path(place_.path) and not tests) and (block := _renamed_line(workspace, place_)):
                    return [block]
    return renamed


_QUOTED = re.compile(r"'([^'\n]{8,80})'|\"([^\"\n]{8,80})\"")
"""Text a question quotes (a message a definition logs or raises), long enough to find its definition by."""


def _renamed_line(workspace: Workspace, place: SymbolLocation) -> tuple[str, str, str] | None:
    """:func:`_renamed_lines`'s block for one definition, or None when its first line does not hold its name."""
    try:
        line = workspace.read_text(place.path).splitlines()[place.line - 1]
    except (ContenoxError, IndexError):
        return None
    at = re.search(rf"(?<![\w$]){re.escape(place.name)}(?![\w$])", line)
    if at is None:
        return None
    before = line[:at.start()]
    kept = before.rstrip()
    return f"{place.path}\n<<<<<<< SEARCH\n{line}\n=======\n{kept}", before[len(kept):], line[at.end():]


_CLASS_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "type"})


def _definition_at(workspace: Workspace, place: tuple[str, int, int], kind: str) -> SymbolLocation | None:
    """The definition the editor's place is in (``(path, first, last)`` selected lines): the innermost one
    holding the selection's first line, else the first one that begins inside the selection (a selection that
    starts on a decorator or a blank line above); the class around a method when ``kind`` asks for a class."""
    path, first, last = place
    for line in range(first, max(first, min(last, first + 40)) + 1):
        chunk = workspace.chunk_at(path, line)
        if chunk is None or chunk.kind == "module":
            continue
        parts = chunk.name.split(".")  # Signer.unsign: the method, or its class when a class is asked for
        wanted = parts[0] if kind in _CLASS_KINDS and len(parts) > 1 else parts[-1]
        held = [found for found in workspace.find_symbol(wanted)
                if found.path == chunk.path and found.line <= line <= found.end_line]
        if kind in _CLASS_KINDS:
            held = [found for found in held if found.kind in _CLASS_KINDS] or held
        if held:
            return max(held, key=lambda found: found.line)  # the innermost
    return None


def _rename_places(workspace: Workspace, edits: ProposedEdits) -> str:
    """Where an offered change that carried a rename changes each file, by definition, as an editor's rename
    preview lists them ("internal/identifiers.js: `compareIdentifiers`, `rcompareIdentifiers`, top level; ...");
    '' when no rename was carried (the model's own blocks show their places)."""
    if not any(note.startswith("rename of `") and " carried to every use" in note for note in edits.notes):
        return ""
    files: list[str] = []
    for edit in edits.edits:
        if edit.old_text is None or edit.new_text is None:
            files.append(f"{edit.path} ({'new file' if edit.old_text is None else 'deleted'})")
            continue
        old = edit.old_text.split("\n")
        matcher = difflib.SequenceMatcher(a=old, b=edit.new_text.split("\n"), autojunk=False)
        names: dict[str, None] = {}
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            for line in range(i1 + 1, max(i1 + 1, i2) + 1) if tag != "equal" else ():
                chunk = workspace.chunk_at(edit.path, min(line, max(1, len(old))))
                names[f"`{chunk.name}`" if chunk is not None and chunk.kind != "module" else "top level"] = None
        files.append(f"{edit.path}: {', '.join(names)}" if names else edit.path)
    return "The places it changes: " + "; ".join(files) + "."


def _changed_definitions(workspace: Workspace, edits: ProposedEdits) -> tuple[str, ...]:
    """What ``edits`` change, in words: the definition holding each edit's first changed line, or the line before
    it when that one is outside any (a line inserted at a function's end) (``"`LRUCache.__getitem__` in
    src/cachetools/__init__.py"``), or the file alone (a new file, a change outside any definition)."""
    found: list[str] = []
    for edit in edits.edits:
        old, new = (edit.old_text or "").splitlines(), (edit.new_text or "").splitlines()
        line = next((i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                    min(len(old), len(new)) + 1)
        chunk = None
        for at in (line, line - 1) if edit.old_text else ():  # an inserted line: the definition it follows
            chunk = workspace.chunk_at(edit.path, min(max(1, at), max(1, len(old))))
            if chunk is not None and chunk.kind != "module":
                break
        found.append(f"`{chunk.name}` in {edit.path}" if chunk is not None and chunk.kind != "module" else edit.path)
    return tuple(dict.fromkeys(found))


async def _emit(on_event: EventCallback | None, event: TurnEvent) -> None:
    if on_event is None:
        return
    try:
        await on_event(event)
    except asyncio.CancelledError:
        raise
    except Exception:  # a client that cannot take events must not break the turn
        log.exception("on_event failed")


def prefill_detail(done: int, total: int, cached: int) -> str:
    """The prefill in words: new tokens computed of those to compute, and the cached share."""
    new = max(0, total - cached)
    return (f"{max(0, min(done, total) - cached):,} of {new:,} new prompt tokens computed "
            f"({100 * cached / max(1, total):.0f}% of {total:,} cached)")


def _unchanged(answer: str) -> bool:
    """An answer whose edit blocks all replace lines with the same lines (a change that changes nothing)."""
    blocks = parse_edit_blocks(answer)
    return bool(blocks) and all(block.search.strip() == block.replace.strip() for block in blocks)


_PATH_ARGUMENT = re.compile(r'"path"\s*:\s*"([^"\\]+)"')
_DIFF_HEADER = re.compile(r"[-+]{3} (?:[ab]/)?([^\s\\\"]+)")


def _relpath(workspace: Workspace, path: object) -> str | None:
    """``path`` relative to the workspace, or None (not a string, or outside it)."""
    if not isinstance(path, str) or not path.strip():
        return None
    try:
        return workspace.relpath(path)
    except ContenoxError:
        return None


def _called(answer: str) -> list[str]:
    """The tool names an answer called (for the explain note)."""
    from contenox.answer.toolcalls import parse_tool_calls

    return [call.name for call in parse_tool_calls(answer, tool_schemas()).calls]


class _CrashedBeforeOutput(Exception):
    """The engine process was gone before it started the turn (killed while idle, or dying as it was sent)."""

    def __init__(self, error: EngineCrashed) -> None:
        super().__init__(error.message)
        self.error = error


def _unanswered(question: Unanswered) -> Exchange:
    return Exchange(turn=0, user=question.prompt, answer="", unanswered=question.why)


class Node:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.store = WorkspaceStore(workspaces_dir(config))
        self.queue = TurnQueue(max_active=config.engine.max_num_seqs)
        self.clients = 0
        """Open connections, kept by the daemon (shown by ``status``)."""
        self.started = time.time()
        self._workspaces: dict[str, WorkspaceState] = {}
        self._engine: EngineLike | None = None
        self._warmer: Warmer | None = None
        self._rewarming: dict[str, asyncio.Event] = {}
        """Sessions whose re-warm after a restart is still pending: their next turn waits for it."""
        self._engine_state = "unloaded"
        self._engine_error: str | None = None
        self._engine_lock = asyncio.Lock()
        self._engine_restarts = 0
        self._last_crash: str | None = None
        self._restart_reason: str | None = None
        """Set when a request failed inside the engine: the engine may be unusable, so the next turn starts a
        fresh one (a failed native request can leave the pipeline broken for every later request)."""
        self._background = TaskSet()
        self._warm = {"done": 0, "total": 0}
        self._closed = False
        self.completer = Completer(config.completion, self.engine, self._open_index)
        self._listeners: list[Callable[[str, AnticipationStatus], None]] = []
        self.anticipator = Anticipator(
            config.anticipate, lambda: self._engine if self._engine_state == "ready" else None,
            self._anticipation_plan, lambda state: state.lock.locked() or bool(self.queue.snapshot()["active"])
            or self.queue.full(), self._anticipation_status)

    # -- workspaces ------------------------------------------------------------------------
    def workspace(self, root: str | Path) -> WorkspaceState:
        """The state of the workspace containing ``root`` (loaded from disk, or new)."""
        if not str(root):
            raise InvalidRequest("missing workspace root")
        path = Path(root)
        if not path.is_absolute():
            raise InvalidRequest(f"workspace root must be absolute: {root}")
        if path.is_file():
            path = path.parent
        if not path.is_dir():
            raise InvalidRequest(f"not a directory: {root}")
        resolved = workspace_root(path)
        if resolved == Path(resolved.anchor) or (resolved == Path.home() and not (resolved / ".git").exists()):
            raise InvalidRequest(f"{resolved} is not a project folder: run Contenox inside a repository or a "
                                 f"project directory", root=str(resolved))
        state = self._workspaces.get(str(resolved))
        if state is None:
            key = workspace_key(resolved)
            record = self.store.load(key) or self.store.new_record(resolved, key)
            state = WorkspaceState(resolved, record, self.store, workspace_dir(self.config, key))
            self._workspaces[str(resolved)] = state
        return state

    async def _index(self, state: WorkspaceState,
                     on_event: EventCallback | None) -> tuple[Workspace, tuple[ChangeEvent, ...]]:
        """Open (first use) or refresh the workspace index; the index and what changed since the last turn."""
        if state.workspace is None:
            await _emit(on_event, TurnEvent(kind="state", state="indexing"))
            cache_dir = state.folder / "index"

            def open_and_overlay() -> Workspace:
                ws = backend.open_workspace(self.config, state.root, cache_dir)
                for rel, text in state.overlay_texts().items():
                    ws.set_overlay(rel, text)
                return ws

            state.workspace = await asyncio.to_thread(open_and_overlay)
            return state.workspace, ()
        events = await asyncio.to_thread(state.workspace.refresh)
        # until a turn names them (an anticipation refreshes too): each change once, the latest last
        state.pending_changes = [*(e for e in state.pending_changes if e not in events), *events]
        return state.workspace, tuple(state.pending_changes)

    # -- engine ----------------------------------------------------------------------------
    async def engine(self) -> EngineLike:
        """The engine, started on first use (model pulled if needed), and again after its process died."""
        if self._engine is not None and self._engine.alive and self._restart_reason is None:
            return self._engine
        async with self._engine_lock:
            if self._engine is not None and (self._restart_reason or not self._engine.alive):
                await self._drop_crashed_engine()
            if self._engine is None:
                self._engine_state = "loading"
                try:
                    self._engine = await asyncio.to_thread(backend.load_engine, self.config)
                except ContenoxError as exc:
                    self._engine_state, self._engine_error = "error", exc.message
                    raise
                except Exception as exc:
                    self._engine_state, self._engine_error = "error", str(exc)
                    raise EngineError(f"cannot start the engine: {exc}") from exc
                self._warmer = Warmer(self._engine)
                self._engine_state, self._engine_error = "ready", None
                if self._engine_restarts and not self._rewarming:  # the kept prefixes, warm again
                    self.start_rewarm()
        assert self._engine is not None
        return self._engine

    async def models(self) -> ModelChoice:
        """The installed models and the one this node serves (the model pickers)."""
        from contenox.runtime_ov import ModelStore

        installed = await asyncio.to_thread(ModelStore(self.config.models_dir).list)
        return ModelChoice(current=self.config.model.default, installed=tuple(m.name for m in installed))

    async def use_model(self, name: str) -> ModelChoice:
        """Serve ``name`` from now on and make it the default in config.toml: the engine of the old model is
        closed and the next request loads the new one (the workspaces' planners start again with its
        tokenizer). Refused while turns run (EngineBusy), and for a model that is not installed."""
        from contenox.config import set_default_model
        from contenox.planner.map_base import MapBase
        from contenox.runtime_ov import ModelStore

        await asyncio.to_thread(ModelStore(self.config.models_dir).get, name)  # ModelNotFound, with how to pull
        if name != self.config.model.default:
            queue = self.queue.snapshot()
            if queue["active"] or queue["waiting"]:
                raise EngineBusy(f"turns are running on {self.config.model.default}; switch to {name} when they end",
                                 model=name)
            await asyncio.to_thread(set_default_model, self.config.root, name)
            self.config = msgspec.structs.replace(self.config, model=msgspec.structs.replace(self.config.model,
                                                                                             default=name))
            async with self._engine_lock:
                old, self._engine = self._engine, None
                if self._warmer is not None:
                    warmer, self._warmer = self._warmer, None
                    await warmer.close()
                if old is not None:
                    await asyncio.to_thread(old.close)
                self._engine_state, self._engine_error = "unloaded", None
            for state in self._workspaces.values():
                state.planner, state.map_base = None, MapBase()
            self.completer = Completer(self.config.completion, self.engine, self._open_index)
            log.info("now serving %s (default model in %s)", name, self.config.root / "config.toml")
        return await self.models()

    async def _drop_crashed_engine(self) -> None:
        crashed, self._engine = self._engine, None
        self._engine_restarts += 1
        self._last_crash = ((crashed.crash_reason if crashed is not None else None) or self._restart_reason
                            or "the engine process ended")
        self._restart_reason = None
        log.warning("engine restart %d after: %s", self._engine_restarts, self._last_crash)
        if self._warmer is not None:
            warmer, self._warmer = self._warmer, None
            await warmer.close()
        if crashed is not None:
            await asyncio.to_thread(crashed.close)

    # -- turns -----------------------------------------------------------------------------
    async def turn(self, request: TurnRequest, on_event: EventCallback | None = None,
                   commands: CommandHost | None = None) -> TurnOutcome:
        """Run one turn; cancelling the awaiting task cancels it and raises :class:`Cancelled`. ``commands``:
        where an agent turn's ``run_command`` calls run (the client's terminal); None: they are tool errors."""
        if not request.prompt.strip():
            raise InvalidRequest("empty prompt")
        state = self.workspace(request.root)
        asked = request.asked or (None if request.plan_only else await asyncio.to_thread(
            state.asked.ask, request.thread, request.prompt))
        why = "stopped before the answer was finished"
        try:
            if state.lock.locked() or self.queue.full():
                await _emit(on_event, TurnEvent(kind="state", state="queued"))
            async with self.queue.slot(request.client_id, state.key), state.lock:
                state.busy_client = request.client_id
                try:
                    outcome = await self._run_turn(state, request, on_event, commands)
                    why = ""  # answered: the journal holds it
                    return outcome
                finally:
                    state.busy_client = None
        except asyncio.CancelledError:  # while queued, indexing or planning (the engine phase raises its own)
            raise Cancelled("turn cancelled", workspace=str(state.root)) from None
        except Cancelled:
            raise
        except ContenoxError as exc:
            why = f"{exc.kind}: {exc.message}"
            raise
        except Exception as exc:
            why = f"internal error: {type(exc).__name__}: {exc}"
            raise
        finally:
            if asked is not None:
                await asyncio.shield(asyncio.to_thread(state.asked.end, asked, why))

    def _planner(self, state: WorkspaceState, engine: EngineLike) -> Planner:
        """The workspace's planner, made on first use (with the loaded model's tokenizer)."""
        if state.planner is None:
            state.planner = backend.make_planner(self.config, engine, state.folder)
        return state.planner

    def _question(self, state: WorkspaceState, request: TurnRequest) -> tuple[TurnRequest, Question, Focus | None]:
        """The request as the planner's question: the files mentioned for this turn (turn material, in its
        message and entered into the thread once, not pins: a pin that comes and goes would change everything
        after the pins segment on the next turn), and what the editor reported (its place seeds retrieval; its
        last failing run goes with a question that brings none). The request, with that run when it goes."""
        notes = list(request.notes)
        wanted: list[str] = []
        for path in request.pins:
            try:
                wanted.append(state.relative(path))
            except PathOutsideWorkspace:  # a note, never a failed turn
                notes.append(f"mentioned {path}: outside the workspace {state.root}, left out")
        pinned_files = set(state.record.pins)  # a whole-file pin is its path (range and outline pins carry a suffix)
        mentions = tuple(rel for rel in dict.fromkeys(wanted) if rel not in pinned_files)
        try:
            open_file = state.relative(request.open_file) if request.open_file else None
        except ContenoxError:  # an editor file outside the workspace seeds nothing
            open_file = None
        selection_lines = request.selection_lines
        focus = self.anticipator.focus_of(state)
        if not request.terminal.strip() and (pasted := pasted_run(request.prompt)) is not None:
            # a failing run pasted after the question (the CLI, Zed): the turn's terminal output, as an editor's
            # would be (its frames seed retrieval as a trace's, its `$` line is the check command)
            request = msgspec.structs.replace(request, prompt=pasted[0], terminal=pasted[1])
            notes.append(f"the failing run pasted in the question ({pasted[1].splitlines()[0][:120]}) went in as "
                         "its terminal output")
        failing_run = (focus.failing_run(request.thread, time.monotonic(), self.config.anticipate.terminal_ttl_s)
                       if focus is not None and not request.terminal.strip() else "")
        if failing_run:  # the question came with none of its own: the one the editor saw goes with it
            request = msgspec.structs.replace(request, terminal=failing_run)
            notes.append(f"the terminal's last failing run ({failing_run.splitlines()[0][:120]}), reported "
                         "by the editor, went with the question")
        if (open_file is None and focus is not None and focus.thread in ("", request.thread)
                and time.monotonic() - focus.at <= self.config.anticipate.focus_ttl_s):
            open_file, selection_lines = focus.path, (focus.line, focus.line)
            notes.append(f"the editor's place {focus.path}:{focus.line} seeded retrieval (the question came "
                         "from the chat with that file in view)")
        question = Question(prompt=request.prompt, thread=request.thread, selection=request.selection,
                            terminal=request.terminal, open_file=open_file, selection_lines=selection_lines,
                            mentions=mentions, notes=tuple(notes))
        return request, question, focus

    async def _run_turn(self, state: WorkspaceState, request: TurnRequest,
                        on_event: EventCallback | None, commands: CommandHost | None = None) -> TurnOutcome:
        engine = await self.engine()
        workspace, changes = await self._index(state, on_event)
        planner = self._planner(state, engine)
        request, question, focus = self._question(state, request)
        taken = self.anticipator.take(state, request.thread, keep=request.plan_only)
        pending = self._rewarming.get(state.session_id)
        if pending is not None:  # its prefix is already queued in the engine: plan once it is cached
            await pending.wait()
        checked = planner.tools and self.config.tools.check and not request.plan_only
        verdict = await self._needs_tool(engine, planner, request.prompt) if checked else None
        text_only = verdict is not None and not verdict.tools
        require_call = checked and not text_only and self.config.tools.require_call  # the check said yes
        if verdict is not None and text_only:
            question = msgspec.structs.replace(question, text_only=True, text_only_why=verdict.why)
        settings = self.config.anticipate
        anticipated = None if taken is None else Anticipated(
            chunks=tuple(taken.chunks), place=taken.focus.place(), state=taken.state,
            age_s=time.monotonic() - taken.planned_at, new_tokens=settings.question_tokens,
            pointed=(lambda chunk: points_at(chunk.reasons)) if settings.pointed_only else None,
            computed=taken.computed(engine.predict_cached(taken.prefix_ids), engine.blocks.block_size))
        turn_plan = await asyncio.to_thread(
            prepare, planner, workspace, question, root=state.root, pins=list(state.record.pins), changes=changes,
            map_base=state.map_base, predict_cached=engine.predict_cached, anticipated=anticipated,
            max_file_bytes=self.config.workspace.max_file_bytes)
        state.pending_changes.clear()
        if request.plan_only:
            return TurnOutcome(text="", finish_reason="planned", explain=planner.preview(turn_plan),
                               files_in_prompt=turn_plan.files_in_prompt())
        max_new = request.max_new_tokens or self.config.engine.max_new_tokens
        if self._warmer is not None:
            await self._warmer.before_turn(state.session_id, turn_plan.stable_prefix(), turn_plan.token_ids, max_new)
        total, cached = len(turn_plan.token_ids), turn_plan.manifest.predicted_cached_tokens
        await _emit(on_event, TurnEvent(kind="state", state="prefill", text=prefill_detail(cached, total, cached)))
        markup = CallMarkupFilter() if planner.tools and not text_only else None
        answer_grammar = TEXT_ONLY_GRAMMAR if text_only else ""
        stable = turn_plan.manifest.segment("pins").token_end  # the stable prefix: a serving engine's routing hint
        steps: list[ToolStep] = []
        tool_edits: list[ProposedEdit] = []
        step_notes: list[str] = []
        try:
            try:
                final = await self._generate(engine, state, turn_plan.token_ids, cached, max_new, on_event, markup,
                                             stable_tokens=stable, grammar=answer_grammar, require_call=require_call)
            except _CrashedBeforeOutput as crashed:  # nothing reached the client: restart, resubmit once
                log.warning("engine ended before turn output (%s); restarting it and resubmitting",
                            crashed.error.message)
                engine = await self.engine()
                try:
                    final = await self._generate(engine, state, turn_plan.token_ids, cached, max_new, on_event,
                                                 markup, stable_tokens=stable, grammar=answer_grammar,
                                                 require_call=require_call)
                except _CrashedBeforeOutput as again:
                    raise again.error from None
            measured = final.metrics  # the turn's own prompt: what explain-context accounts for
            if markup is not None:
                final = await self._agent_steps(engine, state, workspace, turn_plan, final, max_new, on_event,
                                                steps, tool_edits, step_notes, commands, markup,
                                                scratch=self._scratch_commands(state, request, commands),
                                                read_only=asks_only_to_read(request.prompt))
        except _CrashedBeforeOutput as crashed:  # a later step: the turn had output already
            raise crashed.error from None
        except EngineCrashed:
            raise
        except EngineError as exc:  # failed inside the engine: it may be unusable now; start a fresh one
            self._restart_reason = f"a request failed in the engine: {exc.message}"
            raise
        if self._warmer is not None:
            self._warmer.after_turn()
        if not steps and not answer_grammar and self.config.planner.continue_edits:
            final = await self._continue_block(engine, state, turn_plan.token_ids, final, max_new, on_event,
                                               step_notes, "the answer", fences=asks_to_edit(request.prompt))
        edits = await asyncio.to_thread(_proposed_edits, final.text, workspace, turn_plan.files_in_prompt(),
                                        request.prompt)
        stepped = False  # the edits came from the edit step
        if tool_edits:  # the agent's proposed edits first, then any the final answer wrote
            edits = msgspec.structs.replace(edits, edits=(*tool_edits, *edits.edits))
        elif (self.config.planner.edit_step and not steps and final.finish_reason != "cancelled"
              and asks_to_edit(request.prompt) and not asks_only_to_read(request.prompt)):
            place = ((question.open_file, *question.selection_lines)
                     if question.open_file and question.selection_lines else None)
            # a rename question takes the rename step even after an answer's own edit that renamed nothing: a
            # definition line renamed reaches every use, where the answers' own edits rewrote bodies and missed
            # uses (humanize's three renames with the 1.5B, all failed)
            asked = asked_names(request.prompt)
            pairs = [pair for e in edits.edits if e.old_text is not None and e.new_text is not None  # renamed, to
                     for pair in renamed_definitions(e.old_text, e.new_text)]
            renamed = bool(pairs) and set(asked) <= {new for _, new in pairs}  # (to the names asked, if any)
            renames = (await asyncio.to_thread(_renamed_lines, workspace, request.prompt, place, final.text)
                       if rename_asked(request.prompt) is not None and not renamed else [])
            if not edits.edits or renames:
                final, edits = await self._edit_step(engine, state, workspace, turn_plan, request, final, max_new,
                                                     on_event, step_notes, renames, edits)
                stepped = bool(edits.edits)
        verification = None
        agent_steps = len(steps)
        if self.config.verify.enabled and asks_for_change(request.prompt, edits, request.terminal):
            # an agent turn verifies what it proposed, in the same scratch copy and under the same consent as
            # its commands; its sampled and repair candidates are drawn after its steps (they saw the results).
            # One asked for a change whose own edit did not apply verifies too: its candidates are the change
            # (the 1.5B's diff "changed nothing" and its answer then said no change was needed)
            verification, final, edits, repairs = await self._verify(engine, state, workspace, request, turn_plan,
                                                                     final, edits, max_new, on_event, commands,
                                                                     steps, stepped)
            steps = [*steps, *repairs]
        elif self.config.verify.enabled and edits.edits:
            step_notes.append("not verified: the question asks to see or to be told how the code works, not for a "
                              "change; the edit the answer wrote anyway is offered as written, unchecked")
        if edits.edits and final.finish_reason != "cancelled" and _BEYOND_LEAD not in final.text \
                and (beyond := _beyond_blocks(edits)):  # unchecked too, what the node added is said (a move, a rename)
            if places := await asyncio.to_thread(_rename_places, workspace, edits):
                beyond = f"{beyond} {places}"
            final = msgspec.structs.replace(final, text=f"{final.text.rstrip()}\n\n{beyond}")
            await _emit(on_event, TurnEvent(kind="chunk", text=f"\n\n{beyond}"))
        if self.config.planner.locations and final.finish_reason != "cancelled":
            located, entries = await asyncio.to_thread(locations, final.text, workspace.find_symbol, is_test_path)
            if located:  # where the names the answer gave without their files are defined, said as the node's
                final = msgspec.structs.replace(final, text=f"{final.text.rstrip()}\n\n{located}")
                await _emit(on_event, TurnEvent(kind="chunk", text=f"\n\n{located}"))
                step_notes.append(f"locations: the answer named {len(entries)} definition(s) without their files; "
                                  "where each is defined was added after it (planner.locations)")
        if self.config.planner.answer_calls and final.finish_reason != "cancelled":
            # (a verified turn too: "Trace lt() down to the comparison that decides it" over a failing run is
            # answered with the checked fix, and the trace it asked for follows the verdict)
            tree, roots = await asyncio.to_thread(workspace.call_tree, RetrievalQuery(text=request.prompt,
                                                                                      terminal=request.terminal),
                                                  self.config.planner.answer_calls)
            if section := calls_section(tree, roots):  # the path past where the model stopped, said as the node's
                final = msgspec.structs.replace(final, text=f"{final.text.rstrip()}\n\n{section}")
                await _emit(on_event, TurnEvent(kind="chunk", text=f"\n\n{section}"))
                step_notes.append(f"calls: the calls {', '.join(roots)} makes, read from the source "
                                  f"({tree.count(chr(10)) + 1} lines, at most planner.answer_calls = "
                                  f"{self.config.planner.answer_calls}), added after the answer")
        notes = [*step_notes, *(describe_verification(verification) if verification is not None else ()),
                 *edits.notes]
        end = await asyncio.to_thread(finish, planner, turn_plan, final.text, measured, workspace, steps=steps,
                                      finish_reason=final.finish_reason, notes=notes)
        explain = end.explain
        state.record_turn()
        profile = engine.profile
        self.store.save_prefix(state.key, SavedPrefix(model=profile.id, model_digest=profile.model_digest,
                                                      tokenizer_digest=profile.tokenizer_digest,
                                                      ids=end.resume_prefix))
        if end.rebased and self._warmer is not None:  # the next turn rebases the thread: have it cached by then
            self._spawn(self._warmer.warm(state.session_id, end.rebased, f"thread {request.thread} rebased"),
                        "node-rebase-warm")
        log.info("turn %s of %s (%s): %s tokens, %s cached, ttft %s ms, %s", explain.turn, state.root,
                 request.client_id, explain.totals.tokens, explain.totals.cached, explain.ttft_ms,
                 final.finish_reason)
        await _emit(on_event, TurnEvent(kind="state", state="idle"))
        self._spawn(asyncio.to_thread(workspace.prepare), "node-prepare")  # the next turn's index, off its path
        if focus is not None:  # the turn took (or stopped) the place's anticipation: again, after the new prefix
            self.anticipator.again(state)
        return TurnOutcome(text=final.text, finish_reason=final.finish_reason, explain=explain,
                           files_in_prompt=turn_plan.files_in_prompt(), output_tokens=len(final.token_ids),
                           edits=edits, tool_steps=agent_steps,
                           verification=verification)

    async def _edit_step(self, engine: EngineLike, state: WorkspaceState, workspace: Workspace, plan: TurnPlan,
                         request: TurnRequest, final: FinalEvent, max_new: int, on_event: EventCallback | None,
                         notes: list[str], renames: list[tuple[str, str, str]],
                         written: ProposedEdits) -> tuple[FinalEvent, ProposedEdits]:
        """The answer asked for a change and wrote no edit that applies (the 0.5B spends most of such answers on a
        table of the files, and the code it quotes may not resolve: ``written``'s problems, named in the note):
        one more step asks for the change it described as edit blocks alone, after the answer
        (Aider's architect/editor split; the answer is in the prefix cache, so only the request is prefilled),
        drawn under a grammar: renames alone for a rename question (:func:`_renamed_lines`), else blocks on the
        definitions named (:func:`_edit_step_files`). Its blocks are appended to the answer, streamed after it;
        the thread records the answer with them. A rename question (``renames``: :func:`_renamed_lines`) takes it
        even when its answer wrote an edit: the step's renames are the turn's change when they apply, else the
        answer's own edit stands."""
        planner = state.planner
        assert planner is not None
        request_text = rename_step_request() if renames else edit_step_request()
        ids = await asyncio.to_thread(planner.step_ids, plan, [ToolStep(call=final.text, result=request_text)])
        cached = engine.predict_cached(ids)
        opened = renames[0][0] if renames else ""
        asked = asked_names(request.prompt)
        bound = asked if len(asked) == len(renames) else []  # the new names the question gives, one per definition
        if opened:  # written in: prefilled with the request, never decoded
            ids = [*ids, *engine.tokenizer.encode(opened)]
            grammar = rename_grammar(renames[0][1], renames[0][2], renames[1:], bound)
        else:
            files = await asyncio.to_thread(_edit_step_files, workspace, final.text, plan.files_in_prompt(),
                                            request.prompt)
            grammar = edit_blocks_grammar(files) if files else ""
        await _emit(on_event, TurnEvent(kind="state", state="prefill", text=prefill_detail(cached, len(ids), cached)))
        await _emit(on_event, TurnEvent(kind="chunk", text="\n\n" + opened))
        step = await self._generate(engine, state, ids, cached, max_new, on_event, grammar=grammar)
        if self.config.planner.continue_edits:  # free: the grammar's replacement lines are free text too
            step = await self._continue_block(engine, state, ids, step, max_new, on_event, notes, "the edit step",
                                              fences=False)
        step = msgspec.structs.replace(step, text=opened + step.text)
        edits = await asyncio.to_thread(_proposed_edits, step.text, workspace, plan.files_in_prompt(),
                                        request.prompt)
        took = (f"{step.metrics.measured_recomputed_tokens} prompt tokens computed, {len(step.token_ids)} decoded "
                f"in {step.metrics.total_ms / 1000:.1f} s")
        if grammar and not opened and not edits.edits and _unchanged(step.text):
            step, edits, again = await self._redraw_step(engine, state, workspace, plan, request, ids, grammar,
                                                         max_new, on_event, step, edits)
            took = f"{took}; {again}"
        if opened:
            notes.append("the edit step renames: its block was opened at the line of each definition the question "
                         "asks to rename (" + "; ".join(f"{r[0].splitlines()[0]}: {r[0].splitlines()[2].strip()}"
                                                        for r in renames) + ")"
                         + (f", to the new names the question gives ({', '.join(bound)})" if bound else ""))
        if written.edits:
            wrote = (f"the answer to a rename question wrote its own edit ({', '.join(e.path for e in written.edits)}"
                     f"; {'set aside for the rename step' if edits.edits else 'kept: the rename step wrote none'})")
        elif written.problems:
            wrote = f"the answer asked for a change wrote no edit that applies ({'; '.join(written.problems)})"
        else:
            wrote = "the answer asked for a change wrote no edit block"
        if edits.edits:
            notes.append(f"{wrote}; asked for one after it, it wrote {len(edits.edits)} file edit(s) "
                         f"({', '.join(e.path for e in edits.edits)}; {took})")
        else:
            notes.append(f"{wrote}; asked for one after it, it wrote none that applies "
                         f"({'; '.join(edits.problems) or 'no edit block'}; {took})")
        text = f"{final.text.rstrip()}\n\n{step.text.strip()}"
        if not edits.edits and written.edits:  # the rename step wrote nothing that applies: the answer's own stands
            edits = written
        elif not edits.edits and written.problems:  # neither applies: both say why
            edits = msgspec.structs.replace(edits, problems=(*written.problems, *edits.problems))
        return msgspec.structs.replace(final, text=text, token_ids=[*final.token_ids, *step.token_ids],
                                       finish_reason=step.finish_reason), edits

    async def _redraw_step(self, engine: EngineLike, state: WorkspaceState, workspace: Workspace, plan: TurnPlan,
                           request: TurnRequest, ids: list[int], grammar: str, max_new: int,
                           on_event: EventCallback | None, step: FinalEvent,
                           edits: ProposedEdits) -> tuple[FinalEvent, ProposedEdits, str]:
        """The edit step's blocks replaced their lines with the same lines (the 1.5B copied h11's export list
        unchanged, humanize's ``_DEFAULT_LOCALE`` too): ``verify.candidates - 1`` answers are drawn again from the
        same prompt (cached), sampled under the same grammar, as one group, and the first whose blocks change a
        line and apply is the step's; streamed after the first. The step, its edits, and what was done in words."""
        count = max(1, self.config.verify.candidates - 1)
        specs = [(False, grammar, 7001 + i) for i in range(count)]
        drafts = await self._draw_specs(engine, state, ids, 0, specs, max_new)
        for n, (_, draft) in enumerate(drafts, start=1):
            if _unchanged(draft.text):
                continue
            again = await asyncio.to_thread(_proposed_edits, draft.text, workspace, plan.files_in_prompt(),
                                            request.prompt)
            if again.edits:
                await _emit(on_event, TurnEvent(kind="chunk", text="\n\n" + draft.text))
                step = msgspec.structs.replace(step, text=draft.text, token_ids=engine.tokenizer.encode(draft.text),
                                               finish_reason="stop")
                return step, again, (f"its blocks changed nothing: drawn again, sampled under the same grammar, "
                                     f"draw {n} of {len(drafts)} changes a line and is the step's")
        return step, edits, (f"its blocks changed nothing: drawn again {len(drafts)} time(s), sampled under the "
                             "same grammar, and none changed a line that applies")

    async def _continue_block(self, engine: EngineLike, state: WorkspaceState, ids: list[int], final: FinalEvent,
                              max_new: int, on_event: EventCallback | None, notes: list[str],
                              what: str, fences: bool) -> FinalEvent:
        """An answer that ran out of tokens inside an edit block (the 1.5B searches a function's first line and
        writes the whole function again as its replacement: 60 lines are more than 512 tokens) goes on from where
        it stopped, once, for up to ``max_new`` more tokens (Aider's "infinite output": the answer so far is the
        prefix, in the cache, so only its last chunk is computed); the block may then close and apply. With
        ``fences`` (a turn asked to make a change), an answer cut inside a code block goes on too: the 1.5B
        rewrites whole functions in fences, and one cut short does not parse. Named in explain-context."""
        if final.finish_reason != "length" or not _open_edit_block(final.text, fences):
            return final
        ids = [*ids, *final.token_ids]
        more = await self._generate(engine, state, ids, engine.predict_cached(ids), max_new, on_event)
        inside = "an edit block" if _open_edit_block(final.text) else "a code block"
        closed = "still open" if _open_edit_block(final.text + more.text, fences) else "the block closed"
        notes.append(f"{what} ran out of its {max_new} tokens inside {inside}: continued for "
                     f"{len(more.token_ids)} more ({closed}; {more.metrics.measured_recomputed_tokens} prompt tokens "
                     "computed)")
        return msgspec.structs.replace(final, text=final.text + more.text, token_ids=[*final.token_ids,
                                                                                      *more.token_ids],
                                       finish_reason=more.finish_reason)

    async def _verify(self, engine: EngineLike, state: WorkspaceState, workspace: Workspace, request: TurnRequest,
                      plan: TurnPlan, final: FinalEvent, edits: ProposedEdits, max_new: int,
                      on_event: EventCallback | None, commands: CommandHost | None,
                      agent_steps: Sequence[ToolStep] = (), stepped: bool = False,
                      ) -> tuple[Verification, FinalEvent, ProposedEdits, list[ToolStep]]:
        """Check the turn's change (see :mod:`contenox.node.verifying`); the report, the answer to offer, its
        edits and the repair steps it came after (recorded with the turn, after ``agent_steps``: an agent
        turn's tool steps, which its candidates are drawn after; ``stepped``: its edits came from the edit step)."""

        planner = state.planner
        assert planner is not None
        paths = list(dict.fromkeys([*(e.path for e in edits.edits), *plan.files_in_prompt()]))

        async def emit(event: TurnEvent) -> None:
            await _emit(on_event, event)

        async def generate(ids: list[int], round_: int, count: int, greedy: bool,
                           grammars: list[str]) -> list[Draft]:
            return await self._draw(engine, state, ids, round_, count, greedy, grammars, max_new)

        def locate(name: str) -> list[tuple[str, int, int]]:
            return [(found.path, found.line, found.end_line) for found in workspace.find_symbol(name)]

        async def focused(system: str, user: str, count: int, grammar: str, begun: str) -> list[Draft]:
            ids = await asyncio.to_thread(planner.chat_ids, system, user)
            if begun:  # the answer's beginning, written in: prefilled with the prompt, never decoded
                ids = [*ids, *engine.tokenizer.encode(begun)]
            specs = [(i == 0, grammar, 9000 + i + 1) for i in range(count)]
            return [draft for _, draft in await self._draw_specs(engine, state, ids, 0, specs, max_new)]

        async def infill(path: str, text: str, line: int, column: int, count: int, one_line: bool) -> list[Draft]:
            support = self.completer.support(engine)
            if not support.available or support.tokens is None:
                return []

            def prompt() -> list[int]:
                window = cursor_window(text, line, column, lambda part: len(engine.tokenizer.encode(part)),
                                       prefix_tokens=_INFILL_PREFIX_TOKENS, suffix_tokens=_INFILL_SUFFIX_TOKENS)
                assert support.tokens is not None
                return build_fim_prompt(support.tokens, engine.tokenizer, window, path, [], state.root.name,
                                        lambda entry: "", named=True).token_ids

            ids = await asyncio.to_thread(prompt)
            specs = [(i == 0, "", 9500 + i + 1) for i in range(count)]
            # a line's own fill ends at its line break (the group decodes until its longest fill ends)
            breaks = await asyncio.to_thread(engine.tokenizer.newline_ids) if one_line else ()
            return [draft for _, draft in await self._draw_specs(engine, state, ids, 0, specs, _INFILL_TOKENS,
                                                                 stops=(*support.tokens.stops, *breaks))]

        def propose(text: str) -> ProposedEdits:
            return _proposed_edits(text, workspace, plan.files_in_prompt(), request.prompt)

        def read(path: str) -> str | None:
            try:
                return workspace.read_text(path)
            except ContenoxError:
                return None

        before = list(agent_steps)
        job = VerifyJob(config=self.config.verify, request=request, root=state.root,
                        scratch_folder=self._scratch_folder(state), consents=self._consents(), asker=commands,
                        emit=emit, propose=propose, read=read, locate=locate, generate=generate,
                        step_ids=lambda steps: planner.step_ids(plan, [*before, *steps]),
                        overlays=state.overlay_texts(), paths=paths, draw_focused=focused, infill=infill,
                        complete=lambda written: complete_imports(written, read, locate, request.prompt))
        command = await asyncio.to_thread(job.command)
        if command is None:
            return skipped_verification(job.no_command()), final, edits, []
        if why := await job.consented(command):
            return msgspec.structs.replace(skipped_verification(why), command=command.command,
                                           command_source=command.source), final, edits, []
        greedy = Draft(text=final.text, round=0, sampled=False, constrained=stepped,
                       arm="edit-step" if stepped else "turn",
                       decode_s=max(0.0, final.metrics.total_ms - final.metrics.ttft_ms) / 1000.0,
                       tokens=len(final.token_ids), recomputed_tokens=final.metrics.measured_recomputed_tokens)
        prompt_ids = plan.token_ids if not before else await asyncio.to_thread(planner.step_ids, plan, before)
        try:
            report, chosen, steps = await job.run(greedy, edits, prompt_ids, command)
        except ContenoxError as exc:
            log.warning("verification of turn in %s failed: %s", state.root, exc.message)
            return verification_error(exc), final, edits, []
        if report.withheld:  # nothing checked did better than the code as it is: no change offered, the prose kept
            report = msgspec.structs.replace(report, prefill_tokens=final.metrics.measured_recomputed_tokens)
            prose = strip_edit_blocks(final.text).rstrip()
            why = f"No change offered: {report.withheld} (`{report.command}`)."
            text = f"{prose}\n\n{why}" if prose else why
            await emit(TurnEvent(kind="chunk", text=f"\n\n{why}"))
            return report, msgspec.structs.replace(final, text=text), ProposedEdits(), []
        report = msgspec.structs.replace(report, prefill_tokens=final.metrics.measured_recomputed_tokens,
                                         changed=await asyncio.to_thread(_changed_definitions, workspace, chosen.edits))
        if chosen.draft is greedy:
            text = final.text
        elif chosen.draft.arm == "mutation":  # no model wrote it: said so, and what it changed
            text = (f"The change is in {report.changed_in()}" if report.changed else "The change") + \
                (f", found by Contenox, not written by the model: line {chosen.draft.line}, {chosen.draft.change} "
                 "(one-token changes of the lines the failing run ran, each checked):\n\n") + chosen.draft.text.strip()
        elif chosen.draft.arm in ("focused", "line", "infill", "insert"):  # the turn's prose was about another change
            text = (f"The change is in {report.changed_in()}:\n\n" if report.changed else "") + \
                chosen.draft.text.strip()
        else:
            prose = strip_edit_blocks(final.text) if not steps else ""
            text = f"{prose}\n\n{chosen.draft.text.strip()}" if prose else chosen.draft.text
        if chosen.result.on and (first := stacked_said(report, chosen.result)):  # a change in two steps: both shown
            text = f"{first}\n\n{text}"
        if beyond := _beyond_blocks(chosen.edits):  # what the node added to the model's blocks is said, not hidden
            if places := await asyncio.to_thread(_rename_places, workspace, chosen.edits):
                beyond = f"{beyond} {places}"
            text = f"{text.rstrip()}\n\n{beyond}"
            await emit(TurnEvent(kind="chunk", text=f"\n\n{beyond}"))
        if held := held_out(chosen.edits):  # the failing test's edit the answer shows is not in the change offered
            text = f"{text.rstrip()}\n\n{held}"
            await emit(TurnEvent(kind="chunk", text=f"\n\n{held}"))
        if verdict := report.verdict():  # the answer says what its checked change is and what it made pass
            text = f"{text.rstrip()}\n\n{verdict}"
            await emit(TurnEvent(kind="chunk", text=f"\n\n{verdict}"))
        return report, msgspec.structs.replace(final, text=text), chosen.edits, steps

    def _scratch_folder(self, state: WorkspaceState) -> Path:
        """The workspace's one scratch copy: verification's candidates and an agent turn's commands after an
        edit are checked there (one at a time: a workspace runs one turn at a time)."""
        return state.folder / "scratch"

    def _consents(self) -> ConsentStore:
        from contenox.verify import ConsentStore as Store

        return Store(self.config.state_dir / "verify-consent.json")

    def _scratch_commands(self, state: WorkspaceState, request: TurnRequest,
                          commands: CommandHost | None) -> ScratchCommands:
        return ScratchCommands(root=state.root, scratch_folder=self._scratch_folder(state), request=request,
                               consents=self._consents(), asker=commands, overlays=state.overlay_texts(),
                               config=self.config.verify)

    async def _draw(self, engine: EngineLike, state: WorkspaceState, ids: list[int], round_: int, count: int,
                    greedy: bool, grammars: list[str], max_new: int) -> list[Draft]:
        """``count`` answers to ``ids`` as one group (decoded side by side, the prompt prefilled once): a greedy
        one first when asked, the rest sampled (under ``grammars`` in turn when given). A grammar-drawn answer
        whose blocks replace lines with the same lines is drawn once more with another seed (the models copy
        their SEARCH lines unchanged half the time)."""
        specs = [(greedy and i == 0,
                  "" if (greedy and i == 0) or not grammars else grammars[(i - int(greedy)) % len(grammars)],
                  1000 * round_ + i + 1) for i in range(count)]
        drafts = await self._draw_specs(engine, state, ids, round_, specs, max_new)
        again = [(plain, grammar, seed + 500) for (plain, grammar, seed), draft in drafts
                 if grammar and _unchanged(draft.text)]
        if not again:
            return [draft for _, draft in drafts]
        redrawn = iter(await self._draw_specs(engine, state, ids, round_, again, max_new))
        kept: list[Draft] = []
        for (_, grammar, _), draft in drafts:
            kept.append(next(redrawn)[1] if grammar and _unchanged(draft.text) else draft)
        return kept

    async def _draw_specs(self, engine: EngineLike, state: WorkspaceState, ids: list[int], round_: int,
                          specs: list[tuple[bool, str, int]], max_new: int, *,
                          stops: Sequence[int] = ()) -> list[tuple[tuple[bool, str, int], Draft]]:
        """Each (greedy, grammar, seed) drawn as one group; the drafts with the spec that drew them (``stops``:
        stop tokens besides the model's end)."""
        cfg = self.config.verify
        handles = []
        for spec in specs:
            plain, grammar, seed = spec
            try:
                handles.append((spec, backend.submit_candidate(
                    engine, state.session_id, list(ids), max_new,
                    sampling=None if plain else (cfg.temperature, cfg.top_p, seed),
                    grammar=grammar, group=f"verify-{state.session_id}-{round_}", stops=stops)))
            except ContenoxError as exc:
                log.warning("verification candidate not drawn: %s", exc.message)
        drafts: list[tuple[tuple[bool, str, int], Draft]] = []
        try:
            for spec, handle in handles:
                try:
                    done = await handle.result()
                except EngineCrashed:
                    raise
                except ContenoxError as exc:
                    log.warning("verification candidate failed in the engine: %s", exc.message)
                    continue
                metrics = done.metrics
                drafts.append((spec, Draft(text=done.text, round=round_, sampled=not spec[0],
                                           constrained=bool(spec[1]),
                                           decode_s=max(0.0, metrics.total_ms - metrics.ttft_ms) / 1000.0,
                                           tokens=len(done.token_ids),
                                           recomputed_tokens=metrics.measured_recomputed_tokens,
                                           token_ids=tuple(done.token_ids), cut=done.finish_reason == "length")))
        except asyncio.CancelledError:
            for _, handle in handles:
                handle.cancel()
            raise
        return drafts

    async def _agent_steps(self, engine: EngineLike, state: WorkspaceState, workspace: Workspace, plan: TurnPlan,
                           final: FinalEvent, max_new: int, on_event: EventCallback | None, steps: list[ToolStep],
                           edits: list[ProposedEdit], notes: list[str],
                           commands: CommandHost | None = None,
                           markup: CallMarkupFilter | None = None,
                           scratch: ScratchCommands | None = None, read_only: bool = False) -> FinalEvent:
        """Run the answer's tool calls and answer again with their results, step by step, until an answer
        with no call or a limit (steps, wall time); the final answer. ``steps``, ``edits`` and ``notes``
        are filled in as it goes. ``read_only``: the question only asks to see or explain (no edit is proposed)."""
        from contenox.answer.toolcalls import parse_tool_calls

        planner = state.planner
        assert planner is not None
        limits = self.config.tools
        schemas = tool_schemas()
        started = time.monotonic()
        ttfts: list[float] = []

        async def emit(event: TurnEvent) -> None:
            await _emit(on_event, event)

        current = markup or CallMarkupFilter()
        ids = plan.token_ids  # what ``final`` was drawn from
        redrawn = False
        redrawn_files: set[str] = set()
        """Files whose edit was drawn again this turn: once per file (a redrawn call cut at the token limit, step
        after step, cost the 1.5B five redraws of 45 s in one turn)."""
        seen: dict[str, tuple[int, int]] = {}
        """(first, last) line of each file the turn's ``read_file`` calls showed (where a redrawn edit may look)."""
        made: set[str] = set()
        """The calls made since the turn's last proposed edit (name and arguments): one made again is not run
        twice."""
        while True:
            parsed = parse_tool_calls(final.text, schemas)
            shaped = call_shaped(final.text) if steps and not current.shown else None
            if not parsed.calls and not parsed.errors and shaped is not None:
                # after tool results the 1.5B often writes a call of a tool that does not exist (rename_function)
                # fenced as json or python: not an answer; it is asked once more, in text (nothing shown yet)
                notes.append(f"the model's answer after {len(steps)} tool step(s) was a call the node does not "
                             f"run ({shaped!r}, not a declared tool or not in a call's place); it was asked to "
                             "answer in text")
                ids = await asyncio.to_thread(planner.step_ids, plan, steps)
                final = await self._generate(engine, state, ids, engine.predict_cached(ids), max_new, on_event,
                                             grammar=ANSWER_GRAMMAR)
                break
            if read_only and steps and any(c.name == "propose_edit" for c in parsed.calls):
                # a question that only asks to see or explain: an edit after the results (the 1.5B doing what a
                # to-do file it was asked to show says) is not the answer; it is asked for in text instead
                notes.append(f"the model proposed an edit after {len(steps)} tool step(s) where the question asks "
                             "for none; it was not run, and the model was asked to answer in text")
                ids = await asyncio.to_thread(planner.step_ids, plan, steps)
                final = await self._generate(engine, state, ids, engine.predict_cached(ids), max_new, on_event,
                                             grammar=ANSWER_GRAMMAR)
                break
            if not parsed.calls and not parsed.errors:  # the answer: what the filter held back is text after all
                if rest := current.rest(final.text):
                    await _emit(on_event, TurnEvent(kind="chunk", text=rest))
                break
            checked: dict[int, ToolResult] = {}
            again = None if redrawn or not limits.redraw_edits else await self._redraw_edit(
                engine, state, workspace, ids, final, parsed, edits, seen, max_new, notes, redrawn_files, checked)
            if again is not None:
                final, redrawn = again, True
                continue
            redrawn = False
            calls = [msgspec.json.encode([c.name, c.arguments], order="sorted").decode() for c in parsed.calls]
            stop = ""
            if len(steps) >= limits.max_steps or time.monotonic() - started > limits.max_seconds:
                stop = (f"agent turn stopped after {len(steps)} tool step(s) (limit: tools.max_steps = "
                        f"{limits.max_steps}, tools.max_seconds = {limits.max_seconds:g}); its last calls were not "
                        "run")
            elif calls and all(c in made for c in calls):
                stop = (f"agent turn stopped after {len(steps)} tool step(s): the model made the same call again "
                        f"({', '.join(_called(final.text))}); it was not run twice")
            if stop:  # the answer, in text, from the results so far: no call (nor code block) may open it
                notes.append(stop + "; the model was asked to answer in text")
                ids = await asyncio.to_thread(planner.step_ids, plan, steps)
                final = await self._generate(engine, state, ids, engine.predict_cached(ids), max_new, on_event,
                                             grammar=ANSWER_GRAMMAR if steps else TEXT_ONLY_GRAMMAR)
                break
            made.update(calls)
            proposed = list(edits)
            steps.append(await run_step(parsed, final.text, workspace, state.root, step=len(steps) + 1,
                                        frame_result=planner.tool_result, max_chars=limits.max_result_chars,
                                        emit=emit, edits=edits, commands=commands, scratch=scratch,
                                        checked=checked))
            if edits != proposed:  # a new or newer edit changes what a command shows: the same command may run again
                made = set(calls)
            for call in parsed.calls:
                if call.name == "read_file" and (rel := _relpath(workspace, call.arguments.get("path"))):
                    seen.pop(rel, None)  # the most recently read last
                    start, end = call.arguments.get("start_line"), call.arguments.get("end_line")
                    seen[rel] = (start if isinstance(start, int) else 1, end if isinstance(end, int) else 10**6)
            ids = await asyncio.to_thread(planner.step_ids, plan, steps)
            cached = engine.predict_cached(ids)
            await _emit(on_event, TurnEvent(kind="state", state="prefill", text=prefill_detail(cached, len(ids),
                                                                                               cached)))
            current = CallMarkupFilter(after_tools=True)
            final = await self._generate(engine, state, ids, cached, max_new, on_event, current)
            ttfts.append(final.metrics.ttft_ms)
        if steps:
            names = ", ".join(dict.fromkeys(n for s in steps for n in _called(s.call)))
            notes.append(f"agent turn: {len(steps)} tool step(s) ({names}); time to first token per step: "
                         + ", ".join(f"{t:.0f} ms" for t in ttfts))
        return final

    async def _redraw_edit(self, engine: EngineLike, state: WorkspaceState, workspace: Workspace, ids: list[int],
                           final: FinalEvent, parsed: ParsedAnswer, edits: list[ProposedEdit],
                           seen: dict[str, tuple[int, int]], max_new: int, notes: list[str],
                           redrawn_files: set[str], checked: dict[int, ToolResult]) -> FinalEvent | None:
        """The answer's ``propose_edit`` call drawn again when its diff of an existing file does not apply, changes
        nothing or does not parse (cut at the token limit): the answer up to the call's opening is kept, and the
        rest of the call is generated (greedy, after it) held to the file's own lines (a window of a long file:
        :func:`~contenox.node.agent.edit_window`) and to a change (:mod:`contenox.verify.grammar`). None: no such
        call, its file's edit was drawn again already this turn, or the redraw failed (the call's tried result
        is then left in ``checked``, by its index, for the step to use). Not at once: a grammar of a file's lines
        compiles per file (0.35 s for 200 lines here, more as files grow), and every step that might edit would
        pay it; the redraw pays it only for an edit that failed. The 1.5B's first diffs failed with context from
        memory, line numbers copied from a read, a hunk of context alone, and blank context lines to the token
        limit."""
        index, call = next(((i, c) for i, c in enumerate(parsed.calls) if c.name == "propose_edit"), (0, None))
        pending = {edit.path: edit for edit in edits}
        if call is not None:
            tried = await asyncio.to_thread(run_tool, call, workspace, max_chars=self.config.tools.max_result_chars,
                                            pending=pending)
            checked[index] = tried
            if not tried.unapplied:
                return None
            rel = _relpath(workspace, call.arguments.get("path"))
            diff, why = str(call.arguments.get("diff", "")), tried.text.removeprefix("error: ")
        elif any(error.startswith("propose_edit:") for error in parsed.errors):
            diff = final.text.replace("\\n", "\n")  # the cut call's diff, roughly: what it meant to change
            named = _PATH_ARGUMENT.search(diff) or _DIFF_HEADER.search(diff)
            rel = _relpath(workspace, named.group(1)) if named else next(reversed(seen), None)
            why = next(e for e in parsed.errors if e.startswith("propose_edit:")).removeprefix("propose_edit: ")
        else:
            return None
        if rel is None or rel in redrawn_files:
            return None
        try:
            text = await asyncio.to_thread(workspace.read_text, rel)
        except ContenoxError:
            return None
        files = [(rel, edit_window(text, diff, seen.get(rel)))]
        earlier = pending.get(rel)
        if earlier is not None and earlier.new_text not in (None, text):
            files.append((rel, edit_window(earlier.new_text or "", diff, seen.get(rel))))
        rest = edit_call_rest(final.text, tuple(files))
        if rest is None:
            return None
        head, grammar = rest
        redrawn_files.add(rel)
        started = time.monotonic()
        try:
            prompt = list(ids) + await asyncio.to_thread(engine.tokenizer.encode, head)
            handle = backend.submit(engine, state.session_id, prompt, max_new, grammar=grammar, report_prefill=False)
            try:
                again = await handle.result()
            except asyncio.CancelledError:
                handle.cancel()
                raise
        except EngineCrashed:
            raise
        except ContenoxError as exc:
            log.warning("edit not drawn again: %s", exc.message)
            return None
        lines = sum(len(window.splitlines()) for _, window in files)
        notes.append(f"the model's edit of {rel}: {why}; its call was drawn again with the diff's context and "
                     f"removed lines held to the file's own lines ({lines} line(s)) and to a change, in "
                     f"{time.monotonic() - started:.1f} s")
        return msgspec.structs.replace(again, text=head + again.text)

    async def _needs_tool(self, engine: EngineLike, planner: Planner, question: str) -> Verdict:
        """The tool check (:mod:`contenox.planner.toolcheck`): a request the node refuses to carry out takes no
        tools; otherwise the model's two answers, from two short requests decoded side by side whose instructions
        and examples stay in the engine's prefix cache; a check that failed keeps the tools."""
        from contenox.runtime_ov import FinalEvent

        verdict = toolcheck.refused(question)
        if verdict is not None:
            return verdict

        async def answer(session: str, ids: list[int], grammar: str) -> str:
            handle = backend.submit(engine, session, ids, toolcheck.MAX_NEW_TOKENS, grammar=grammar,
                                    report_prefill=False)
            async for event in handle:
                if isinstance(event, FinalEvent):
                    return event.text
            return ""

        tokenizer, prompts = engine.tokenizer, planner.prompts
        check, kind = await asyncio.to_thread(lambda: (toolcheck.check_ids(tokenizer, prompts, question),
                                                       toolcheck.kind_ids(tokenizer, prompts, question)))
        try:
            yes_no, what = await asyncio.gather(answer("tool-check", check, toolcheck.GRAMMAR),
                                                answer("tool-kind", kind, toolcheck.KIND_GRAMMAR))
        except EngineError as exc:
            log.warning("tool check failed (%s): the turn keeps its tools", exc.message)
            return Verdict(tools=True)
        return toolcheck.decide(yes_no, what)

    async def _generate(self, engine: EngineLike, state: WorkspaceState, token_ids: list[int], cached: int,
                        max_new: int, on_event: EventCallback | None,
                        markup: CallMarkupFilter | None = None, stable_tokens: int = 0,
                        grammar: str = "", require_call: bool = False) -> FinalEvent:
        """One answer; with ``markup`` (tools on), tool-call markup is kept out of the streamed text; ``grammar``:
        the answer under it (a text-only turn's); ``require_call``: the answer must be a tool call."""
        from contenox.runtime_ov import FinalEvent, PrefillEvent

        try:
            handle = backend.submit(engine, state.session_id, list(token_ids), max_new, tools=markup is not None,
                                    require_call=require_call and markup is not None, stable_tokens=stable_tokens,
                                    grammar=grammar)
        except EngineCrashed as exc:
            raise _CrashedBeforeOutput(exc) from None
        guard = RepetitionGuard()
        decoding = False
        try:
            async for event in handle:
                if isinstance(event, FinalEvent):
                    break
                if isinstance(event, PrefillEvent):
                    await _emit(on_event, TurnEvent(kind="progress", state="prefill", done=event.computed,
                                                    total=event.total,
                                                    text=prefill_detail(event.computed, event.total, cached)))
                    continue
                if not decoding:
                    decoding = True
                    await _emit(on_event, TurnEvent(kind="state", state="decode"))
                if event.text:
                    shown = markup.feed(event.text) if markup is not None else event.text
                    if shown:
                        await _emit(on_event, TurnEvent(kind="chunk", text=shown))
                    if guard.feed(event.text):  # a loop: stop the engine, keep the text before it
                        handle.cancel()
                        break
            final = await handle.result()
            if markup is not None and (rest := markup.flush()):
                await _emit(on_event, TurnEvent(kind="chunk", text=rest))
        except asyncio.CancelledError:
            handle.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(handle.result()), _CANCEL_CONFIRM_S)
            except (TimeoutError, ContenoxError):
                log.warning("engine did not confirm the cancel of %s in time", state.session_id)
            raise Cancelled("turn cancelled", workspace=str(state.root)) from None
        except EngineCrashed as exc:
            if decoding or handle.run_index is not None:  # it died running this turn: no blind retry
                raise
            raise _CrashedBeforeOutput(exc) from None
        if guard.unit:
            return msgspec.structs.replace(final, text=guard.kept(), finish_reason="repetition")
        if final.finish_reason == "cancelled":
            raise Cancelled("turn cancelled", workspace=str(state.root))
        return final

    def _spawn(self, coro: Any, name: str) -> None:
        self._background.spawn(coro, name)

    # -- queries ---------------------------------------------------------------------------
    async def explain(self, root: str) -> Explain | None:
        """The explain of the workspace's last turn (persisted across restarts), or None."""
        state = self.workspace(root)
        return await asyncio.to_thread(state.last_explain)

    async def history(self, root: str, thread: str) -> list[Exchange]:
        """The recorded turns of ``thread``, oldest first, from the planner's journal."""
        state = self.workspace(root)
        records = [r for r in await asyncio.to_thread(state.journal.load) if r.thread == thread]
        waiting = [u for u in await asyncio.to_thread(state.asked.open, thread) if u.why]  # not the running ones
        exchanges: list[Exchange] = []
        for record in records:
            while waiting and waiting[0].asked_at < record.recorded_at:  # asked before this answer was recorded
                exchanges.append(_unanswered(waiting.pop(0)))
            exchanges.append(Exchange(turn=record.turn, user=record.prompt or record.user, answer=record.answer,
                                      explain=record.explain, finish_reason=record.finish_reason))
        return exchanges + [_unanswered(u) for u in waiting]

    async def ask(self, root: str, thread: str, prompt: str) -> str:
        """Record a question in the workspace's open-questions log before its turn is sent (ACP reads the
        client's buffers first, and a Stop may come meanwhile); its id. The turn that carries it
        (``TurnRequest.asked``) ends it; one that never reaches a turn is ended with :meth:`end_question`."""
        state = self.workspace(root)
        return await asyncio.to_thread(state.asked.ask, thread, prompt)

    async def end_question(self, root: str, asked: str, why: str) -> None:
        """A recorded question that got no answer, and why (shown where it was asked by ``history``); ending
        one its turn already ended changes nothing but the reason."""
        if not why.strip():
            raise InvalidRequest("a question ended without an answer needs a reason")
        state = self.workspace(root)
        await asyncio.to_thread(state.asked.end, asked, why)

    async def threads(self, root: str) -> list[ThreadInfo]:
        """The workspace's threads from the planner's journal, most recently used first."""
        state = self.workspace(root)
        records = await asyncio.to_thread(state.journal.load)
        found: dict[str, list[Any]] = {}
        for record in records:
            found.setdefault(record.thread, []).append(record)
        infos = []
        for thread, turns in found.items():
            first = " ".join((turns[0].prompt or turns[0].user).split())
            infos.append(ThreadInfo(thread=thread, turns=len(turns), title=first[:77] + ("..." if len(first) > 77
                                                                                       else ""),
                                    last_used=turns[-1].recorded_at))
        return sorted(infos, key=lambda t: t.last_used, reverse=True)

    async def pin(self, root: str, path: str) -> tuple[str, ...]:
        state = self.workspace(root)
        return await asyncio.to_thread(state.pin, path, self.config.workspace.max_file_bytes)

    async def unpin(self, root: str, path: str) -> tuple[str, ...]:
        return self.workspace(root).unpin(path)

    async def pins(self, root: str) -> tuple[str, tuple[str, ...]]:
        """The workspace root and its permanent pins (root-relative), in the order they were pinned."""
        state = self.workspace(root)
        return str(state.root), state.record.pins

    async def workspace_overlay(self, root: str, path: str, text: str | None, owner: str = "editor") -> None:
        """``owner``'s unsaved buffer of a file (``text``) or its removal (None: closed or saved); the latest
        buffer wins over the file on disk, and another owner's buffer of the same file outlives this one's."""
        state = self.workspace(root)
        rel = state.relative(path)
        reads = state.set_overlay(rel, owner, text)
        if state.workspace is not None:
            state.workspace.set_overlay(rel, reads)
        focus = self.anticipator.focus_of(state)
        if text is None and focus is not None and focus.path == rel:  # saved: the diff changed at the user's place
            self.anticipator.signal(state, msgspec.structs.replace(focus, saved=True, at=time.monotonic()))

    async def release_overlays(self, owner: str) -> None:
        """An editor connection ended: its buffers no longer count (it cannot say so itself after a crash)."""
        for state in list(self._workspaces.values()):
            for rel in [rel for rel, owners in state.overlays.items() if owner in owners]:
                reads = state.set_overlay(rel, owner, None)
                if state.workspace is not None:
                    state.workspace.set_overlay(rel, reads)

    # -- anticipated context ---------------------------------------------------------------
    async def focus(self, root: str, path: str, line: int, *, visible: tuple[int, int] | None = None,
                    thread: str = "", draft: str = "", terminal: str = "", saved: bool = False,
                    client_id: str = "") -> bool:
        """Where the user is (an editor's active file and 1-based cursor line, the chat thread a question would go
        to, the question being typed, the last failing command's output with its ``$ command`` line first): the
        code there is anticipated once the place settles and the engine is idle, the failing run after it, which
        then goes with a question that brings no terminal output of its own. Returns whether an anticipation was
        scheduled (False: off, or the same place as before)."""
        if line < 1:
            raise InvalidRequest(f"line must be >= 1, got {line}", line=line)
        state = self.workspace(root)
        rel = state.relative(path)
        if not (state.root / rel).is_file():
            raise InvalidRequest(f"not a file in the workspace: {path}", path=path)
        now = time.monotonic()
        return self.anticipator.signal(state, Focus(path=rel, line=line, visible=visible, thread=thread,
                                                    draft=draft[:2000], terminal=reported_run(terminal),
                                                    terminal_at=now, client_id=client_id, saved=saved, at=now))

    def watch_anticipation(self, listener: Callable[[str, AnticipationStatus], None]) -> Callable[[], None]:
        """Call ``listener(client_id, status)`` when an anticipation changes state; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _anticipation_status(self, client_id: str, status: AnticipationStatus) -> None:
        for listener in list(self._listeners):
            try:
                listener(client_id, status)
            except Exception:  # a client that went away: never the anticipation's problem
                log.exception("anticipation listener failed")

    async def _anticipation_plan(self, state: WorkspaceState, focus: Focus, previous: Anticipation | None
                                 ) -> tuple[TurnPlan, list[Chunk], int] | None:
        """The turn a question at ``focus`` would get, without the question (the draft stands for it, if any):
        planned the way ``_run_turn`` plans, so its prefix is the question's, byte for byte. When it replaces
        ``previous`` (the cursor moved, the user began typing) on the same prefix, the code ``previous`` computed
        that this one also wants leads it (:func:`carried_over`), so it stays cached instead of being recomputed
        in a new order; returns the plan, its chunks and how many lead it so."""
        engine = self._engine
        if engine is None:
            return None
        async with state.lock:  # no turn plans or refreshes the index meanwhile
            workspace, changes = await self._index(state, None)
            planner = self._planner(state, engine)
            last = planner.last_manifest()
            thread = focus.thread or (last.thread if last is not None else "main")
            config = msgspec.structs.replace(self.config.planner, retrieval_tokens=anticipated_tokens(
                self.config.anticipate, self.config.planner, focus.draft))

            def plan() -> tuple[TurnPlan, list[Chunk], int]:
                # a draft with a failing run pasted after it is split as its turn's question will be
                draft, terminal = pasted_run(focus.draft) or (focus.draft, focus.terminal)
                question = Question(prompt=draft, thread=thread, terminal=terminal, open_file=focus.path,
                                    selection_lines=(focus.line, focus.line))

                def prepared(anticipated: Anticipated | None = None) -> TurnPlan:
                    return prepare(planner, workspace, question, root=state.root, pins=list(state.record.pins),
                                   changes=changes, map_base=state.map_base, predict_cached=engine.predict_cached,
                                   anticipated=anticipated, config=config)

                planned = prepared()
                start = planned.manifest.segment("retrieved").token_start
                if previous is None or previous.thread != thread or planned.token_ids[:start] != \
                        previous.prefix_ids[: previous.code_start()]:
                    return planned, list(planned.retrieved), 0
                computed = previous.chunks[: previous.computed(engine.predict_cached(previous.prefix_ids),
                                                               engine.blocks.block_size)]
                lead = carried_over(planned.retrieved, computed, lambda c: planner.tokens.count(chunk_part(c)))
                if not lead or [c.id for c in lead] == [c.id for c in planned.retrieved[: len(lead)]]:
                    return planned, list(planned.retrieved), 0
                carried = prepared(Anticipated(chunks=tuple(lead), place=previous.focus.place(), state="warm",
                                               age_s=time.monotonic() - previous.planned_at))
                return carried, list(carried.retrieved), len(lead)

            return await asyncio.to_thread(plan)

    async def complete(self, request: CompletionRequest) -> CompletionOutcome:
        """An inline completion at the cursor (the engine's most urgent request class)."""
        self.anticipator.last_completion = time.monotonic()  # the user is typing: anticipation waits
        return await self.completer.complete(self.workspace(request.root), request)

    async def completion_info(self) -> CompletionInfo:
        """Whether the loaded model can complete inline, and if not why (loads the engine)."""
        return await self.completer.info()

    async def _open_index(self, state: WorkspaceState) -> Workspace:
        """The workspace's index as it is (opened on first use; a completion does not wait for a refresh)."""
        if state.workspace is not None:
            return state.workspace
        workspace, _ = await self._index(state, None)
        return workspace

    async def related(self, root: str, text: str) -> list[RelatedHit]:
        """Definitions of the names in ``text`` and the places that use them ("Find related code")."""
        workspace, _ = await self._index(self.workspace(root), None)
        return await asyncio.to_thread(workspace.related, text)

    async def symbol_info(self, root: str, name: str) -> SymbolInfo | None:
        """Definitions, referencing files and rank in the repo graph of ``name``; None if unknown."""
        workspace, _ = await self._index(self.workspace(root), None)
        return await asyncio.to_thread(workspace.symbol_info, name)

    async def resolve_edit(self, root: str, text: str, question: str = "") -> ProposedEdits:
        """One code block of an answer (with the line before it, which may name its file) resolved as a turn's
        answer is: its edit blocks, the definitions it replaces, renames carried to every use; nothing written."""
        workspace, _ = await self._index(self.workspace(root), None)
        return await asyncio.to_thread(_proposed_edits, text, workspace, (), question)

    async def status(self) -> dict[str, Any]:
        known = {str(s.root): s.summary() for s in self._workspaces.values()}
        for record in self.store.load_all():
            known.setdefault(record.root, {"root": record.root, "key": record.key, "session_id": record.session_id,
                                           "turns": Journal(workspace_dir(self.config, record.key)).count(),
                                           "pins": list(record.pins),
                                           "last_used": record.last_used, "indexed": False, "busy": None})
        workspaces = sorted(known.values(), key=lambda w: w["last_used"], reverse=True)
        cache: Any = None
        if self._engine is not None:
            try:
                cache = msgspec.to_builtins(self._engine.stats())
            except Exception as exc:  # status must answer even when the engine is unwell
                cache = {"error": str(exc)}
        return {
            "pid": os.getpid(),
            "build": build_id(),
            "uptime_s": round(time.time() - self.started, 1),
            "clients": self.clients,
            "model": {"name": self.config.model.default, "state": self._engine_state, "error": self._engine_error},
            "engine": {"process": self.config.engine.process, "pid": self._engine.pid if self._engine is not None else None,
                       "alive": bool(self._engine is not None and self._engine.alive),
                       "restarts": self._engine_restarts, "last_crash": self._last_crash},
            "workspaces": workspaces,
            "sessions": [{"session_id": w["session_id"], "root": w["root"], "turns": w["turns"]}
                         for w in workspaces if w["turns"]],
            "cache": cache,
            "queue": self.queue.snapshot(),
            "rewarm": {**self._warm, "warm_ups": self._warmer.warmed if self._warmer else 0},
            "anticipate": self.anticipator.status(),
        }

    # -- lifecycle -------------------------------------------------------------------------
    def recover_state(self) -> None:
        """Repair what a node killed mid-write left (run once this node holds the lock): temp files of
        interrupted atomic writes, in the folders written that way (not the large tag caches beside them); and
        move an earlier layout's workspace records into each workspace's one folder."""
        migrate_legacy(self.config.state_dir / "node" / "workspaces", workspaces_dir(self.config))
        sweep_temp_files(self.config.state_dir / "acp")
        for folder in workspaces_dir(self.config).glob("*/"):  # the records' folder, not index/ beneath it
            sweep_temp_files(folder, recursive=False)
        for scratch in workspaces_dir(self.config).glob("*/scratch"):  # a check a killed node left
            log.info("removing the scratch copy %s left by an earlier node", scratch)
            shutil.rmtree(scratch, ignore_errors=True)

    def start_rewarm(self) -> None:
        """Re-warm the stable prefixes of persisted sessions in the background (after a restart)."""
        records = [r for r in self.store.load_all() if Journal(workspace_dir(self.config, r.key)).count()]
        records = records[:_REWARM_LIMIT]
        if not records:
            return
        self._warm = {"done": 0, "total": len(records)}
        self._rewarming = {r.session_id: asyncio.Event() for r in records}
        self._spawn(self._rewarm(records), "node-rewarm")

    async def _rewarm(self, records: list[WorkspaceRecord]) -> None:
        try:
            await self.engine()
            assert self._warmer is not None
            for record in records:
                profile = self._engine.profile if self._engine is not None else None
                ids = self.store.load_prefix(record.key, profile.id, profile.model_digest,
                                             profile.tokenizer_digest) if profile is not None else []
                if ids and await self._warmer.warm(record.session_id, ids, "resuming a persisted session"):
                    self._warmer.policy.keep(record.session_id, ids)
                self._warm["done"] += 1
                self._rewarming.pop(record.session_id).set()
        except ContenoxError as exc:
            log.warning("re-warm skipped: %s", exc.message)
        finally:
            for event in self._rewarming.values():
                event.set()
            self._rewarming.clear()

    async def close(self) -> None:
        """Cancel background work and stop the engine. State is persisted as it changes."""
        if self._closed:
            return
        self._closed = True
        await self._background.close()
        await self.anticipator.close()
        if self._warmer is not None:
            await self._warmer.close()
        if self._engine is not None:
            engine, self._engine = self._engine, None
            await asyncio.to_thread(engine.close)
        self._engine_state = "unloaded"
