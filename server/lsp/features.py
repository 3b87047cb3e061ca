"""The LSP surface of docs/internal-api.md; each handler reads the request, calls the node, builds the reply."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from lsprotocol import types
from pygls.workspace import TextDocument

from contenox.errors import ContenoxError, InvalidRequest, PathOutsideWorkspace
from contenox.node.contract import AnticipationStatus, CompletionRequest, TurnRequest

from .blocks import RESOLVE_BLOCK, resolve_block
from .documents import document, file_path, opened, param_str, parse_range, root_for, selection, uri_of
from .render import hover_markdown
from .server import ContenoxLanguageServer, to_jsonrpc
from .turns import run_turn

__all__ = ["COMMANDS", "register"]

T = TypeVar("T")
EXPLAIN_SELECTION = "contenox.explainSelection"
FIND_RELATED = "contenox.findRelated"
ASK_SELECTION = "contenox.askSelection"
PIN = "contenox.pin"
UNPIN = "contenox.unpin"
COMMANDS = (EXPLAIN_SELECTION, FIND_RELATED, ASK_SELECTION, PIN, UNPIN)
PANEL_THREAD = "panel"
"""The chat panel's thread (the CLI's is "cli", each ACP session its own)."""
_SELECTION_ACTIONS = (("Explain selection", EXPLAIN_SELECTION), ("Find related code", FIND_RELATED),
                      ("Ask Contenox about selection", ASK_SELECTION))


def translated(handler: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """ContenoxError -> a JSON-RPC error with the error's stable code and message."""

    @functools.wraps(handler)
    async def wrapper(*args: Any) -> T:
        try:
            return await handler(*args)
        except ContenoxError as exc:
            raise to_jsonrpc(exc) from exc

    return wrapper


def _selection_arg(args: tuple[Any, ...]) -> dict[str, Any]:
    if len(args) != 1 or not isinstance(args[0], dict):
        raise InvalidRequest("expected one argument {uri, range, chatId?}")
    return args[0]


def _uri_arg(args: tuple[Any, ...]) -> str:
    if len(args) != 1 or not isinstance(args[0], str):
        raise InvalidRequest("expected one argument: the document URI")
    return args[0]


FOCUS = "contenox/focus"
ANTICIPATION = "$/contenox/anticipation"
log = logging.getLogger(__name__)


def _anticipation(ls: ContenoxLanguageServer, client_id: str, status: AnticipationStatus) -> None:
    """An anticipation this connection's focus started changed state: tell the editor (its status bar)."""
    if client_id == ls.client_id and not ls.closed.is_set():
        ls.protocol.notify(ANTICIPATION, {"uri": uri_of(str(Path(status.root) / status.path)),
                                          "state": status.state, "tokens": status.tokens, "text": status.text})


async def focus(ls: ContenoxLanguageServer, params: Any) -> None:
    """Where the user is (a notification: a bad one is logged, never answered)."""
    try:
        uri = param_str(params, "uri")
        assert uri is not None
        line = params.get("line")
        if not isinstance(line, int) or isinstance(line, bool) or line < 0:
            raise InvalidRequest("parameter 'line' must be a 0-based line number", param="line")
        visible = None
        if params.get("range") is not None:
            start, _, end, _ = parse_range(params["range"])
            visible = (start + 1, end + 1)
        draft = param_str(params, "draft", required=False) or ""
        terminal = param_str(params, "terminal", required=False) or ""
        thread = param_str(params, "thread", required=False) or PANEL_THREAD
        if not uri.startswith("file:"):
            return
        await ls.node.focus(root_for(ls, uri), file_path(uri), line + 1, visible=visible, thread=thread,
                            draft=draft, terminal=terminal, client_id=ls.client_id)
    except ContenoxError as exc:
        log.info("%s: %s ignored: %s", ls.client_id, FOCUS, exc.message)


async def _doc_of(ls: ContenoxLanguageServer, uri: str) -> TextDocument:
    """The document's text (the editor's buffer, else the disk's), only inside the workspace folders."""
    root_for(ls, uri)
    return await document(ls, uri, ls.node.config.workspace.max_file_bytes)


@translated
async def hover(ls: ContenoxLanguageServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    try:
        root = root_for(ls, uri)
    except PathOutsideWorkspace:
        return None  # a file outside the workspace folders: nothing to say, nothing indexed
    word = (await _doc_of(ls, uri)).word_at_position(params.position) or None
    explain = await ls.node.explain(root)
    info = await ls.node.symbol_info(root, word) if word else None
    text = hover_markdown(explain, info, word)
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


async def code_action(ls: ContenoxLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    rng = params.range
    if rng.start == rng.end:
        return None
    arg = {"uri": params.text_document.uri,
           "range": {"start": {"line": rng.start.line, "character": rng.start.character},
                     "end": {"line": rng.end.line, "character": rng.end.character}}}
    return [types.CodeAction(title=title, kind=types.CodeActionKind.Empty,
                             command=types.Command(title=title, command=name, arguments=[arg]))
            for title, name in _SELECTION_ACTIONS]


async def _selection_turn(ls: ContenoxLanguageServer, args: tuple[Any, ...], title: str, instruction: str) -> dict[str, Any]:
    arg = _selection_arg(args)
    uri = param_str(arg, "uri")
    assert uri is not None
    span = parse_range(arg.get("range"))
    text = selection(await _doc_of(ls, uri), span)
    where = f"{file_path(uri)} lines {span[0] + 1}-{span[2] + 1}"
    chat_id = param_str(arg, "chatId", required=False)
    request = TurnRequest(root=root_for(ls, uri), prompt=f"{instruction} ({where})",
                          client_id=ls.client_id, selection=f"{where}:\n{text}",
                          thread=param_str(arg, "thread", required=False) or PANEL_THREAD,
                          open_file=file_path(uri), selection_lines=(span[0] + 1, span[2] + 1))
    return await run_turn(ls, request, title=title, chat_id=chat_id)


@translated
async def explain_selection(ls: ContenoxLanguageServer, *args: Any) -> dict[str, Any]:
    return await _selection_turn(ls, args, "Contenox: explain", "Explain the selected code.")


@translated
async def ask_selection(ls: ContenoxLanguageServer, *args: Any) -> dict[str, Any]:
    arg = _selection_arg(args)
    question = param_str(arg, "prompt", required=False) or "What does the selected code do, and is it correct?"
    return await _selection_turn(ls, args, "Contenox: ask", question)


@translated
async def find_related(ls: ContenoxLanguageServer, *args: Any) -> dict[str, Any]:
    arg = _selection_arg(args)
    uri = param_str(arg, "uri")
    assert uri is not None
    text = selection(await _doc_of(ls, uri), parse_range(arg.get("range")))
    return {"related": msgspec.to_builtins(await ls.node.related(root_for(ls, uri), text))}


@translated
async def pin(ls: ContenoxLanguageServer, *args: Any) -> dict[str, Any]:
    """Pin a document (``uri``), or lines of it (``{uri, range}``: a selection's whole lines)."""
    if len(args) == 1 and isinstance(args[0], dict):
        uri = param_str(args[0], "uri")
        assert uri is not None
        start, _, end, end_char = parse_range(args[0].get("range"))
        last = end if end_char > 0 or end == start else end - 1  # a selection ending at a line start
        spec = f"{file_path(uri)}:{start + 1}-{last + 1}"
        await ls.node.pin(root_for(ls, uri), spec)
        return {"pinned": spec}
    uri = _uri_arg(args)
    await ls.node.pin(root_for(ls, uri), file_path(uri))
    return {"pinned": file_path(uri)}


@translated
async def unpin(ls: ContenoxLanguageServer, *args: Any) -> dict[str, Any]:
    uri = _uri_arg(args)
    await ls.node.unpin(root_for(ls, uri), file_path(uri))
    return {"unpinned": file_path(uri)}


@translated
async def chat(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    chat_id = param_str(params, "chatId")
    prompt = param_str(params, "prompt")
    assert prompt is not None
    uri = param_str(params, "uri", required=False)
    sel = None
    lines = None
    if uri and isinstance(params, dict) and params.get("range") is not None:
        span = parse_range(params["range"])
        sel = f"{file_path(uri)} lines {span[0] + 1}-{span[2] + 1}:\n{selection(await _doc_of(ls, uri), span)}"
        lines = (span[0] + 1, span[2] + 1)
    limit = params.get("maxNewTokens") if isinstance(params, dict) else None
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise InvalidRequest("parameter 'maxNewTokens' must be a positive integer", param="maxNewTokens")
    thread = param_str(params, "thread", required=False) or PANEL_THREAD
    request = TurnRequest(root=root_for(ls, uri), prompt=prompt, client_id=ls.client_id, selection=sel,
                          max_new_tokens=limit, thread=thread,
                          open_file=file_path(uri) if uri and uri.startswith("file:") else None,
                          selection_lines=lines)
    return await run_turn(ls, request, title="Contenox: chat", chat_id=chat_id)


@translated
async def explain_context(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any] | None:
    uri = param_str(params, "uri", required=False) if params is not None else None
    explain = await ls.node.explain(root_for(ls, uri))
    return None if explain is None else explain.to_json()


@translated
async def resolve_code_block(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    """A chat code block's Apply: the per-file changes the node's edit machinery makes of it."""
    return await resolve_block(ls, params)


@translated
async def history(ls: ContenoxLanguageServer, params: Any) -> list[dict[str, Any]]:
    """A thread's recorded turns (the chat panel shows them again after a reload)."""
    uri = param_str(params, "uri", required=False) if params is not None else None
    thread = (param_str(params, "thread", required=False) if params is not None else None) or PANEL_THREAD
    exchanges = await ls.node.history(root_for(ls, uri), thread)
    return [{"turn": e.turn, "user": e.user, "answer": e.answer,
             "explain": e.explain.to_json() if e.explain is not None else None,
             **({"finishReason": e.finish_reason} if e.finish_reason else {}),
             **({"unanswered": e.unanswered} if e.unanswered else {})} for e in exchanges]


@translated
async def pins(ls: ContenoxLanguageServer, params: Any) -> list[dict[str, Any]]:
    """The permanent pins of each workspace folder of this window: the pins view in the editor."""
    uri = param_str(params, "uri", required=False) if params is not None else None
    folders = [f.uri for f in ls.workspace.folders.values()]
    roots = [root_for(ls, u) for u in ([uri] if uri else folders or [None])]
    out: dict[str, dict[str, Any]] = {}
    for root in roots:
        resolved, pinned = await ls.node.pins(root)
        out[resolved] = {"root": resolved, "pins": [{"path": rel, "uri": Path(resolved, rel).as_uri()}
                                                    for rel in pinned]}
    return list(out.values())


@translated
async def models(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    """The model the node serves and the installed ones (the model picker)."""
    choice = await ls.node.models()
    return {"current": choice.current, "installed": list(choice.installed)}


@translated
async def use_model(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    """Switch the node to an installed model (refused while turns run)."""
    choice = await ls.node.use_model(param_str(params, "name") or "")
    return {"current": choice.current, "installed": list(choice.installed)}


@translated
async def threads(ls: ContenoxLanguageServer, params: Any) -> list[dict[str, Any]]:
    """The workspace's threads, most recently used first (the chat panel's thread picker)."""
    uri = param_str(params, "uri", required=False) if params is not None else None
    found = await ls.node.threads(root_for(ls, uri))
    return [{"thread": t.thread, "turns": t.turns, "title": t.title, "lastUsed": t.last_used} for t in found]


@translated
async def inline_completion(ls: ContenoxLanguageServer, params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
    """Ghost text at the cursor; an editor's newer request for the same file supersedes this one."""
    uri = params.text_document.uri
    try:
        root = root_for(ls, uri)
    except PathOutsideWorkspace:
        return None
    doc = await _doc_of(ls, uri)
    position = doc.position_from_client_units(params.position)
    outcome = await ls.node.complete(CompletionRequest(
        root=root, path=file_path(uri), text=doc.source, line=position.line, character=position.character,
        client_id=ls.client_id))
    if not outcome.text:
        return types.InlineCompletionList(items=[])
    at = types.Range(start=params.position, end=params.position)
    return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=outcome.text, range=at)])


@translated
async def completion_info(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    """Whether inline completions are available with the loaded model, and if not why."""
    info = await ls.node.completion_info()
    return {"available": info.available, "reason": info.reason, "model": info.model}


async def _overlay(ls: ContenoxLanguageServer, uri: str, text: str | None) -> None:
    if not uri.startswith("file:"):
        return
    try:
        root = root_for(ls, uri)
    except PathOutsideWorkspace:
        return  # an editor buffer outside the workspace folders is not the node's business
    await ls.node.workspace_overlay(root, file_path(uri), text, owner=ls.client_id)


async def did_open(ls: ContenoxLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    await _overlay(ls, params.text_document.uri, params.text_document.text)


async def did_change(ls: ContenoxLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    buffer = opened(ls, uri)
    if buffer is not None:  # a change to a document never opened: nothing to lay over the disk
        await _overlay(ls, uri, buffer.source)


async def did_save(ls: ContenoxLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    await _overlay(ls, params.text_document.uri, None)  # the file on disk is the truth again


async def did_close(ls: ContenoxLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    await _overlay(ls, params.text_document.uri, None)



FEATURES: tuple[tuple[str, Any, Callable[..., Awaitable[Any]]], ...] = (
    (FOCUS, None, focus),
    (types.TEXT_DOCUMENT_HOVER, None, hover),
    (types.TEXT_DOCUMENT_CODE_ACTION, None, code_action),
    ("contenox/chat", None, chat),
    ("contenox/explainContext", None, explain_context),
    (RESOLVE_BLOCK, None, resolve_code_block),
    ("contenox/history", None, history),
    ("contenox/pins", None, pins),
    ("contenox/models", None, models),
    ("contenox/useModel", None, use_model),
    ("contenox/threads", None, threads),
    (types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions(), inline_completion),
    ("contenox/completionInfo", None, completion_info),
    (types.TEXT_DOCUMENT_DID_OPEN, None, did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, None, did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, None, did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, None, did_close),
)
"""LSP methods and this server's own (``contenox/...``): (method, its registration options, handler of (ls, params))."""

COMMAND_HANDLERS: tuple[tuple[str, Callable[..., Awaitable[Any]]], ...] = (
    (EXPLAIN_SELECTION, explain_selection),
    (ASK_SELECTION, ask_selection),
    (FIND_RELATED, find_related),
    (PIN, pin),
    (UNPIN, unpin),
)
"""``workspace/executeCommand`` commands: (command, handler of (ls, *arguments))."""


def register(ls: ContenoxLanguageServer) -> None:
    """Every handler registered on ``ls`` (one connection's server), bound to it; the node's anticipation
    changes followed for this connection's status bar."""
    ls.unwatch = ls.node.watch_anticipation(functools.partial(_anticipation, ls))
    for method, options, handler in FEATURES:
        ls.feature(method, options)(functools.partial(handler, ls))
    for command, handler in COMMAND_HANDLERS:
        ls.command(command)(functools.partial(handler, ls))
