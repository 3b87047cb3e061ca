"""Zed's launch of the agent, reproduced: the shipped ``editors/zed/settings.json`` entry (command, args,
env) spawned with the ACP SDK client over real stdio against the real node and the default model.

A session as Zed's agent panel runs it: new (commands advertised), a prompt with a resource_link and an
embedded resource (streamed chunks, plan, usage), cancel, the /explain-context command, then a fresh
process (Zed restarted) loading the thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

from acp import (
    PROTOCOL_VERSION,
    embedded_text_resource,
    resource_block,
    resource_link_block,
    spawn_agent_process,
    text_block,
)
from support.acp_recorder import Recorder
from support.gitrepo import TINY_APP, make_repo
from support.node_cleanup import terminate_pid

REPO = Path(__file__).resolve().parents[2]
ZED = REPO / "editors" / "zed"
VENV_BIN = Path(sys.executable).parent
CONFIG = "[model]\ndefault = \"smollm2-135m\"\n\n[engine]\nmax_new_tokens = 512\ncache_size_gb = 0.5\n\n[node]\nidle_exit_s = 600\n"
SHORT = {"maxNewTokens": 8}  # _meta.contenox.maxNewTokens: keep ordinary answers short


def zed_entry() -> dict[str, Any]:
    settings = json.loads((ZED / "settings.json").read_text(encoding="utf-8"))
    entry = settings["agent_servers"]["Contenox"]
    assert entry["type"] == "custom"
    return entry


def stop_node(command: str, env: dict[str, str], runtime: Path) -> None:
    subprocess.run([command, "node", "stop"], env={**os.environ, **env}, capture_output=True, timeout=60,
                   check=False)
    lock = runtime / "contenox" / "node.lock"
    try:
        pid = int(lock.read_text().strip() or "0")
    except (FileNotFoundError, ValueError):
        return
    if pid <= 0:
        return
    terminate_pid(pid)


@pytest.fixture
def zed_launch(home: Path, tmp_path: Path) -> Iterator[tuple[str, list[str], dict[str, str], Path]]:
    """The entry's command resolved as Zed would on a PATH holding the venv, its args, its env plus this
    test's private CONTENOX_HOME and XDG_RUNTIME_DIR; the node is stopped afterwards."""
    entry = zed_entry()
    command = shutil.which(entry["command"], path=os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")]))
    assert command is not None, f"{entry['command']!r} not found next to {sys.executable}"
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    runtime = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
    env = {**entry["env"], "CONTENOX_HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    workspace = make_repo(tmp_path / "ws", TINY_APP)
    try:
        yield command, list(entry["args"]), env, workspace
    finally:
        stop_node(command, env, runtime)
        shutil.rmtree(runtime, ignore_errors=True)


@asynccontextmanager
async def zed(command: str, args: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[tuple[Any, Recorder]]:
    recorder = Recorder()
    async with spawn_agent_process(recorder, command, *args, env=env, cwd=str(cwd)) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False,
                                                                             write_text_file=False)),
            client_info=Implementation(name="zed", title="Zed", version="1.5.0"))
        assert init.protocol_version == PROTOCOL_VERSION
        caps = init.agent_capabilities
        assert caps is not None and caps.load_session
        assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context
        yield conn, recorder


def test_shipped_settings_and_registry_entry_agree() -> None:
    entry = zed_entry()
    assert entry["command"] == "contenox" and entry["args"] == ["acp"] and entry["env"] == {}
    agent = json.loads((ZED / "registry" / "contenox" / "agent.json").read_text(encoding="utf-8"))
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert version is not None
    assert re.fullmatch(r"[a-z][a-z0-9-]*", agent["id"]) and agent["id"] == "contenox"
    assert agent["version"] == version.group(1)
    for key in ("name", "description", "distribution"):
        assert agent[key]
    # uvx runs the package's script of the same name: `uvx contenox==X acp` == `contenox acp`.
    uvx = agent["distribution"]["uvx"]
    assert set(uvx) <= {"package", "args", "env"}
    assert uvx["package"] == f"contenox=={agent['version']}"
    assert uvx["args"] == entry["args"]
    icon = (ZED / "registry" / "contenox" / "icon.svg").read_text(encoding="utf-8")
    assert 'width="16"' in icon and 'height="16"' in icon
    colours = re.findall(r'(?:fill|stroke)="([^"]+)"', icon)
    assert colours and set(colours) <= {"currentColor", "none", "inherit"}


@pytest.mark.slow
async def test_zed_session_new_prompt_cancel_load(zed_launch: tuple[str, list[str], dict[str, str], Path]) -> None:
    command, args, env, workspace = zed_launch
    util = workspace / "util.py"
    question = "What does helper do?"
    async with zed(command, args, env, workspace) as (conn, rec):
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = new.session_id
        await rec.wait_until(lambda: rec.of("available_commands_update", sid), timeout=60)
        names = [c.name for c in rec.of("available_commands_update", sid)[0].available_commands]
        assert names == ["explain-context", "pin", "unpin"]

        # Zed sends @-mentioned files as resource links and pasted context as embedded resources.
        reply = await conn.prompt(session_id=sid, prompt=[
            text_block(question),
            resource_link_block("util.py", util.as_uri()),
            resource_block(embedded_text_resource("file:///scratch/notes.md", "helper must stay pure.",
                                                  mime_type="text/markdown")),
        ], contenox=SHORT)
        assert reply.stop_reason in ("end_turn", "max_tokens")
        answer = rec.text(sid)
        assert answer.strip()
        assert len(rec.of("agent_message_chunk", sid)) >= 1
        plans = rec.of("plan", sid)
        assert plans and all(e.status == "completed" for e in plans[-1].entries)
        usage = rec.of("usage_update", sid)
        assert len(usage) == 1
        explain = usage[0].field_meta["contenox"]
        assert usage[0].used == explain["totals"]["tokens"] > 0
        assert usage[0].size == explain["context_size"] > usage[0].used
        segments = {s["kind"]: s for s in explain["segments"]}
        assert segments["pins"]["tokens"] == 0  # the linked file went into the turn's message, not the pins:
        assert "mentioned util.py: in this turn's message" in " ".join(explain["notes"])  # (the next turn's cache)
        assert reply.field_meta is not None and reply.field_meta["contenox"]["turn"] == explain["turn"]

        # Cancel while the turn is running (as soon as the plan shows it reading the prompt).
        mark = len(rec.updates)

        def started() -> bool:
            return any(s == sid and u.session_update == "plan" and any(e.status == "in_progress" for e in u.entries)
                       for s, u in rec.updates[mark:])

        running = asyncio.ensure_future(conn.prompt(
            session_id=sid, prompt=[text_block("Write a very long essay about helper, at least 800 words.")]))
        await rec.wait_until(lambda: started() or running.done(), timeout=300)
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(running, 120)
        assert cancelled.stop_reason == "cancelled"
        assert len(rec.of("usage_update", sid)) == 1  # no usage for a cancelled turn

        # The agent's commands answer in the thread.
        mark = len(rec.updates)
        shown = await conn.prompt(session_id=sid, prompt=[text_block("/explain-context")])
        assert shown.stop_reason == "end_turn"
        table = rec.text(sid, since=mark)
        assert "system" in table and "pins" in table

    # Zed restarted: a new process loads the thread and replays it.
    async with zed(command, args, env, workspace) as (conn, rec):
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        users = [u.content.text for u in rec.of("user_message_chunk", sid)]
        # the journal's turns and, in its place, the stopped prompt (marked); commands are not thread turns
        assert users == [question, "Write a very long essay about helper, at least 800 words."]
        assert answer in rec.text(sid)
        assert "_(no answer: stopped before the answer was finished)_" in rec.text(sid)
        await rec.wait_until(lambda: rec.of("available_commands_update", sid), timeout=60)
        again = await conn.prompt(session_id=sid, prompt=[text_block("Thanks.")], contenox=SHORT)
        assert again.stop_reason in ("end_turn", "max_tokens")
