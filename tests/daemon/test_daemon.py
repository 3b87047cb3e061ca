"""The daemon as users and bad clients meet it: a real ``contenox node serve`` subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest

from contenox import cli, client
from contenox.config import Config
from contenox.jsonrpc import MAX_MESSAGE_BYTES
from contenox.node.paths import socket_dir, socket_path
from support.nodekit import RawConnection, connect_plain, node_pid, pid_alive, wait_gone, write_config

pytestmark = pytest.mark.slow  # every test starts a real node subprocess (1.5-3.5 s each)


def test_status_starts_nothing_then_ask_starts_node_and_stop_stops_it(node_config: Config,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["node", "status", "--json"]) == 1
    assert msgspec.json.decode(capsys.readouterr().out) == {"running": False}

    client.ensure_node(node_config).close()
    assert cli.main(["node", "status", "--json"]) == 0
    status = msgspec.json.decode(capsys.readouterr().out)
    assert status["running"] is True
    assert status["model"] == {"name": "smollm2-135m", "state": "unloaded", "error": None}
    assert status["queue"]["active"] == [] and status["queue"]["waiting"] == []
    pid = status["pid"]
    assert pid == node_pid(node_config)

    assert cli.main(["node", "stop"]) == 0
    assert wait_gone(pid)
    assert not socket_path(node_config).exists()
    assert cli.main(["node", "status"]) == 1


def test_socket_dir_and_socket_are_private(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    directory = socket_dir(node_config)
    assert directory == Path(os.environ["XDG_RUNTIME_DIR"]) / "contenox"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(socket_path(node_config).stat().st_mode) == 0o600
    assert (Path(node_config.logs_dir) / "node.log").read_text().count("serving on") == 1


def test_state_and_logs_are_private(node_config: Config, tmp_path: Path) -> None:
    """Regression: transcripts, ACP sessions and logs were 0644 (another user read them)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.py").write_text("SECRET = 1\n")
    with client.NodeClient(client.ensure_node(node_config)) as conn:
        assert conn.call("pin", {"cwd": str(repo), "path": str(repo / "notes.py")}) == {"pins": ["notes.py"]}
    logs = Path(node_config.logs_dir)
    state = Path(node_config.state_dir)
    record = next(state.rglob("workspace.json"))
    for path in (logs, logs / "node.log", logs / "node.out", record, record.parent, state / "workspaces"):
        expected = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def test_one_node_only(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    pid = node_pid(node_config)
    second = subprocess.run([sys.executable, "-m", "contenox", "node", "serve"], capture_output=True, text=True,
                            timeout=60)
    assert second.returncode == 1
    assert "already running" in second.stderr
    assert node_pid(node_config) == pid and pid is not None and pid_alive(pid)


def test_sigterm_shuts_down_cleanly(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    pid = node_pid(node_config)
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    assert wait_gone(pid)
    assert not socket_path(node_config).exists()
    assert "node stopped" in (Path(node_config.logs_dir) / "node.log").read_text()


def test_kill_9_then_next_call_starts_a_new_node(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    first = node_pid(node_config)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert wait_gone(first)
    assert socket_path(node_config).exists()  # stale socket left behind
    client.ensure_node(node_config).close()
    second = node_pid(node_config)
    assert second is not None and second != first and pid_alive(second)


def test_idle_node_exits_by_itself(home: Path, runtime_dir: Path) -> None:
    config = write_config(home, "[node]\nidle_exit_s = 0.5\n")
    client.ensure_node(config).close()
    pid = node_pid(config)
    assert pid is not None
    assert wait_gone(pid, 30)
    assert not socket_path(config).exists()


def test_bad_input_gets_errors_and_the_node_survives(raw: RawConnection) -> None:
    raw.send_json_text(b"{not json")
    assert raw.receive()["error"]["code"] == -32700

    raw.send_raw(b"X-Nonsense: 1\r\n\r\n")
    assert raw.receive()["error"]["data"]["kind"] == "parse_error"

    raw.send_json_text(b"[1, 2]")
    assert raw.receive()["error"]["code"] == -32600

    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}})  # regression: closed it
    raw.send_json_text(b"[" * 5000 + b"]" * 5000)
    assert raw.receive()["error"]["code"] in (-32700, -32600)

    reply = raw.request(1, "no/such/method")
    assert reply["error"]["code"] == -32601

    reply = raw.request(2, "ask", {"cwd": 42})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["kind"] == "invalid_request"

    reply = raw.request(3, "pin", {"cwd": "/", "path": "/etc/passwd/.."})
    assert "error" in reply

    reply = raw.request(4, "ask", {"cwd": "/no/such/dir", "prompt": "hi"})
    assert reply["error"]["data"]["kind"] == "invalid_request"

    big = MAX_MESSAGE_BYTES + 1024
    raw.send_raw(b"Content-Length: %d\r\n\r\n" % big + b" " * big)
    assert raw.receive()["error"]["data"]["kind"] == "message_too_large"

    reply = raw.request(5, "status")
    assert reply["result"]["clients"] >= 1


def test_pin_and_unpin_persist(raw: RawConnection, node_config: Config, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    reply = raw.request(1, "pin", {"cwd": str(repo / "src"), "path": "a.py"})
    assert reply["error"]["data"]["kind"] == "invalid_request"  # relative to the root, not to cwd
    reply = raw.request(2, "pin", {"cwd": str(repo / "src"), "path": str(repo / "src" / "a.py")})
    assert reply["result"] == {"pins": ["src/a.py"]}
    reply = raw.request(3, "pin", {"cwd": str(repo), "path": str(tmp_path)})
    assert reply["error"]["data"]["kind"] == "path_outside_workspace"
    status = raw.request(4, "status")["result"]
    assert [w["pins"] for w in status["workspaces"]] == [["src/a.py"]]
    assert raw.request(5, "unpin", {"cwd": str(repo), "path": "src/a.py"})["result"] == {"pins": []}
    assert raw.request(6, "explain", {"cwd": str(repo)})["result"] is None


def test_unknown_protocol_line_is_refused(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    sock = connect_plain(socket_path(node_config))
    sock.sendall(b"HELLO\n")
    data = sock.makefile("rb").read()
    body = msgspec.json.decode(data.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["data"]["kind"] == "invalid_request"
    sock.close()
    assert cli.main(["node", "status", "--json"]) == 0


_OTHER_UID_CLIENT = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sys.argv[1])
    except PermissionError:
        print("EACCES"); sys.exit(0)
    try:
        s.sendall(b"CONTENOX/1 rpc\\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused before it could speak
    s.settimeout(30)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    sys.stdout.write(data.decode())
""")


def _as_nobody(path: Path) -> str:
    def drop() -> None:
        os.setgid(65534)
        os.setuid(65534)

    result = subprocess.run(["/usr/bin/python3", "-c", _OTHER_UID_CLIENT, str(path)], capture_output=True,
                            timeout=60, preexec_fn=drop, cwd="/")
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client under another uid")
def test_another_uid_cannot_connect(node_config: Config) -> None:
    client.ensure_node(node_config).close()
    path = socket_path(node_config)
    os.chmod(Path(os.environ["XDG_RUNTIME_DIR"]), 0o755)
    assert _as_nobody(path).strip() == "EACCES"  # the 0700 directory keeps it out

    # Even with the file permissions opened up, SO_PEERCRED refuses the other uid.
    os.chmod(path.parent, 0o711)
    os.chmod(path, 0o666)
    reply = _as_nobody(path)
    body = msgspec.json.decode(reply.split("\r\n\r\n", 1)[1])
    assert body["error"]["data"]["kind"] == "peer_not_allowed"
    assert body["error"]["code"] == -32017
    assert cli.main(["node", "status", "--json"]) == 0


def test_oversized_header_closes_only_that_connection(node_config: Config) -> None:
    bad = RawConnection(node_config)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        bad.send_raw(b"X-Junk: " + b"x" * (2 << 20) + b"\r\n")
    assert bad.receive()["error"]["data"]["kind"] == "message_too_large"
    with pytest.raises(ConnectionError):
        bad.receive()
    bad.close()
    good = RawConnection(node_config)
    assert good.request(1, "status")["result"]["pid"] == node_pid(node_config)
    good.close()


def test_clients_racing_to_start_the_node_get_one_node(node_config: Config) -> None:
    script = ("from contenox.config import load_config\nfrom contenox.client import NodeClient, ensure_node\n"
              "print(NodeClient(ensure_node(load_config())).call('status')['pid'])\n")
    racers = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(4)]
    pids = {int(p.communicate(timeout=120)[0].strip()) for p in racers}
    assert pids == {node_pid(node_config)}
    assert (Path(node_config.logs_dir) / "node.log").read_text().count("serving on") == 1


def _older_build_node(config: Config, tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A node running from a copy of the package (new mtimes: another build, as after an upgrade)."""
    import shutil

    import contenox

    copy = tmp_path / "older"
    shutil.copytree(Path(contenox.__file__).parent, copy / "contenox", copy_function=shutil.copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(copy))
    older = subprocess.Popen([sys.executable, "-m", "contenox", "node", "serve"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    build = subprocess.run([sys.executable, "-c", "from contenox.buildinfo import build_id; print(build_id())"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    deadline = time.monotonic() + 60
    while not (node_pid(config) == older.pid and socket_path(config).exists()):
        assert older.poll() is None and time.monotonic() < deadline, "the older node did not start"
        time.sleep(0.05)
    return older, build


def test_a_cli_of_another_build_restarts_an_idle_node_and_leaves_a_busy_one(node_config: Config,
                                                                             tmp_path: Path) -> None:
    from contenox.buildinfo import build_id

    repo = tmp_path / "repo"
    repo.mkdir()
    older, theirs = _older_build_node(node_config, tmp_path / "a")
    assert theirs != build_id()
    busy = RawConnection(node_config)  # another client holds a connection: the node is in use
    shown = subprocess.run([sys.executable, "-m", "contenox", "threads", "--cwd", str(repo)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f"the running node (pid {older.pid}) is build {theirs}" in shown.stderr and "in use" in shown.stderr
    assert older.poll() is None and node_pid(node_config) == older.pid
    status = subprocess.run([sys.executable, "-m", "contenox", "node", "status"], capture_output=True, text=True,
                            timeout=60)
    assert f"build {theirs}" in status.stdout and f"this CLI is build {build_id()}" in status.stdout
    busy.close()

    shown = subprocess.run([sys.executable, "-m", "contenox", "threads", "--cwd", str(repo)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f"restarted the node: it was build {theirs}, this is {build_id()}" in shown.stderr
    assert older.wait(30) == 0  # stopped cleanly
    assert "no threads yet" in shown.stdout  # answered by a node of this build
    assert client.call(node_config, "status", start=False)[1]["build"] == build_id()


def test_the_pins_command_lists_adds_and_removes_and_names_a_refused_file(node_config: Config,
                                                                          tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    (repo / "src" / "b.py").write_text("B = 2\n")
    (repo / "src" / "blob.bin").write_bytes(b"\x00\x01binary")

    def pins(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "contenox", "pins", *args], cwd=repo / "src",
                              capture_output=True, text=True, timeout=120)

    empty = pins()
    assert empty.returncode == 0 and f"nothing pinned in {repo}" in empty.stdout
    added = pins("add", "a.py", "blob.bin", "b.py")  # relative to where the user is
    assert added.returncode == 2
    assert "contenox: invalid_request: cannot pin" in added.stderr and "a binary file" in added.stderr
    assert added.stdout.splitlines()[1:] == ["  src/a.py", "  src/b.py"]  # the others went through
    removed = pins("rm", "a.py", "--json")
    assert removed.returncode == 0
    assert msgspec.json.decode(removed.stdout) == {"root": str(repo), "pins": ["src/b.py"]}
    assert pins("add").returncode == 2


def test_model_use_sets_the_default_and_the_running_node_switches(node_config: Config) -> None:
    models = node_config.models_dir
    (models / "alt").symlink_to((models / "smollm2-135m").resolve(), target_is_directory=True)
    client.ensure_node(node_config).close()
    first = node_pid(node_config)
    assert first is not None

    def use(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "contenox", "model", "use", name], capture_output=True,
                              text=True, timeout=120)

    unknown = use("nope")
    assert unknown.returncode == 2 and "model_not_found" in unknown.stderr
    editor = RawConnection(node_config)  # another client (an editor window) stays connected throughout
    switched = use("alt")
    assert switched.returncode == 0, switched.stderr
    assert switched.stdout.splitlines() == [
        f"default model: alt (set in {node_config.root / 'config.toml'})",
        "the running node now serves alt (loaded with the next question)"]
    assert node_pid(node_config) == first  # no restart: the node switched
    assert editor.request(1, "models")["result"] == {"current": "alt", "installed": ["alt", "smollm2-135m"]}
    refused = editor.request(2, "use_model", {"name": "nope"})["error"]
    assert refused["data"]["kind"] == "model_not_found"
    editor.close()
    assert client.call(node_config, "status")[1]["model"]["name"] == "alt"
    assert 'default = "alt"' in (node_config.root / "config.toml").read_text()
