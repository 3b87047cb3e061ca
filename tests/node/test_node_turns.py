"""Turns end to end through a real node subprocess on the real SmolLM2 model."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest

from contenox import cli, client
from contenox.config import Config
from contenox.node.paths import socket_path
from support.gitrepo import make_repo
from support.nodekit import RawConnection, node_pid, wait_gone

pytestmark = pytest.mark.slow


CALC_APP = {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "main.py": "from calc import add\n\nprint(add(1, 2))\n",
}


def ask_json(config: Config, cwd: Path, prompt: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert cli.main(["ask", "--json", "--cwd", str(cwd), prompt]) == 0
    return dict(msgspec.json.decode(capsys.readouterr().out))


def test_ask_streams_then_second_turn_is_cached_and_a_killed_node_resumes(
        node_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo", CALC_APP)

    # Streaming: chunks arrive as notifications, then the result with the explain.
    conn = RawConnection(node_config)
    conn.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {"cwd": str(repo / "calc.py"),
                                                                     "prompt": "What does add do?"}})
    chunks: list[str] = []
    states: list[str] = []
    progress: list[tuple[int, int]] = []
    while True:
        message = conn.receive()
        if message.get("method") == "chunk":
            chunks.append(message["params"]["text"])
        elif message.get("method") == "state":
            params = message["params"]
            if params["state"] == "prefill":  # the spinner's line: new tokens done of those to compute
                assert re.fullmatch(r"[\d,]+ of [\d,]+ new prompt tokens computed \(0% of [\d,]+ cached\)",
                                    params["detail"])
            if "done" in params:  # live progress after each prefill step
                progress.append((params["done"], params["total"]))
            else:
                states.append(params["state"])
        elif message.get("id") == 1:
            break
    conn.close()
    first = message["result"]
    assert first["text"] and first["text"] == "".join(chunks)
    assert first["finish_reason"] in ("stop", "length")
    assert states[:2] == ["indexing", "prefill"] and states[-1] == "idle"
    # the prompt spans several 256-token chunks: progress rises chunk by chunk and never passes the prompt
    prompt_tokens = first["explain"]["totals"]["tokens"]
    assert len(progress) >= prompt_tokens // 256 - 1 >= 1
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    assert all(total == prompt_tokens and 0 < done <= total for done, total in progress)
    assert first["explain"]["workspace"] == str(repo)
    assert first["explain"]["turn"] == 1
    assert first["explain"]["totals"]["cached"] == 0

    second = ask_json(node_config, repo, "And what does sub do?", capsys)
    explain = second["explain"]
    assert isinstance(explain, dict)
    assert explain["turn"] == 2
    assert explain["totals"]["cached"] > 0
    by_kind = {s["kind"]: s for s in explain["segments"]}
    assert by_kind["system"]["cached"] == by_kind["system"]["tokens"] > 0
    assert by_kind["repo_map"]["cached"] > 0  # block-granular: its last partial block may be recomputed
    assert by_kind["repo_map"]["invalidated_by"] in (None, "partial cache block")

    # The CLI's table form: segments with tokens, cached and new, then the totals.
    table = subprocess.run([sys.executable, "-m", "contenox", "explain-context"], cwd=repo, capture_output=True,
                         text=True, timeout=120)
    assert table.returncode == 0, table.stderr
    assert "repo_map" in table.stdout and "hit" in table.stdout

    # kill -9: the next call starts a new node, which resumes the session from disk.
    pid = node_pid(node_config)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    # The journal is the turn count's one home: the record holds none. An older record's stale count (one short,
    # as a kill between the journal's append and the record's write once left it) is read and ignored, and the
    # temp file of an atomic write that never reached its rename is swept.
    [record_path] = (node_config.state_dir / "workspaces").glob("*/workspace.json")  # beside the journal
    record = msgspec.json.decode(record_path.read_bytes())
    assert "turns" not in record
    record_path.write_bytes(msgspec.json.encode({**record, "turns": 1}))
    torn = record_path.with_name(f".workspace.json.{pid}.tmp")
    torn.write_bytes(b'{"root": ')
    assert cli.main(["explain-context", "--json", "--cwd", str(repo)]) == 0
    assert msgspec.json.decode(capsys.readouterr().out)["turn"] == 2
    assert node_pid(node_config) != pid

    asked = subprocess.run([sys.executable, "-m", "contenox", "ask", "--json", "Where is add used?"], cwd=repo,
                         capture_output=True, text=True, timeout=300)
    assert asked.returncode == 0, asked.stderr
    third = msgspec.json.decode(asked.stdout)
    explain = third["explain"]
    assert isinstance(explain, dict)
    assert explain["turn"] == 3
    history = {s["kind"]: s for s in explain["segments"]}["history"]
    assert history["tokens"] > 20  # the two earlier exchanges came back from the persisted session
    assert explain["totals"]["cached"] > 0  # the new node re-warmed the session's prefix before the turn
    assert cli.main(["node", "status", "--json"]) == 0
    status = msgspec.json.decode(capsys.readouterr().out)
    assert [(w["root"], w["turns"]) for w in status["workspaces"]] == [(str(repo), 3)]  # the journal's count
    assert not torn.exists()  # the new node swept it
    assert status["model"]["state"] == "ready"
    assert status["rewarm"]["total"] == status["rewarm"]["done"] == 1
    assert status["rewarm"]["warm_ups"] >= 1


_SLOW_CLIENT = textwrap.dedent("""
    import sys
    from contenox.config import load_config
    from contenox.client import ensure_node
    from contenox.jsonrpc import SocketFrames
    frames = SocketFrames(ensure_node(load_config()))
    frames.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {
        "cwd": sys.argv[1], "prompt": "Write a very long story about a dragon.",
        "terminal": "error: something failed\\n" * 600, "max_new_tokens": 400}})
    while True:
        message = frames.receive()
        if message.get("method") == "state" and message["params"]["state"] in ("prefill", "decode"):
            print("busy", flush=True)
            break
    import time
    time.sleep(600)
""")


def test_a_client_killed_mid_turn_does_not_disturb_another_and_sigterm_cancels_in_flight_turns(
        node_config: Config, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC_APP)
    client.ensure_node(node_config).close()
    slow = subprocess.Popen([sys.executable, "-c", _SLOW_CLIENT, str(repo)], stdout=subprocess.PIPE, text=True)
    try:
        assert slow.stdout is not None
        assert slow.stdout.readline().strip() == "busy"
        other = RawConnection(node_config)
        other.send({"jsonrpc": "2.0", "id": 7, "method": "ask", "params": {"cwd": str(repo), "prompt": "Hi"}})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the second turn waits behind the first on this workspace
            waiting = other.request(8, "status")["result"]["queue"]["waiting"]
            if waiting:
                break
            time.sleep(0.05)
        assert waiting and waiting[0]["workspace"].startswith("repo-")
        slow.kill()
        slow.wait()
        while True:
            message = other.receive()
            if message.get("id") == 7:
                break
        other.close()
    finally:
        if slow.poll() is None:
            slow.kill()
            slow.wait()
    assert message["result"]["text"]
    assert message["result"]["explain"]["turn"] == 1  # the killed client's turn was cancelled, not recorded

    # SIGTERM during a turn: the turn is cancelled (the client is told), the node exits cleanly.
    conn = RawConnection(node_config)
    conn.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {
        "cwd": str(repo), "prompt": "Write a very long story about a dragon.", "max_new_tokens": 400,
        "terminal": "error: something failed\n" * 600}})
    while True:
        message = conn.receive()
        if message.get("method") == "state" and message["params"]["state"] in ("prefill", "decode"):
            break
    pid = node_pid(node_config)
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    while "id" not in message:
        message = conn.receive()
    conn.close()
    assert message["error"]["data"]["kind"] == "cancelled"
    assert wait_gone(pid)
    assert not socket_path(node_config).exists()
    log = (Path(node_config.logs_dir) / "node.log").read_text()
    assert "node stopped" in log
    assert cli.main(["explain-context", "--cwd", str(repo)]) == 0  # a new node: still turn 1 on disk
    assert node_pid(node_config) != pid


def test_threads_are_listed_and_shown(node_config: Config, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo", CALC_APP)
    for args in (["What does add do?"], ["And sub?"], ["--thread", "review", "Review calc.py."]):
        assert cli.main(["ask", "--json", "--cwd", str(repo), *args]) == 0
    capsys.readouterr()
    assert cli.main(["threads", "--json", "--cwd", str(repo)]) == 0
    threads = msgspec.json.decode(capsys.readouterr().out)
    assert [(t["thread"], t["turns"], t["title"]) for t in threads] == [
        ("review", 1, "Review calc.py."), ("cli", 2, "What does add do?")]
    assert cli.main(["threads", "cli", "--json", "--cwd", str(repo)]) == 0
    turns = msgspec.json.decode(capsys.readouterr().out)
    assert [t["user"] for t in turns] == ["What does add do?", "And sub?"] and all(t["answer"] for t in turns)
    assert cli.main(["threads", "--cwd", str(repo)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("review") and "contenox threads NAME" in table
