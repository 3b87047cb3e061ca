"""The Node object in process, without the model: workspaces, pins, overlays, related code, symbols."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from contenox.config import load_config
from contenox.errors import Cancelled, InvalidRequest, PathOutsideWorkspace
from contenox.node import Node, TurnRequest
from support.gitrepo import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"pkg/calc.py": "def add(a, b):\n    return a + b\n",
                                         "main.py": "from pkg.calc import add\n\nprint(add(1, 2))\n"},
                     commit=False)


async def test_workspace_is_resolved_to_its_root_and_pins_persist(home: Path, repo: Path) -> None:
    node = Node(load_config(home))
    state = node.workspace(str(repo / "pkg" / "calc.py"))
    assert state.root == repo.resolve()
    assert node.workspace(str(repo / "pkg")) is state
    assert await node.pin(str(repo), str(repo / "pkg" / "calc.py")) == ("pkg/calc.py",)
    with pytest.raises(PathOutsideWorkspace):
        await node.pin(str(repo), "../elsewhere.py")
    with pytest.raises(InvalidRequest):
        await node.pin(str(repo), "missing.py")
    with pytest.raises(InvalidRequest):
        node.workspace("relative/path")
    assert await node.explain(str(repo)) is None

    again = Node(load_config(home))  # a restarted node reads the same state
    assert again.workspace(str(repo)).record.pins == ("pkg/calc.py",)
    assert await again.unpin(str(repo), "pkg/calc.py") == ()
    status = await again.status()
    assert [(w["root"], w["pins"], w["turns"]) for w in status["workspaces"]] == [(str(repo.resolve()), [], 0)]
    assert status["model"]["state"] == "unloaded" and status["cache"] is None
    await node.close()
    await again.close()


async def test_related_symbol_info_and_overlays(home: Path, repo: Path) -> None:
    node = Node(load_config(home))
    info = await node.symbol_info(str(repo), "add")
    assert info is not None
    assert [d.path for d in info.definitions] == ["pkg/calc.py"]
    assert "main.py" in info.referenced_by
    assert await node.symbol_info(str(repo), "no_such_symbol") is None

    related = await node.related(str(repo), "print(add(1, 2))")
    assert any(hit.kind == "definition" and hit.path == "pkg/calc.py" for hit in related)

    # An unsaved editor buffer wins over the file on disk; dropping it restores the disk view.
    await node.workspace_overlay(str(repo), str(repo / "pkg" / "calc.py"), "def multiply(a, b):\n    return a * b\n")
    info = await node.symbol_info(str(repo), "multiply")
    assert info is not None and info.definitions[0].path == "pkg/calc.py"
    await node.workspace_overlay(str(repo), str(repo / "pkg" / "calc.py"), None)
    assert await node.symbol_info(str(repo), "multiply") is None
    await node.close()


async def test_two_windows_with_one_file_each_keep_their_unsaved_buffer(home: Path, repo: Path) -> None:
    node = Node(load_config(home))
    calc = str(repo / "pkg" / "calc.py")
    assert await node.symbol_info(str(repo), "add") is not None  # the index is open: overlays reach it at once

    async def defined(name: str) -> bool:
        return await node.symbol_info(str(repo), name) is not None

    await node.workspace_overlay(str(repo), calc, "def multiply(a, b):\n    return a * b\n", owner="window-a")
    await node.workspace_overlay(str(repo), calc, "def divide(a, b):\n    return a / b\n", owner="window-b")
    assert await defined("divide") and not await defined("multiply")  # the latest buffer is what the file reads
    await node.workspace_overlay(str(repo), calc, None, owner="window-b")  # B closes (or saves) the file
    assert await defined("multiply") and not await defined("divide")  # A's unsaved text still counts
    await node.workspace_overlay(str(repo), calc, "def power(a, b):\n    return a ** b\n", owner="window-b")
    await node.release_overlays("window-b")  # B's connection died without closing its files
    assert await defined("multiply") and not await defined("power")
    await node.release_overlays("window-a")
    assert await defined("add") and not await defined("multiply")  # the disk again
    assert node.workspace(str(repo)).overlays == {}
    await node.close()


async def test_cancelling_a_queued_turn_raises_cancelled(home: Path, repo: Path) -> None:
    node = Node(load_config(home))
    key = node.workspace(str(repo)).key
    release = asyncio.Event()
    entered = asyncio.Event()

    async def busy() -> None:  # another client's turn holds the workspace
        async with node.queue.slot("other", key):
            entered.set()
            await release.wait()

    holder = asyncio.create_task(busy())
    await entered.wait()
    turn = asyncio.create_task(node.turn(TurnRequest(root=str(repo), prompt="hi", client_id="me")))
    for _ in range(200):  # (the question is first recorded as asked, in a thread)
        if (await node.status())["queue"]["waiting"]:
            break
        await asyncio.sleep(0.01)
    assert (await node.status())["queue"]["waiting"] == [{"client": "me", "workspace": key}]
    turn.cancel()
    with pytest.raises(Cancelled):
        await turn
    assert (await node.status())["queue"]["waiting"] == []
    release.set()
    await holder
    await node.close()


async def test_pins_refuse_special_binary_huge_and_non_utf8_files_with_the_reason(home: Path, repo: Path) -> None:
    """Regression: a FIFO pin hung a worker under the workspace lock; binary or huge pins failed every turn."""
    import os

    node = Node(load_config(home))
    os.mkfifo(repo / "fifo")
    (repo / "blob.bin").write_bytes(b"\x7fELF\x00\x01")
    (repo / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (repo / "huge.txt").write_text("x" * (load_config(home).workspace.max_file_bytes + 1))
    for name, why in (("fifo", "not a regular file (a FIFO, socket or device)"), ("blob.bin", "a binary file"),
                      ("latin1.txt", "not UTF-8 text (invalid byte at offset 3)"),
                      ("huge.txt", "over the workspace.max_file_bytes cap"), ("pkg", "a directory, not a file")):
        with pytest.raises(InvalidRequest, match=f"cannot pin {name}: .*{why.split(' (')[0]}"):
            await node.pin(str(repo), name)
    assert await node.pin(str(repo), "main.py") == ("main.py",)
    await node.close()


def test_reading_a_fifo_through_the_workspace_fails_at_once(repo: Path) -> None:
    import os
    import threading

    from contenox.config import WorkspaceConfig
    from contenox.errors import WorkspaceError
    from contenox.workspace import Workspace

    os.mkfifo(repo / "fifo")
    ws = Workspace.open(repo, WorkspaceConfig(), None)
    outcome: list[object] = []

    def read() -> None:
        try:
            ws.read_text("fifo")
        except WorkspaceError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert len(outcome) == 1 and outcome[0].details["reason"] == "special"  # type: ignore[attr-defined]


async def test_the_filesystem_root_and_the_home_directory_are_never_workspaces(home: Path) -> None:
    node = Node(load_config(home))
    for root in ("/", str(Path.home())):
        with pytest.raises(InvalidRequest, match="is not a project folder"):
            node.workspace(root)
    await node.close()


@pytest.mark.slow
async def test_an_engine_left_failing_by_a_request_is_restarted_and_status_says_so(
        home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 16, defect 1): after a native failure ("token out of bounds") every later turn failed
    with engine_error while status said ready. Now the next turn runs on a fresh engine and status names why."""
    from contenox.errors import EngineError
    from contenox.node import backend

    node = Node(load_config(home))
    request = TurnRequest(root=str(repo), prompt="What does add do?", client_id="me", max_new_tokens=2)
    await node.turn(request)
    first = (await node.status())["engine"]
    real_submit = backend.submit

    def failing_submit(engine, session_id, token_ids, max_new_tokens, **options):  # type: ignore[no-untyped-def]
        handle = real_submit(engine, session_id, token_ids, max_new_tokens, **options)
        handle.cancel()
        handle.fail(EngineError("input_ids token out of bounds", native=True))
        return handle

    monkeypatch.setattr(backend, "submit", failing_submit)
    with pytest.raises(EngineError, match="out of bounds"):
        await node.turn(request)
    monkeypatch.setattr(backend, "submit", real_submit)
    outcome = await node.turn(request)
    assert outcome.finish_reason in ("stop", "length")
    status = (await node.status())["engine"]
    assert status["restarts"] == 1 and "input_ids token out of bounds" in status["last_crash"]
    assert status["alive"] and status["pid"] != first["pid"]
    await node.close()


async def test_a_mention_is_turn_material_and_the_next_turn_keeps_the_thread_cached(home: Path, repo: Path) -> None:
    """Regression (#17): a one-turn @-mention was a pin for that turn, so the next turn, without it, recomputed
    everything after the pins segment (24% cached instead of 99%). A mention now enters the turn's message."""
    node = Node(load_config(home))
    try:
        first = await node.turn(TurnRequest(root=str(repo), prompt="What does add do?", client_id="me",
                                            max_new_tokens=4, pins=[str(repo / "pkg" / "calc.py")]))
        segments = {s.kind: s for s in first.explain.segments}
        assert "pins" not in segments or segments["pins"].tokens == 0
        from contenox.planner import Journal

        [record] = Journal(node.config.state_dir / "workspaces" / node.workspace(str(repo)).key).load()
        assert "# Files mentioned with the question\n\n## pkg/calc.py\n```python\ndef add(a, b):" in record.user
        second = await node.turn(TurnRequest(root=str(repo), prompt="And who calls it?", client_id="me",
                                             max_new_tokens=4))
        kinds = [s.kind for s in second.explain.segments]
        history = second.explain.segments[kinds.index("history")]
        # the mention is in the cached thread: all of it but the previous answer's end (its last token's KV is
        # never computed, and the cache is block-granular) is served from the cache, every segment before too
        assert history.tokens > 200 and history.cached >= history.tokens - 32
        through_history = sum(s.tokens for s in second.explain.segments[:kinds.index("history") + 1])
        assert second.explain.totals.cached >= through_history - 32
        # a folder mention adds its outline; a file that cannot be read or a path outside is a note, not a failure
        (repo / "blob.bin").write_bytes(b"\x00\x01binary")
        third = await node.turn(TurnRequest(root=str(repo), prompt="and these?", client_id="me", max_new_tokens=2,
                                            pins=[str(repo / "pkg"), str(repo / "blob.bin"), "/etc/hostname"],
                                            notes=("image content is not supported and was skipped",)))
        notes = third.explain.notes
        assert "image content is not supported and was skipped" in notes
        assert f"mentioned /etc/hostname: outside the workspace {repo.resolve()}, left out" in notes
        assert "mentioned blob.bin: a binary file, left out" in notes
        assert any(n.startswith("mentioned pkg/: its outline in this turn's message") for n in notes)
        last = Journal(node.config.state_dir / "workspaces" / node.workspace(str(repo)).key).load()[-1]
        assert "## pkg/ (folder outline: 1 file(s))\n```\npkg/calc.py:\n  def add(a, b):" in last.user
    finally:
        await node.close()


async def test_switching_the_model_is_refused_while_a_turn_runs_then_the_next_turn_loads_it(
        home: Path, repo: Path) -> None:
    from contenox.errors import EngineBusy, ModelNotFound

    models = load_config(home).models_dir
    (models / "alt").symlink_to((models / "smollm2-135m").resolve(), target_is_directory=True)
    node = Node(load_config(home))
    try:
        await node.turn(TurnRequest(root=str(repo), prompt="hi", client_id="me", max_new_tokens=2))
        first_engine = (await node.status())["engine"]["pid"]
        running = asyncio.create_task(node.turn(TurnRequest(root=str(repo), prompt="Count to 500.", client_id="me",
                                                            max_new_tokens=300)))
        while not node.queue.snapshot()["active"]:
            await asyncio.sleep(0.01)
        with pytest.raises(EngineBusy, match="turns are running on smollm2-135m; switch to alt when they end"):
            await node.use_model("alt")
        running.cancel()
        with pytest.raises((asyncio.CancelledError, Cancelled)):
            await running
        with pytest.raises(ModelNotFound):
            await node.use_model("nope")
        choice = await node.use_model("alt")
        assert (choice.current, choice.installed) == ("alt", ("alt", "smollm2-135m"))
        status = await node.status()
        assert status["model"] == {"name": "alt", "state": "unloaded", "error": None}
        outcome = await node.turn(TurnRequest(root=str(repo), prompt="hi again", client_id="me", max_new_tokens=2))
        assert outcome.finish_reason in ("stop", "length")
        status = await node.status()
        assert status["model"]["state"] == "ready" and status["engine"]["restarts"] == 0
        if first_engine != os.getpid():  # the engine in its own process: a new one
            assert status["engine"]["pid"] != first_engine
        assert load_config(home).model.default == "alt"
    finally:
        await node.close()


async def test_range_and_outline_pins(home: Path, repo: Path) -> None:
    (repo / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    node = Node(load_config(home))
    try:
        assert await node.pin(str(repo), "pkg/calc.py:5-6") == ("pkg/calc.py:5-6",)
        assert await node.pin(str(repo), "main.py:outline") == ("pkg/calc.py:5-6", "main.py:outline")
        assert await node.pin(str(repo), str(repo / "main.py")) == ("pkg/calc.py:5-6", "main.py:outline", "main.py")
        with pytest.raises(InvalidRequest, match=r"cannot pin nope\.py:1-2: no such file"):
            await node.pin(str(repo), "nope.py:1-2")
        plan = await node.turn(TurnRequest(root=str(repo), prompt="What does sub do?", client_id="me",
                                           plan_only=True))
        assert {s.kind: s.tokens for s in plan.explain.segments}["pins"] > 0
        assert "pkg/calc.py" in plan.files_in_prompt  # a range pin still names its file (edits, citations)
        assert await node.unpin(str(repo), "main.py") == ("pkg/calc.py:5-6",)  # a plain path: all its pins
        assert await node.unpin(str(repo), "pkg/calc.py:5-6") == ()
    finally:
        await node.close()


async def test_resolve_edit_resolves_one_code_block_with_renames_and_buffers(home: Path, repo: Path) -> None:
    """A chat code block's Apply: the node's answer machinery on the block alone; nothing is written."""
    node = Node(load_config(home))
    block = "pkg/calc.py\n```python\ndef sum_of(a, b):\n    return a + b\n```\n"
    proposed = await node.resolve_edit(str(repo), block, "rename add to sum_of")
    by_path = {edit.path: edit for edit in proposed.edits}
    assert set(by_path) == {"pkg/calc.py", "main.py"}  # the rename carried to its use
    assert by_path["main.py"].new_text == "from pkg.calc import sum_of\n\nprint(sum_of(1, 2))\n"
    assert (repo / "main.py").read_text() == "from pkg.calc import add\n\nprint(add(1, 2))\n"
    # resolved against the editor's buffer, not the disk
    await node.workspace_overlay(str(repo), str(repo / "pkg" / "calc.py"), "def add(a, b):\n    return b + a\n")
    edited = await node.resolve_edit(str(repo), "```python\ndef add(a, b):\n    return int(a) + int(b)\n```\n")
    assert [(e.path, e.old_text) for e in edited.edits] == [("pkg/calc.py", "def add(a, b):\n    return b + a\n")]
    await node.close()
