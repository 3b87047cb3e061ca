"""A node of its own for an eval or a benchmark run: its own home (sharing the user's model store) and socket
directory, so nothing it caches or records mixes with the user's node; started on the first request."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

import msgspec

from contenox.client.node_client import call
from contenox.config import Config, load_config, render_config

__all__ = ["PrivateNode"]


class PrivateNode:
    """``config`` (derived from the user's ``base`` by the caller) as a node in ``base.root / name``."""

    def __init__(self, base: Config, name: str, config: Config) -> None:
        home = base.root / name
        home.mkdir(parents=True, exist_ok=True)
        models = home / "models"
        if not models.exists():
            base.models_dir.mkdir(parents=True, exist_ok=True)
            models.symlink_to(base.models_dir.resolve(), target_is_directory=True)
        self._sockets = tempfile.mkdtemp(prefix="cx-node-")
        config = msgspec.structs.replace(
            config, node=msgspec.structs.replace(config.node, socket_dir=self._sockets, idle_exit_s=300.0))
        (home / "config.toml").write_text(render_config(config), encoding="utf-8")
        self.config = load_config(home)
        self.first_chunk_ms: float | None = None
        """The last ``ask``'s time to its first streamed chunk, as the client saw it."""

    def ask(self, params: dict[str, Any], on_notification: Callable[[str, Any], None] | None = None,
            on_request: Callable[[str, Any], Any] | None = None) -> Any:
        self.first_chunk_ms = None
        started = time.perf_counter()

        def heard(method: str, value: Any) -> None:
            if method == "chunk" and self.first_chunk_ms is None:
                self.first_chunk_ms = round((time.perf_counter() - started) * 1000.0, 1)
            if on_notification is not None:
                on_notification(method, value)

        _, result = call(self.config, "ask", params, on_notification=heard, on_request=on_request)
        return result

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Any other request of the node's rpc (``focus``, ``status``, ``complete``)."""
        _, result = call(self.config, method, params)
        return result

    def close(self) -> None:
        with contextlib.suppress(Exception):
            call(self.config, "stop", start=False)
        shutil.rmtree(self._sockets, ignore_errors=True)
