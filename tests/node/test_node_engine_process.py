"""The engine in its own process, through a real node subprocess on the real SmolLM2 model: a kill -9 of the
engine mid-turn ends that turn with EngineCrashed, the node lives on, the next turn restarts the engine and
works; status names the restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contenox.config import Config
from support.gitrepo import make_repo
from support.nodekit import RawConnection, node_pid, pid_alive, wait_gone, write_config

pytestmark = pytest.mark.slow

APP = {f"mod{i}.py": "".join(f"def f{i}_{j}(x):\n    return x * {j} + {i}\n\n\n" for j in range(40))
       for i in range(6)}


@pytest.fixture
def long_turns(home: Path, runtime_dir: Path) -> Config:
    return write_config(home, "[engine]\nmax_new_tokens = 400\ncache_size_gb = 0.5\nrepetition_penalty = 1.0\n\n"
                              "[node]\nidle_exit_s = 600\n")


def _status(config: Config) -> dict:
    conn = RawConnection(config)
    try:
        return conn.request(99, "status")["result"]
    finally:
        conn.close()


def test_a_killed_engine_fails_its_turn_and_the_next_turn_restarts_it(long_turns: Config, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", APP)
    conn = RawConnection(long_turns)
    conn.sock.settimeout(600)
    conn.send({"jsonrpc": "2.0", "id": 1, "method": "ask",
               "params": {"cwd": str(repo), "prompt": "Write a long essay about every function in mod3.py."}})
    while True:  # wait until the answer streams: the engine process is then busy with this turn
        message = conn.receive()
        if message.get("method") == "chunk" or message.get("id") == 1:
            break
    assert message.get("id") != 1, f"the turn ended before it could be interrupted: {message}"
    status = _status(long_turns)
    node = node_pid(long_turns)
    engine = status["engine"]["pid"]
    assert status["engine"]["process"] is True and engine != node and pid_alive(engine)
    os.kill(engine, signal.SIGKILL)
    while True:
        message = conn.receive()
        if message.get("id") == 1:
            break
    conn.close()
    error = message["error"]
    assert error["data"]["kind"] == "engine_crashed", error
    assert "killed by SIGKILL" in error["message"]
    assert wait_gone(engine, 30)
    assert node_pid(long_turns) == node and pid_alive(node)  # the node lives on

    after = RawConnection(long_turns)
    after.sock.settimeout(600)
    reply = after.request(2, "ask", {"cwd": str(repo), "prompt": "What does f3_1 return?", "max_new_tokens": 8})
    after.close()
    assert "result" in reply, reply
    assert reply["result"]["explain"]["turn"] == 1  # the crashed turn recorded nothing
    status = _status(long_turns)
    assert status["engine"]["restarts"] == 1 and "SIGKILL" in status["engine"]["last_crash"]
    assert status["engine"]["alive"] and status["engine"]["pid"] not in (engine, node)
    shown = subprocess.run([sys.executable, "-m", "contenox", "node", "status"], capture_output=True, text=True,
                           timeout=60, check=True).stdout
    assert f"engine own process, pid {status['engine']['pid']}; 1 restart(s); last: was killed by SIGKILL" in shown


def test_an_engine_that_dies_before_starting_a_turn_is_restarted_and_the_turn_answered(
        long_turns: Config, tmp_path: Path) -> None:
    """The engine was already dying when the turn was sent (stopped, then killed with the turn in its pipe): the
    turn never reached it, so the node restarts it and resubmits instead of failing a turn it never began."""
    repo = make_repo(tmp_path / "repo", APP)
    warm = RawConnection(long_turns)
    warm.sock.settimeout(600)
    assert "result" in warm.request(1, "ask", {"cwd": str(repo), "prompt": "Hi", "max_new_tokens": 2})
    warm.close()
    engine = _status(long_turns)["engine"]["pid"]
    os.kill(engine, signal.SIGSTOP)
    conn = RawConnection(long_turns)
    conn.sock.settimeout(600)
    try:
        conn.send({"jsonrpc": "2.0", "id": 2, "method": "ask",
                   "params": {"cwd": str(repo), "prompt": "What does f3_1 return?", "max_new_tokens": 8}})
        while True:  # the turn is planned and goes to the (stopped) engine
            message = conn.receive()
            if message.get("method") == "state" and message["params"]["state"] == "prefill":
                break
            assert message.get("id") != 2, message
        time.sleep(0.5)
        os.kill(engine, signal.SIGKILL)
        while (message := conn.receive()).get("id") != 2:
            pass
    finally:
        conn.close()
    assert "result" in message, message
    assert message["result"]["explain"]["turn"] == 2
    status = _status(long_turns)
    assert status["engine"]["restarts"] == 1 and status["engine"]["pid"] != engine
