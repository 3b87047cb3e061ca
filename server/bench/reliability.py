"""``contenox bench reliability``: the fault campaign (load, cancels, fuzz, relay fuzz, memory) as a reproducible report.

Against a private real node (its own home and socket, the model given, 4-token answers):
- **load**: ``--windows`` LSP windows hovering their own functions and ``--threads`` ACP sessions asking short
  questions, all at once; every answer is matched to its request (id and content): answered / lost / misrouted;
- **cancels**: ``--cancels`` ACP turns of 200 tokens cancelled at random moments: each must end (cancelled, or
  finished before the cancel landed), none may hang;
- **fuzz**: ``--fuzz`` seeded messages per protocol, a probe after each (:mod:`contenox.bench.fuzz`);
- **relay fuzz**: ``--relay-fuzz`` seeded messages through each editor-side relay (``contenox lsp --stdio``,
  ``contenox acp`` as editors run them), with what only the relay must track mixed in; a relay that exits is a
  failure (``exits``);
- **memory**: ``--memory-rounds`` more rounds of a lighter load (``--memory-requests`` hovers, ``--memory-prompts``
  questions) and a tenth of the fuzz, the node's and the engine process's RSS after
  each: whether the node levels off (its growth per round over the second half) and the engine stays within its
  weights plus the KV cache it was given;
- **bad inputs**: a list of known-bad requests (special, binary, huge and outside pins, ``/`` as a workspace, an
  unknown session, a hover outside the window's folders, ...): each must get a structured error;
- **unopened files**: LSP hover, inline completion and "Explain selection" on files the editor has not opened (a
  FIFO, a file over ``workspace.max_file_bytes``, a symlink to ``/dev/zero``): each must get a structured error
  while ``status`` on another connection keeps answering within 2 s;
- **crashes**: clients killed mid-turn (connections leaked), the engine killed mid-turn (EngineCrashed, the next
  turn's success and time), the node killed (the next call's recovery time, the session's turn count kept).
Output: ``<out>/<date>-reliability-<model>.json`` and the figures as a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from contenox.bench.fuzz import FrameConnection, fuzz_protocol, fuzz_relay
from contenox.client import call
from contenox.config import Config, load_config
from contenox.errors import ContenoxError
from contenox.runtime_ov import ModelStore

__all__ = ["main"]


def _frame(protocol: str, message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return body + b"\n" if protocol == "acp" else b"Content-Length: %d\r\n\r\n" % len(body) + body


class _Client:
    """A raw protocol connection that matches answers to requests by id (notifications are skipped)."""

    def __init__(self, config: Config, protocol: str) -> None:
        self.conn = FrameConnection(config, protocol)
        self.conn.sock.settimeout(300)
        self.protocol = protocol
        self.next_id = 1

    def request(self, method: str, params: Any) -> dict[str, Any] | None:
        msg_id = self.next_id
        self.next_id += 1
        self.conn.send(_frame(self.protocol, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        while True:
            answer = self.conn.receive()
            if answer is None:
                return None
            if answer.get("id") == msg_id:
                return answer
            if "id" in answer and "method" not in answer:  # an answer to something else: misrouted
                return {"misrouted": answer}

    def notify(self, method: str, params: Any) -> None:
        self.conn.send(_frame(self.protocol, {"jsonrpc": "2.0", "method": method, "params": params}))

    def close(self) -> None:
        self.conn.close()


def _repo(root: Path, windows: int) -> Path:
    root.mkdir(parents=True)
    for w in range(windows):
        (root / f"mod_{w}.py").write_text("".join(f"def func_{w}_{k}(x):\n    return x + {k}\n\n\n"
                                                  for k in range(20)), encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _lsp_window(config: Config, repo: Path, w: int, requests: int, out: dict[str, int]) -> None:
    client = _Client(config, "lsp")
    try:
        client.request("initialize", {"processId": None, "capabilities": {}, "rootUri": repo.as_uri(),
                                      "workspaceFolders": [{"uri": repo.as_uri(), "name": "repo"}]})
        client.notify("initialized", {})
        uri = (repo / f"mod_{w}.py").as_uri()
        for i in range(requests):
            k = i % 20
            answer = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                           "position": {"line": 4 * k, "character": 6}})
            if answer is None:
                out["lost"] += 1
            elif "misrouted" in answer or f"func_{w}_{k}" not in json.dumps(answer.get("result")):
                out["misrouted"] += 1
            else:
                out["answered"] += 1
    finally:
        client.close()


def _acp_thread(config: Config, repo: Path, t: int, prompts: int, out: dict[str, int]) -> None:
    client = _Client(config, "acp")
    try:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        new = client.request("session/new", {"cwd": str(repo), "mcpServers": []}) or {}
        session = (new.get("result") or {}).get("sessionId")
        for i in range(prompts):
            answer = client.request("session/prompt", {"sessionId": session, "_meta": {"contenox": {"maxNewTokens": 2}},
                                                       "prompt": [{"type": "text", "text": f"thread {t} q{i}: add?"}]})
            if answer is None:
                out["lost"] += 1
            elif "misrouted" in answer or (answer.get("result") or {}).get("stopReason") not in ("end_turn",
                                                                                                 "max_tokens"):
                out["misrouted"] += 1
            else:
                out["answered"] += 1
    finally:
        client.close()


def _load(config: Config, repo: Path, windows: int, threads: int, requests: int, prompts: int) -> dict[str, Any]:
    out = {"answered": 0, "lost": 0, "misrouted": 0}
    workers = [threading.Thread(target=_lsp_window, args=(config, repo, w, requests, out)) for w in range(windows)]
    workers += [threading.Thread(target=_acp_thread, args=(config, repo, t, prompts, out)) for t in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(1800)
    return {"windows": windows, "acp_threads": threads, "requests": windows * requests + threads * prompts, **out,
            "seconds": round(time.monotonic() - started, 1)}


def _rss_mb(pid: int | None) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _memory(config: Config, repo: Path, rounds: int, load: tuple[int, int, int, int], fuzz: int,
            seed: int) -> dict[str, Any]:
    samples = []
    for index in range(rounds):
        _load(config, repo, *load)
        for protocol in ("rpc", "lsp", "acp"):
            fuzz_protocol(config, protocol, seed=seed + index, count=fuzz)
        status = _status(config)
        cache = status.get("cache") or {}
        samples.append({"round": index + 1, "node_rss_mb": _rss_mb(status["pid"]),
                        "engine_rss_mb": _rss_mb(status["engine"]["pid"]),
                        "kv_cache_used_tokens": cache.get("cache_used_tokens"),
                        "turns": sum(w["turns"] for w in status["workspaces"])})
    node = [s["node_rss_mb"] for s in samples if s["node_rss_mb"] is not None]
    half = node[(len(node) - 1) // 2:]
    cache = _status(config).get("cache") or {}
    kv_mb = (cache.get("cache_capacity_tokens") or 0) * (cache.get("kv_bytes_per_token") or 0) / 2**20
    return {"rounds": samples, "load_per_round": {"windows": load[0], "acp_threads": load[1], "hovers": load[2],
                                                  "prompts": load[3], "fuzz_per_protocol": fuzz},
            "node_rss_mb_first": node[0] if node else None, "node_rss_mb_last": node[-1] if node else None,
            "node_growth_mb_per_round_second_half": round((half[-1] - half[0]) / max(1, len(half) - 1), 2)
            if len(half) > 1 else None,
            "engine_rss_mb_last": samples[-1]["engine_rss_mb"] if samples else None,
            "kv_cache_capacity_mb": round(kv_mb, 1)}


def _cancels(config: Config, repo: Path, count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    client = _Client(config, "acp")
    result = {"tried": count, "cancelled": 0, "finished_first": 0, "hung": 0}
    try:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = (client.request("session/new", {"cwd": str(repo), "mcpServers": []}) or {})["result"]["sessionId"]
        for i in range(count):
            msg_id = 1000 + i
            client.conn.send(_frame("acp", {"jsonrpc": "2.0", "id": msg_id, "method": "session/prompt", "params": {
                "sessionId": session, "_meta": {"contenox": {"maxNewTokens": 200}},
                "prompt": [{"type": "text", "text": f"Write a long story number {i}."}]}}))
            time.sleep(rng.uniform(0.0, 1.5))
            client.notify("session/cancel", {"sessionId": session})
            client.conn.sock.settimeout(120)
            while True:
                answer = client.conn.receive()
                if answer is None:
                    result["hung"] += 1
                    return result
                if answer.get("id") == msg_id:
                    reason = (answer.get("result") or {}).get("stopReason")
                    result["cancelled" if reason == "cancelled" else "finished_first"] += 1
                    break
    except (TimeoutError, OSError):
        result["hung"] += 1
    finally:
        client.close()
    return result


def _bad_inputs(config: Config, repo: Path, scratch: Path) -> dict[str, Any]:
    os.mkfifo(scratch / "fifo")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 64)
    (repo / "latin1.txt").write_bytes(b"caf\xe9\n")
    (repo / "huge.py").write_bytes(b"x = 1\n" * 2_000_000)
    (repo / "fifo").symlink_to(scratch / "fifo")
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("pin a FIFO", "pin", {"cwd": str(repo), "path": str(repo / "fifo")}),
        ("pin a binary file", "pin", {"cwd": str(repo), "path": str(repo / "blob.bin")}),
        ("pin a non-UTF-8 file", "pin", {"cwd": str(repo), "path": str(repo / "latin1.txt")}),
        ("pin a 12 MB file", "pin", {"cwd": str(repo), "path": str(repo / "huge.py")}),
        ("pin outside the workspace", "pin", {"cwd": str(repo), "path": "/etc/passwd"}),
        ("ask with / as the workspace", "ask", {"cwd": "/", "prompt": "hi"}),
        ("ask in a missing directory", "ask", {"cwd": str(scratch / "gone"), "prompt": "hi"}),
        ("ask an empty question", "ask", {"cwd": str(repo), "prompt": "  "}),
        ("ask with a bad max_new_tokens", "ask", {"cwd": str(repo), "prompt": "hi", "max_new_tokens": -3}),
        ("an unknown method", "frobnicate", {}),
    ]
    results = []
    for name, method, params in cases:
        client = _Client(config, "rpc")
        try:
            answer = client.request(method, params) or {}
        finally:
            client.close()
        error = answer.get("error") or {}
        structured = isinstance(error.get("code"), int) and bool(error.get("message"))
        results.append({"case": name, "structured_error": structured, "kind": (error.get("data") or {}).get("kind")})
    acp = _Client(config, "acp")
    try:
        acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        unknown = acp.request("session/prompt", {"sessionId": "acp-nope", "prompt": [{"type": "text", "text": "x"}]})
    finally:
        acp.close()
    error = (unknown or {}).get("error") or {}
    results.append({"case": "ACP prompt to an unknown session", "structured_error": bool(error.get("message")),
                    "kind": None})
    return {"tried": len(results), "handled": sum(1 for r in results if r["structured_error"]), "cases": results}


_STATUS_BOUND_S = 2.0
"""How long ``status`` may take while a bad file is being read (before the second fault campaign's fix it never answered
on a FIFO): generous for a loaded machine."""
_SPAN = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
_UNOPENED: list[tuple[str, str, Any]] = [
    ("hover", "textDocument/hover", lambda uri: {"textDocument": {"uri": uri},
                                                 "position": {"line": 0, "character": 2}}),
    ("inline completion", "textDocument/inlineCompletion", lambda uri: {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}, "context": {"triggerKind": 1}}),
    ("explain selection", "workspace/executeCommand", lambda uri: {
        "command": "contenox.explainSelection", "arguments": [{"uri": uri, "range": _SPAN}]}),
]


def _bad_file(kind: str, path: Path) -> None:
    if kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a 3 MB file":
        line = b"value = 'a line of a generated file that is far too big to read whole'\n"
        path.write_bytes(line * (3_000_000 // len(line)))
    else:
        path.symlink_to("/dev/zero")


def _release_fifo(path: Path) -> None:
    """A reader blocked on the FIFO (the node, were it to read it) gets end-of-file."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def _unopened_files(config: Config, scratch: Path) -> dict[str, Any]:
    """Each request on each bad file from an LSP window, ``status`` timed on its own connection meanwhile."""
    repo = _repo(scratch / "unopened", 1)
    results = []
    for index, kind in enumerate(("a FIFO", "a 3 MB file", "a symlink to /dev/zero")):
        bad = repo / f"bad_{index}.py"
        _bad_file(kind, bad)
        client = _Client(config, "lsp")
        client.conn.sock.settimeout(60)
        try:
            client.request("initialize", {"processId": None, "capabilities": {}, "rootUri": repo.as_uri(),
                                          "workspaceFolders": [{"uri": repo.as_uri(), "name": "repo"}]})
            client.notify("initialized", {})
            for name, method, params in _UNOPENED:
                answers: list[dict[str, Any] | None] = []
                request = threading.Thread(target=_request_into,
                                           args=(client, method, params(bad.as_uri()), answers))
                request.start()
                took: list[float] = []
                deadline = time.monotonic() + 60
                while True:  # at least once, and for as long as the request is pending
                    started = time.monotonic()
                    try:
                        _status(config)
                        took.append(time.monotonic() - started)
                    except (ContenoxError, OSError):
                        took.append(float("inf"))
                    if not request.is_alive() or time.monotonic() > deadline:
                        break
                request.join(60)
                answer = answers[0] if answers else None
                error = (answer or {}).get("error") or {}
                data: dict[str, Any] = error["data"] if isinstance(error.get("data"), dict) else {}
                results.append({"case": f"{name} on {kind}", "structured_error": isinstance(error.get("code"), int)
                                and bool(error.get("message")), "kind": data.get("kind"),
                                "reason": (data.get("details") or {}).get("reason"),
                                "status_answers": len(took), "status_max_ms": round(1000.0 * max(took), 1),
                                "status_answered": max(took) < _STATUS_BOUND_S})
        finally:
            client.close()
            if kind == "a FIFO":
                _release_fifo(bad)
    return {"tried": len(results), "handled": sum(1 for r in results if r["structured_error"]),
            "status_answered": sum(1 for r in results if r["status_answered"]),
            "status_bound_ms": 1000.0 * _STATUS_BOUND_S, "cases": results}


def _request_into(client: _Client, method: str, params: Any, answers: list[dict[str, Any] | None]) -> None:
    try:
        answers.append(client.request(method, params))
    except (TimeoutError, OSError, ValueError):
        answers.append(None)


def _status(config: Config) -> dict[str, Any]:
    result: dict[str, Any] = call(config, "status")[1]
    return result


def _crashes(config: Config, repo: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    baseline = _status(config)["clients"]
    leaked = 0
    for _ in range(3):  # clients killed mid-turn
        proc = subprocess.Popen([sys.executable, "-m", "contenox", "ask", "--cwd", str(repo),
                                 "Write a long story."], env=os.environ | {"CONTENOX_HOME": str(config.root)},
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.read(1)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _status(config)["clients"] > baseline:
            time.sleep(0.2)
        leaked += max(0, _status(config)["clients"] - baseline)
    out["clients_killed_mid_turn"] = {"killed": 3, "connections_leaked": leaked}
    engine_pid = _status(config)["engine"]["pid"]
    errors: list[str] = []
    decoding = threading.Event()

    def long_turn() -> None:
        def heard(method: str, _params: Any) -> None:
            if method == "chunk":
                decoding.set()

        try:
            call(config, "ask", {"cwd": str(repo), "prompt": "Write a long story.", "max_new_tokens": 300},
                 on_notification=heard)
        except ContenoxError as exc:  # the structured error the killed engine produces (its kind, as the node sent it)
            errors.append(str(exc.to_dict()["kind"]))
        except Exception as exc:
            errors.append(type(exc).__name__)

    turn = threading.Thread(target=long_turn)
    turn.start()
    decoding.wait(120)  # kill it while it answers, not before or after
    if engine_pid and engine_pid != _status(config)["pid"]:
        os.kill(engine_pid, signal.SIGKILL)
    turn.join(300)
    started = time.monotonic()
    call(config, "ask", {"cwd": str(repo), "prompt": "add?", "max_new_tokens": 2})
    out["engine_killed_mid_turn"] = {"turn_error": errors[0] if errors else None,
                                     "next_turn_ms": round((time.monotonic() - started) * 1000.0, 1),
                                     "restarts": _status(config)["engine"]["restarts"]}
    before = _status(config)
    turns_before = next((w["turns"] for w in before["workspaces"] if w["root"] == str(repo)), 0)
    os.kill(before["pid"], signal.SIGKILL)
    started = time.monotonic()
    after = _status(config)  # starts a new node
    recovered_ms = (time.monotonic() - started) * 1000.0
    turns_after = next((w["turns"] for w in after["workspaces"] if w["root"] == str(repo)), 0)
    out["node_killed"] = {"recovery_ms": round(recovered_ms, 1), "new_pid": after["pid"] != before["pid"],
                          "turns_kept": turns_after == turns_before}
    return out


def main(config: Config, argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="contenox bench reliability", description=__doc__.split("\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--windows", type=int, default=8)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--requests", type=int, default=120, help="hovers per LSP window")
    p.add_argument("--prompts", type=int, default=10, help="questions per ACP thread")
    p.add_argument("--cancels", type=int, default=20)
    p.add_argument("--fuzz", type=int, default=1000, help="fuzzed messages per protocol")
    p.add_argument("--relay-fuzz", type=int, default=300, help="fuzzed messages through each editor-side relay")
    p.add_argument("--memory-rounds", type=int, default=8, help="rounds of load + fuzz with RSS sampled (0: off)")
    p.add_argument("--memory-requests", type=int, default=40, help="hovers per LSP window in each memory round")
    p.add_argument("--memory-prompts", type=int, default=2, help="questions per ACP thread in each memory round")
    p.add_argument("--seed", type=int, default=20261130)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--tag", default="", help="appended to the report's file name (a reduced run: quick)")
    ns = p.parse_args(argv)
    model = ModelStore(config.models_dir).get(ns.model)
    scratch = Path(tempfile.mkdtemp(prefix="cx-rel-"))
    sockets = Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp"))
    home = scratch / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / model.name).symlink_to(Path(model.path), target_is_directory=True)
    (home / "config.toml").write_text(f'[model]\ndefault = "{model.name}"\n\n[engine]\nmax_new_tokens = 4\n'
                                      f'cache_size_gb = 1.0\n\n[node]\nidle_exit_s = 600\nsocket_dir = "{sockets}"\n',
                                      encoding="utf-8")
    node = load_config(home)
    repo = _repo(scratch / "repo", ns.windows)

    def say(line: str) -> None:
        print(f"[bench reliability] {line}", flush=True)

    report: dict[str, Any] = {"model": model.name, "date": date.today().isoformat(),
                              "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}}
    section = "start"
    try:
        call(node, "ask", {"cwd": str(repo), "prompt": "hi", "max_new_tokens": 1})
        pid = _status(node)["pid"]
        section = "load"
        report["load"] = _load(node, repo, ns.windows, ns.threads, ns.requests, ns.prompts)
        say(f"load: {report['load']}")
        section = "cancels"
        report["cancels"] = _cancels(node, repo, ns.cancels, ns.seed)
        say(f"cancels: {report['cancels']}")
        section = "fuzz"
        report["fuzz"] = [msgspec.to_builtins(fuzz_protocol(node, proto, seed=ns.seed, count=ns.fuzz))
                          for proto in ("rpc", "lsp", "acp")]
        say(f"fuzz: {report['fuzz']}")
        section = "relay fuzz"
        relay_env = {"CONTENOX_HOME": str(home)}
        report["relay_fuzz"] = [msgspec.to_builtins(fuzz_relay(relay_env, proto, seed=ns.seed, count=ns.relay_fuzz))
                                for proto in ("lsp", "acp")]
        say(f"relay fuzz: {report['relay_fuzz']}")
        section = "memory"
        if ns.memory_rounds:
            report["memory"] = _memory(node, repo, ns.memory_rounds,
                                       (ns.windows, ns.threads, ns.memory_requests, ns.memory_prompts),
                                       max(1, ns.fuzz // 10), ns.seed)
            say(f"memory: node {report['memory']['node_rss_mb_first']} -> {report['memory']['node_rss_mb_last']} "
                f"MB ({report['memory']['node_growth_mb_per_round_second_half']} MB/round over the second half); "
                f"engine {report['memory']['engine_rss_mb_last']} MB with a "
                f"{report['memory']['kv_cache_capacity_mb']} MB KV cache")
        report["node_survived_load_and_fuzz"] = _status(node)["pid"] == pid
        section = "bad inputs"
        report["bad_inputs"] = _bad_inputs(node, repo, scratch)
        say(f"bad inputs: {report['bad_inputs']['handled']}/{report['bad_inputs']['tried']} structured")
        section = "unopened files"
        report["unopened_files"] = _unopened_files(node, scratch)
        unopened = report["unopened_files"]
        say(f"unopened files: {unopened['handled']}/{unopened['tried']} structured, status answered during "
            f"{unopened['status_answered']}/{unopened['tried']}")
        section = "crashes"
        report["crashes"] = _crashes(node, repo)
        say(f"crashes: {report['crashes']}")
    except ContenoxError as exc:  # the report says which section could not finish, and why
        report["error"] = f"{section}: {exc.message}"
        say(f"stopped in {report['error']}")
    finally:
        call(node, "stop", start=False)
        shutil.rmtree(scratch, ignore_errors=True)
    if "error" not in report:
        load, cancels = report["load"], report["cancels"]
        report["figures"] = {
            "requests": load["requests"], "lost": load["lost"], "misrouted": load["misrouted"],
            "node_crashes": 0 if report["node_survived_load_and_fuzz"] else 1,
            "cancels_honoured_pct": round(100.0 * (cancels["cancelled"] + cancels["finished_first"])
                                          / max(1, cancels["tried"]), 1),
            "fuzzed_messages": sum(f["sent"] for f in report["fuzz"]),
            "fuzz_probes_lost": sum(f["probes_lost"] for f in report["fuzz"]),
            "relay_fuzzed_messages": sum(f["sent"] for f in report["relay_fuzz"]),
            "relay_probes_lost": sum(f["probes_lost"] for f in report["relay_fuzz"]),
            "relay_exits": sum(f["exits"] for f in report["relay_fuzz"]),
            "bad_inputs_structured": f"{report['bad_inputs']['handled']}/{report['bad_inputs']['tried']}",
            "unopened_files_structured": f"{report['unopened_files']['handled']}/{report['unopened_files']['tried']}",
            "status_during_bad_reads": f"{report['unopened_files']['status_answered']}/"
                                       f"{report['unopened_files']['tried']}",
            "connections_leaked": report["crashes"]["clients_killed_mid_turn"]["connections_leaked"],
        }
        if "memory" in report:
            report["figures"]["node_rss_mb"] = f"{report['memory']['node_rss_mb_first']} -> " \
                                               f"{report['memory']['node_rss_mb_last']}"
            report["figures"]["node_rss_growth_mb_per_round"] = \
                report["memory"]["node_growth_mb_per_round_second_half"]
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{report['date']}-reliability-{model.name}{'-' + ns.tag if ns.tag else ''}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for key, value in report.get("figures", {}).items():
        print(f"{key:28} {value}")
    say(f"wrote {path}")
    return 1 if "error" in report else 0
