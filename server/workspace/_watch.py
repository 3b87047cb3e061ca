"""Keep a workspace fresh: watch the disk (watchfiles) and editor overlays, refresh once per burst."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable

import watchfiles

from contenox.workspace._model import ChangeEvent
from contenox.workspace._workspace import Workspace

__all__ = ["watch"]

log = logging.getLogger(__name__)

OnEvents = Callable[[list[ChangeEvent]], Awaitable[None] | None]


class _GitAwareFilter(watchfiles.DefaultFilter):
    """watchfiles' default filter, but keeping the git files that mean HEAD or the index moved."""

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        parts = path.replace("\\", "/").split("/")
        if ".git" in parts:
            tail = parts[parts.index(".git") + 1:]
            return tail in (["index"], ["HEAD"]) or (bool(tail) and tail[0] == "refs")
        return super().__call__(change, path)


async def watch(ws: Workspace, on_events: OnEvents, stop_event: asyncio.Event | None = None) -> None:
    """Refresh ``ws`` after each debounced burst of disk or overlay changes and hand non-empty event
    lists to ``on_events``; returns when ``stop_event`` is set (or the task is cancelled)."""
    stop = stop_event or asyncio.Event()
    loop = asyncio.get_running_loop()
    poke = asyncio.Event()

    def on_overlay() -> None:
        loop.call_soon_threadsafe(poke.set)

    remove = ws.add_overlay_listener(on_overlay)
    lock = asyncio.Lock()
    debounce = ws.config.debounce_ms / 1000.0

    async def deliver(paths: list[str] | None) -> None:
        async with lock:
            events = await asyncio.to_thread(ws.refresh, paths)
            if events:
                await asyncio.to_thread(ws.prepare)
        if events:
            result = on_events(events)
            if inspect.isawaitable(result):
                await result

    async def overlays() -> None:
        while not stop.is_set():
            await poke.wait()
            while True:  # debounce: wait for a quiet period
                poke.clear()
                await asyncio.sleep(debounce)
                if not poke.is_set():
                    break
            await deliver([])

    async def disk() -> None:
        async for changes in watchfiles.awatch(ws.root, watch_filter=_GitAwareFilter(),
                                               debounce=ws.config.debounce_ms, step=50, stop_event=stop,
                                               yield_on_timeout=False):
            await deliver(sorted({path for _, path in changes}))

    overlay_task = asyncio.create_task(overlays())
    try:
        await disk()
    finally:
        remove()
        overlay_task.cancel()
        try:
            await overlay_task
        except asyncio.CancelledError:
            pass
