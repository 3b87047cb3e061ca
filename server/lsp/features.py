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


def register(ls: ContenoxLanguageServer) -> None:
    node = ls.node

    def anticipation(client_id: str, status: AnticipationStatus) -> None:
        """An anticipation this connection's focus started changed state: tell the editor (its status bar)."""
        if client_id == ls.client_id and not ls.closed.is_set():
            ls.protocol.notify(ANTICIPATION, {"uri": uri_of(str(Path(status.root) / status.path)),
                                              "state": status.state, "tokens": status.tokens, "text": status.text})

    ls.unwatch = node.watch_anticipation(anticipation)

    @ls.feature(FOCUS)
    async def focus(params: Any) -> None:
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
            await node.focus(root_for(ls, uri), file_path(uri), line + 1, visible=visible, thread=thread,
                             draft=draft, terminal=terminal, client_id=ls.client_id)
        except ContenoxError as exc:
            log.info("%s: %s ignored: %s", ls.client_id, FOCUS, exc.message)

    async def doc_of(uri: str) -> TextDocument:
        """The document's text (the editor's buffer, else the disk's), only inside the workspace folders."""
        root_for(ls, uri)
        return await document(ls, uri, node.config.workspace.max_file_bytes)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    @translated
    async def hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        try:
            root = root_for(ls, uri)
        except PathOutsideWorkspace:
            return None  # a file outside the workspace folders: nothing to say, nothing indexed
        word = (await doc_of(uri)).word_at_position(params.position) or None
        explain = await node.explain(root)
        info = await node.symbol_info(root, word) if word else None
        text = hover_markdown(explain, info, word)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @ls.feature(types.TEXT_DOCUMENT_CODE_ACTION)
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        rng = params.range
        if rng.start == rng.end:
            return None
        arg = {"uri": params.text_document.uri,
               "range": {"start": {"line": rng.start.line, "character": rng.start.character},
                         "end": {"line": rng.end.line, "character": rng.end.character}}}
        return [types.CodeAction(title=title, kind=types.CodeActionKind.Empty,
                                 command=types.Command(title=title, command=name, arguments=[arg]))
                for title, name in _SELECTION_ACTIONS]

    async def selection_turn(args: tuple[Any, ...], title: str, instruction: str) -> dict[str, Any]:
        arg = _selection_arg(args)
        uri = param_str(arg, "uri")
        assert uri is not None
        span = parse_range(arg.get("range"))
        text = selection(await doc_of(uri), span)
        where = f"{file_path(uri)} lines {span[0] + 1}-{span[2] + 1}"
        chat_id = param_str(arg, "chatId", required=False)
        request = TurnRequest(root=root_for(ls, uri), prompt=f"{instruction} ({where})",
                              client_id=ls.client_id, selection=f"{where}:\n{text}",
                              thread=param_str(arg, "thread", required=False) or PANEL_THREAD,
                              open_file=file_path(uri), selection_lines=(span[0] + 1, span[2] + 1))
        return await run_turn(ls, request, title=title, chat_id=chat_id)

    @ls.command(EXPLAIN_SELECTION)
    @translated
    async def explain_selection(*args: Any) -> dict[str, Any]:
        return await selection_turn(args, "Contenox: explain", "Explain the selected code.")

    @ls.command(ASK_SELECTION)
    @translated
    async def ask_selection(*args: Any) -> dict[str, Any]:
        arg = _selection_arg(args)
        question = param_str(arg, "prompt", required=False) or "What does the selected code do, and is it correct?"
        return await selection_turn(args, "Contenox: ask", question)

    @ls.command(FIND_RELATED)
    @translated
    async def find_related(*args: Any) -> dict[str, Any]:
        arg = _selection_arg(args)
        uri = param_str(arg, "uri")
        assert uri is not None
        text = selection(await doc_of(uri), parse_range(arg.get("range")))
        return {"related": msgspec.to_builtins(await node.related(root_for(ls, uri), text))}

    @ls.command(PIN)
    @translated
    async def pin(*args: Any) -> dict[str, Any]:
        """Pin a document (``uri``), or lines of it (``{uri, range}``: a selection's whole lines)."""
        if len(args) == 1 and isinstance(args[0], dict):
            uri = param_str(args[0], "uri")
            assert uri is not None
            start, _, end, end_char = parse_range(args[0].get("range"))
            last = end if end_char > 0 or end == start else end - 1  # a selection ending at a line start
            spec = f"{file_path(uri)}:{start + 1}-{last + 1}"
            await node.pin(root_for(ls, uri), spec)
            return {"pinned": spec}
        uri = _uri_arg(args)
        await node.pin(root_for(ls, uri), file_path(uri))
        return {"pinned": file_path(uri)}

    @ls.command(UNPIN)
    @translated
    async def unpin(*args: Any) -> dict[str, Any]:
        uri = _uri_arg(args)
        await node.unpin(root_for(ls, uri), file_path(uri))
        return {"unpinned": file_path(uri)}

    @ls.feature("contenox/chat")
    @translated
    async def chat(params: Any) -> dict[str, Any]:
        chat_id = param_str(params, "chatId")
        prompt = param_str(params, "prompt")
        assert prompt is not None
        uri = param_str(params, "uri", required=False)
        sel = None
        lines = None
        if uri and isinstance(params, dict) and params.get("range") is not None:
            span = parse_range(params["range"])
            sel = f"{file_path(uri)} lines {span[0] + 1}-{span[2] + 1}:\n{selection(await doc_of(uri), span)}"
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

    @ls.feature("contenox/explainContext")
    @translated
    async def explain_context(params: Any) -> dict[str, Any] | None:
        uri = param_str(params, "uri", required=False) if params is not None else None
        explain = await node.explain(root_for(ls, uri))
        return None if explain is None else explain.to_json()

    @ls.feature(RESOLVE_BLOCK)
    @translated
    async def resolve_code_block(params: Any) -> dict[str, Any]:
        """A chat code block's Apply: the per-file changes the node's edit machinery makes of it."""
        return await resolve_block(ls, params)

    @ls.feature("contenox/history")
    @translated
    async def history(params: Any) -> list[dict[str, Any]]:
        """A thread's recorded turns (the chat panel shows them again after a reload)."""
        uri = param_str(params, "uri", required=False) if params is not None else None
        thread = (param_str(params, "thread", required=False) if params is not None else None) or PANEL_THREAD
        exchanges = await node.history(root_for(ls, uri), thread)
        return [{"turn": e.turn, "user": e.user, "answer": e.answer,
                 "explain": e.explain.to_json() if e.explain is not None else None,
                 **({"finishReason": e.finish_reason} if e.finish_reason else {})} for e in exchanges]

    @ls.feature("contenox/pins")
    @translated
    async def pins(params: Any) -> list[dict[str, Any]]:
        """The permanent pins of each workspace folder of this window: the pins view in the editor."""
        uri = param_str(params, "uri", required=False) if params is not None else None
        folders = [f.uri for f in ls.workspace.folders.values()]
        roots = [root_for(ls, u) for u in ([uri] if uri else folders or [None])]
        out: dict[str, dict[str, Any]] = {}
        for root in roots:
            resolved, pinned = await node.pins(root)
            out[resolved] = {"root": resolved, "pins": [{"path": rel, "uri": Path(resolved, rel).as_uri()}
                                                        for rel in pinned]}
        return list(out.values())

    @ls.feature("contenox/models")
    @translated
    async def models(params: Any) -> dict[str, Any]:
        """The model the node serves and the installed ones (the model picker)."""
        choice = await node.models()
        return {"current": choice.current, "installed": list(choice.installed)}

    @ls.feature("contenox/useModel")
    @translated
    async def use_model(params: Any) -> dict[str, Any]:
        """Switch the node to an installed model (refused while turns run)."""
        choice = await node.use_model(param_str(params, "name") or "")
        return {"current": choice.current, "installed": list(choice.installed)}

    @ls.feature("contenox/threads")
    @translated
    async def threads(params: Any) -> list[dict[str, Any]]:
        """The workspace's threads, most recently used first (the chat panel's thread picker)."""
        uri = param_str(params, "uri", required=False) if params is not None else None
        found = await node.threads(root_for(ls, uri))
        return [{"thread": t.thread, "turns": t.turns, "title": t.title, "lastUsed": t.last_used} for t in found]

    @ls.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    @translated
    async def inline_completion(params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
        """Ghost text at the cursor; an editor's newer request for the same file supersedes this one."""
        uri = params.text_document.uri
        try:
            root = root_for(ls, uri)
        except PathOutsideWorkspace:
            return None
        doc = await doc_of(uri)
        position = doc.position_from_client_units(params.position)
        outcome = await node.complete(CompletionRequest(
            root=root, path=file_path(uri), text=doc.source, line=position.line, character=position.character,
            client_id=ls.client_id))
        if not outcome.text:
            return types.InlineCompletionList(items=[])
        at = types.Range(start=params.position, end=params.position)
        return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=outcome.text, range=at)])

    @ls.feature("contenox/completionInfo")
    @translated
    async def completion_info(params: Any) -> dict[str, Any]:
        """Whether inline completions are available with the loaded model, and if not why."""
        info = await node.completion_info()
        return {"available": info.available, "reason": info.reason, "model": info.model}

    async def overlay(uri: str, text: str | None) -> None:
        if not uri.startswith("file:"):
            return
        try:
            root = root_for(ls, uri)
        except PathOutsideWorkspace:
            return  # an editor buffer outside the workspace folders is not the node's business
        await node.workspace_overlay(root, file_path(uri), text, owner=ls.client_id)

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        await overlay(params.text_document.uri, params.text_document.text)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        buffer = opened(ls, uri)
        if buffer is not None:  # a change to a document never opened: nothing to lay over the disk
            await overlay(uri, buffer.source)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        await overlay(params.text_document.uri, None)  # the file on disk is the truth again

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(params: types.DidCloseTextDocumentParams) -> None:
        await overlay(params.text_document.uri, None)
