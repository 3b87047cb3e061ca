"""The async watcher: disk changes and overlay bursts each lead to one refresh."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from wsrepo import git, write

from contenox.workspace import ChangeEvent, Workspace, watch

OpenWs = Callable[..., Workspace]


async def next_events(queue: asyncio.Queue[list[ChangeEvent]]) -> list[ChangeEvent]:
    return await asyncio.wait_for(queue.get(), timeout=20)


async def test_watch_disk_git_and_overlays(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    ws = open_ws(root, debounce_ms=50)
    queue: asyncio.Queue[list[ChangeEvent]] = asyncio.Queue()
    stop = asyncio.Event()
    task = asyncio.create_task(watch(ws, queue.put_nowait, stop))
    await asyncio.sleep(0.5)  # let the watcher start
    try:
        write(root, "app/new.py", "def fresh():\n    pass\n")
        events = await next_events(queue)
        assert [(e.kind, e.path) for e in events] == [("untracked", "app/new.py")]
        git(root, "add", "app/new.py")
        events = await next_events(queue)
        assert [(e.kind, e.path) for e in events] == [("staged", "app/new.py")]
        for n in range(10):
            ws.set_overlay("app/models.py", f"def edit_{n}():\n    pass\n")
        events = await next_events(queue)
        assert [(e.kind, e.path) for e in events] == [("modified", "app/models.py")]
        assert [s.name for s in ws.find_symbol("edit_9")] == ["edit_9"]
        await asyncio.sleep(0.3)
        assert queue.empty()
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=10)
