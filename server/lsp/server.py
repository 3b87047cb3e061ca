"""One pygls LanguageServer per editor connection, safe to run many in one process."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Generator
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol, lsp_method
from pygls.protocol import default_converter as _pygls_converter

from contenox.errors import ContenoxError
from contenox.node.contract import NodePort

__all__ = ["ContenoxLanguageServer", "ContenoxProtocol", "to_jsonrpc"]

log = logging.getLogger(__name__)
_client_ids = itertools.count(1)


def to_jsonrpc(exc: ContenoxError) -> JsonRpcException:
    """A ContenoxError as the JSON-RPC error the client sees (stable code, message, structured data)."""
    return JsonRpcException(message=exc.message, code=exc.code, data=exc.to_dict())


def _keep_params_as_dicts(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**obj)


def _converter() -> cattrs.Converter:
    """pygls' converter, except custom requests get their params as plain dicts, not namedtuples."""
    converter: cattrs.Converter = _pygls_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(JsonRPCRequestMessage, _keep_params_as_dicts)
    converter.register_structure_hook(JsonRPCNotification, _keep_params_as_dicts)
    return converter


class ContenoxProtocol(LanguageServerProtocol):
    """pygls' protocol without the process-wide side effects of a stdio server.

    ``exit`` closes this connection only (the built-in calls ``sys.exit``), and ``$/cancelRequest`` also
    cancels a turn started from ``workspace/executeCommand`` (pygls only cancels the outer future there).
    """

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        server = self._server
        if isinstance(server, ContenoxLanguageServer):
            server.close_connection()

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        super()._handle_cancel_notification(msg_id)
        server = self._server
        if isinstance(server, ContenoxLanguageServer):
            task = server.turn_tasks.get(msg_id)
            if task is not None:
                task.cancel()


class ContenoxLanguageServer(LanguageServer):
    """Per-connection state: the shared node, this client's id, its running turns."""

    def __init__(self, node: NodePort) -> None:
        super().__init__(
            "contenox", "0.1.0", protocol_cls=ContenoxProtocol, converter_factory=_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.node = node
        self.client_id = f"lsp-{next(_client_ids)}"
        self.turn_tasks: dict[Any, asyncio.Task[Any]] = {}
        self.closed = asyncio.Event()
        self.unwatch: Callable[[], None] = lambda: None
        """Stops this connection's anticipation notifications (set by ``register``)."""

    def close_connection(self) -> None:
        """Stop reading; in-flight turns of this connection are cancelled by the connection loop."""
        self.closed.set()

    def cancel_all(self) -> None:
        for future in list(self.protocol._request_futures.values()):
            future.cancel()
        for task in list(self.turn_tasks.values()):
            task.cancel()

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default shows a window/showMessage for every handler error; the JSON-RPC error suffices.
        log.warning("%s: %s", self.client_id, error)
