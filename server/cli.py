"""The ``contenox`` command line.

``contenox "question"`` (or ``contenox ask``) asks about the current repository through the node and
prints the explain-context table; ``contenox model ...`` manages the model store; ``contenox lsp`` and
``contenox acp`` are the stdio front doors for editors; ``contenox node ...`` manages the daemon.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from contenox import __version__
from contenox.config import Config, config_path, load_config, render_config
from contenox.errors import ContenoxError

if TYPE_CHECKING:
    from contenox.runtime_ov.store import ModelStore

__all__ = ["main"]

_COMMANDS = {"init", "ask", "model", "node", "lsp", "acp", "explain-context", "bench", "eval", "config", "threads",
             "certify", "pins", "verify"}
_SUBCOMMANDS = {"status": "node status", "stop": "node stop", "serve": "node serve", "pull": "model pull",
                "list": "model list", "models": "model list", "explain": "explain-context"}
"""Words users type at the top level that live one level down (for "did you mean")."""
_NODE_CLIENTS = {"ask", "threads", "explain-context", "lsp", "acp", "pins"}
"""Commands that talk to the node: they first check it is this build (``node status`` shows both builds)."""


def _fail(exc: ContenoxError, json_output: bool) -> int:
    error = exc.to_dict()
    if json_output:
        print(msgspec.json.encode({"error": error}).decode())
    print(f"contenox: {error['kind']}: {exc.message}", file=sys.stderr)
    return 2


def _explain_table(explain: Any) -> str:
    from contenox.planner import Explain, render_explain

    return render_explain(msgspec.convert(explain, type=Explain))


def _explain_line(explain: Any) -> str:
    """The one-line cache summary under an answer (``--explain`` prints the whole table)."""
    totals = explain["totals"]
    ttft = f" · first token {explain['ttft_ms'] / 1000:.1f} s" if explain.get("ttft_ms") is not None else ""
    notes = f" · {len(explain['notes'])} note(s)" if explain.get("notes") else ""
    return (f"{totals['hit_pct']:.0f}% cached · {totals['cached']} of {totals['tokens']} prompt tokens{ttft} · "
            f"turn {explain['turn']}{notes}  (`contenox explain-context` for the segments)")


_STEPS = {"queued": "waiting for another turn", "indexing": "indexing the workspace",
          "prefill": "reading the context", "decode": "answering"}
"""What the spinner says for each turn state the node reports."""


class _AnswerView:
    """The answer as it streams: on a terminal a spinner naming the step until the first token, then the
    answer rendered as markdown as it grows; piped, the plain text."""

    def __init__(self, *, rich: bool) -> None:
        self.rich = rich
        self.text = ""
        self._started = time.monotonic()
        self._live: Any = None
        self._status: Any = None
        self._paused = False
        if rich:
            from rich.console import Console

            self._console = Console()
            self._status = self._console.status("starting the node", spinner="dots")
            self._status.start()

    def state(self, state: str, detail: str = "") -> None:
        if self._status is not None and self._paused:
            self._status.start()
            self._paused = False
        if self._status is not None and state in _STEPS:
            said = f"{_STEPS[state]}: {detail}" if detail else _STEPS[state]
            self._status.update(f"{said} · {time.monotonic() - self._started:.1f} s")

    at_line_start = True
    """Plain output: whether the last thing written ended its line (a tool line starts on a line of its own)."""

    def pause(self) -> None:
        """Stop drawing (the spinner, the live answer) while the user is asked something; the next state draws
        the spinner again, the next chunk the answer (below what was printed meanwhile)."""
        if self._status is not None:
            self._status.stop()
            self._paused = True
        if self._live is not None:
            self._live.stop()
            self._live = None

    def tool(self, title: str, ok: bool) -> None:
        """A tool call of an agent turn ended: one line (on a terminal above the spinner)."""
        line = f"{'·' if ok else '✗'} {title}"
        if self._status is not None:
            self._console.print(line, style="dim" if ok else "red", highlight=False)
        elif self.rich:
            self._console.print(line, highlight=False)
        else:
            sys.stdout.write(("" if self.at_line_start else "\n") + line + "\n")
            sys.stdout.flush()
            self.at_line_start = True

    def chunk(self, text: str) -> None:
        if not self.rich:
            sys.stdout.write(text)
            sys.stdout.flush()
            if text:
                self.at_line_start = text.endswith("\n")
            return
        from rich.live import Live
        from rich.markdown import Markdown

        self.text += text
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._live is None:
            self._live = Live(Markdown(self.text), console=self._console, refresh_per_second=8,
                              vertical_overflow="visible")
            self._live.start()
        else:
            self._live.update(Markdown(self.text))

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
        if self._live is not None:
            self._live.stop()


def _config(args: argparse.Namespace) -> Config:
    config = load_config()
    for line in config.warnings:
        print(f"contenox: config: {line}", file=sys.stderr)
    return config


def _store(config: Config) -> ModelStore:
    from contenox.runtime_ov.store import ModelStore

    return ModelStore(config.models_dir)


# -- commands ------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from contenox._progress import RichProgress

    config = _config(args)
    path = config_path(config.root)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_config(config), encoding="utf-8")
        print(f"wrote {path}")
    name = args.model or config.model.default
    model = _store(config).ensure(name, RichProgress())
    print(f"model {model.name} ready at {model.path}")
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    from contenox._progress import RichProgress

    config = _config(args)
    store = _store(config)
    if args.model_cmd == "pull":
        model = store.pull(args.name, RichProgress(), force=args.force)
        print(f"{model.name}: {model.profile.format}, {model.size_bytes / 1e6:.1f} MB, from {model.source}")
    elif args.model_cmd == "list":
        models = store.list()
        if args.json:
            print(msgspec.json.encode(models).decode())
            return 0
        from rich.console import Console
        from rich.table import Table

        from contenox.runtime_ov.certification import read_certification

        table = Table("name", "format", "size", "source", "context (tested)", "tool calls")
        for m in models:
            cert = read_certification(Path(m.path), m.profile.model_digest)
            tools = ("not tested (contenox certify)" if cert is None else
                     f"{'certified' if cert.certified else 'not certified'}: {100 * cert.valid_call_rate:.0f}% "
                     f"valid, {100 * cert.false_call_rate:.0f}% false"
                     + (" (on the reference machine)" if cert.reference else ""))
            table.add_row(m.name, m.profile.format, f"{m.size_bytes / 1e6:.1f} MB", m.source,
                          f"{m.profile.default_context} ({m.profile.max_tested_context})", tools)
        installed = {m.name for m in models}
        Console().print(table)
        available = [n for n in store.catalog.names() if n not in installed]
        if available:
            print("available: " + ", ".join(available))
    elif args.model_cmd == "use":
        from contenox.client import switch_node_model
        from contenox.config import set_default_model

        model = store.get(args.name)  # installed, or model_not_found with how to pull it
        path = set_default_model(config.root, model.name)
        print(f"default model: {model.name} (set in {path})")
        said = switch_node_model(config, model.name)
        if said:
            print(said)
    elif args.model_cmd == "rm":
        freed = store.remove(args.name)
        print(f"removed {args.name}, freed {freed / 1e6:.1f} MB")
    elif args.model_cmd == "import":
        model = store.import_path(Path(args.path), args.name)
        print(f"imported {model.name} ({model.profile.format}, tested context {model.profile.max_tested_context})")
    return 0


def run_command_asked(command: str, cwd: str, timeout_s: float, answer: Callable[[str], str] = input) -> dict[str, Any]:
    """An agent turn's command: run in ``cwd`` only if the user says yes, its output shown as it comes; what the
    node is told (``{ran, exit_code, output, reason}``)."""
    print(f"\ncontenox wants to run, in {cwd}:\n  $ {command}", flush=True)
    try:
        said = answer("Run it? [y/N] ").strip().lower()
    except EOFError:
        said = ""
    if said not in ("y", "yes"):
        return {"ran": False, "reason": "the user did not allow it"}
    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    output: list[str] = []
    timer = threading.Timer(timeout_s, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            output.append(line)
        code = proc.wait()
    finally:
        timer.cancel()
    text = "".join(output)[-64_000:]
    if code == -signal.SIGKILL:
        return {"ran": False, "output": text, "reason": f"it ran past {timeout_s:g} s (tools.max_seconds) and was stopped"}
    print(f"[exit code {code}]", flush=True)
    return {"ran": True, "exit_code": code, "output": text}


def cmd_ask(args: argparse.Namespace) -> int:
    from contenox.client import call

    config = _config(args)
    prompt = " ".join(args.prompt).strip()
    if not prompt:
        print("contenox: ask: empty question", file=sys.stderr)
        return 2
    cwd = Path(args.cwd).resolve()

    view = _AnswerView(rich=sys.stdout.isatty() and not args.json)

    def on_notification(method: str, params: Any) -> None:
        if args.json or not isinstance(params, dict):
            return
        if method == "chunk":
            view.chunk(str(params.get("text", "")))
        elif method == "state":
            view.state(str(params.get("state", "")), str(params.get("detail", "")))
        elif method == "tool" and params.get("status") != "in_progress":
            view.tool(str(params.get("title", "")), params.get("status") == "completed")

    pinned = [str((cwd / p).resolve()) for p in args.pin]  # as the user typed them: relative to cwd
    asks = sys.stdin.isatty() and sys.stdout.isatty() and not args.json  # someone to ask before a command runs

    def on_request(method: str, params: Any) -> Any:
        if not isinstance(params, dict):
            return None
        if method == "allow_check":
            view.pause()
            return {"allowed": check_allowed(str(params.get("command", "")), str(params.get("cwd", cwd)),
                                             scope=str(params.get("scope") or ""))}
        if method != "run_command":
            return None
        view.pause()
        return run_command_asked(str(params.get("command", "")), str(params.get("cwd", cwd)),
                                 config.tools.max_seconds)

    # --verify: consented for this question; --no-verify, or nobody to ask (piped, --json): never runs
    verify = True if args.verify else (False if args.verify is False or not asks else None)
    try:
        _, result = call(config, "ask", {"cwd": str(cwd), "prompt": prompt, "pins": pinned, "json": args.json,
                                         "thread": args.thread, "run_commands": asks, "verify": verify,
                                         "env": dict(os.environ)},
                         on_notification=on_notification, on_request=on_request)
    finally:
        view.close()
    if args.json:  # the diffs, not the files' whole texts (those are for --apply)
        shown = {**result, "edits": [{k: v for k, v in e.items() if k not in ("old_text", "new_text")}
                                     for e in result.get("edits") or []]}
        print(msgspec.json.encode(shown).decode())
    else:
        print("\n")
        offered = (result.get("verification") or {}).get("chosen")
        if result.get("finish_reason") == "length" and offered in (None, 1):  # not of another candidate's answer
            print(f"(the answer was cut at the length limit; `contenox ask --thread {args.thread} continue` "
                  "continues it)\n")
        _print_verification(result, every=args.explain)
        _print_edits(result)
        print(_explain_table(result["explain"]) if args.explain else _explain_line(result["explain"]))
    if args.apply and result.get("edits"):
        return _apply_edits(Path(result["explain"]["workspace"]), result["edits"])
    return 0


def check_allowed(command: str, cwd: str, answer: Callable[[str], str] = input, *, scope: str = "") -> bool:
    """The user's word on running a verification's check command in ``cwd`` (remembered by the node); ``scope``:
    what else the answer covers, said with the question."""
    also = f"\nallowing it also allows {scope}" if scope else ""
    print(f"\ncontenox wants to check its change by running, in a scratch copy of {cwd}:\n  $ {command}{also}\n"
          "(your files are not touched; the answer is remembered for this workspace: `contenox verify off`)",
          flush=True)
    try:
        said = answer("Allow it? [y/N] ").strip().lower()
    except EOFError:
        said = ""
    return said in ("y", "yes")


_LISTED = 8
"""Candidates a verdict lists one by one; past it, counts per prompt and the passing ones (``--explain``: all)."""


def _print_verification(result: dict[str, Any], every: bool = False) -> None:
    """The verdict of a change turn's check and its candidates: each one when there are few (or ``every``),
    otherwise how many each prompt drew and how they ended, then the passing ones and the offered one."""
    report = result.get("verification")
    if not isinstance(report, dict):
        return
    if report.get("status") == "skipped":
        print(f"not verified: {report.get('reason', '')}")
        return
    from contenox.verify import Verification

    candidates = report.get("candidates") or []
    # the node's own words: "checked" (a check that passed before the change too), "verified by a test the model
    # wrote", "not verified: ... breaks ..."; not a "verified" of the CLI's making
    print(msgspec.convert(report, Verification).summary())
    chosen = report.get("chosen")
    under = next((c.get("on") for c in candidates if c.get("index") == chosen), 0)  # drawn on top of another's
    if every or len(candidates) <= _LISTED:
        shown = candidates
    else:
        for arm, outcomes in _by_arm(candidates).items():
            counts = ", ".join(f"{n} {outcome}" for outcome, n in outcomes.items())
            print(f"  {sum(outcomes.values())} {_ARMS.get(arm, arm)}: {counts}")
        shown = [c for c in candidates if c.get("outcome") == "passed" or c.get("index") in (chosen, under)][:_LISTED]
        print("  (`contenox ask --explain` lists every candidate)" if not shown else
              "  passing or offered (`contenox ask --explain` lists every candidate):")
    for c in shown:
        mark = (" <- closest, not offered" if report.get("withheld") else " <- offered") if c.get("index") == chosen \
            else ""
        node = f" (the node's one-token change, line {c.get('line')}: {c.get('change')})" if c.get("change") else ""
        if c.get("outcome") == "no_edit" and c.get("output_tail"):  # why: its one edit was left out
            node += f" ({str(c.get('output_tail')).split(' (')[0]})"
        print(f"  candidate {c.get('index')} (round {c.get('round')}"
              f"{', on top of candidate ' + str(c.get('on')) if c.get('on') else ''}): {c.get('outcome')}"
              f"{' ' + ', '.join(c.get('files') or ()) if c.get('files') else ''}{node}{mark}")
    if chosen not in (None, 1) and not report.get("withheld"):  # (withheld: no change is offered)
        print(f"(the answer streamed above is candidate 1; the change offered below is candidate {chosen}'s"
              + (f", drawn on top of candidate {under}'s: it holds both" if under else "") + ")")
    print()


_ARMS = {"turn": "from the turn's prompt", "edit-step": "from the edit step", "repair": "from repair prompts",
         "focused": "from one function's prompt", "line": "from line prompts", "infill": "line fills",
         "insert": "inserted lines", "mutation": "one-token changes (the node's, no model)"}


def _by_arm(candidates: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How many candidates each prompt (arm) drew, by outcome, in the order they were first drawn."""
    arms: dict[str, dict[str, int]] = {}
    for c in candidates:
        outcomes = arms.setdefault(str(c.get("arm") or "turn"), {})
        outcomes[str(c.get("outcome"))] = outcomes.get(str(c.get("outcome")), 0) + 1
    return arms


def _print_edits(result: dict[str, Any]) -> None:
    """The answer's edit blocks as the diffs the node made of them, and the blocks it could not place."""
    edits = result.get("edits") or []
    if edits:
        print(f"proposed edits ({len(edits)} file(s); `contenox ask --apply` applies them):")
        for edit in edits:
            sys.stdout.write(edit["diff"])
        print()
    for problem in result.get("edit_problems") or []:
        print(f"edit not applied: {problem}")


def _apply_edits(root: Path, edits: list[dict[str, Any]]) -> int:
    """Apply the proposed edits to the workspace, all or none: each file must still hold the text its edit was
    made from (the one applier, :func:`contenox.answer.edits.apply_edit`); each is written atomically, keeping
    its permissions."""
    from contenox.answer.edits import ProposedEdit, apply_edit
    from contenox.errors import StaleEdit
    from contenox.node.persist import write_atomic

    planned: list[tuple[Path, str | None]] = []
    for raw in edits:
        edit = msgspec.convert(raw, ProposedEdit)
        path = (root / edit.path).resolve()
        problem = ""
        try:
            if not path.is_relative_to(root.resolve()):
                problem = f"{edit.path} is outside the workspace"
            else:
                current = path.read_text(encoding="utf-8") if path.exists() else None
                planned.append((path, apply_edit(edit, current)))
        except StaleEdit as exc:
            problem = exc.message
        except (OSError, UnicodeDecodeError) as exc:
            problem = f"cannot read {edit.path}: {exc}"
        if problem:
            print(f"contenox: ask --apply: the edits do not apply to {root}: {problem}; nothing was written",
                  file=sys.stderr)
            return 1
    for path, text in planned:
        if text is None:  # a file a rename moved
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, text.encode("utf-8"), keep_mode=True)
    print(f"applied edits to {', '.join(str(edit['path']) for edit in edits)}", file=sys.stderr)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """The check commands this workspace allowed or declined (``contenox verify``); ``off`` forgets them, so the
    next change turn asks again before anything runs."""
    from contenox.node.paths import workspace_root
    from contenox.verify import ConsentStore

    root = str(workspace_root(args.cwd))
    store = ConsentStore(_config(args).state_dir / "verify-consent.json")
    if args.action == "off":
        gone = store.revoke(root)
        print(f"forgot {len(gone)} check command answer(s) for {root}" + "".join(f"\n  {c}" for c in gone)
              + "\nthe next change turn asks before it runs anything")
        return 0
    consents = store.list(root)
    if args.json:
        print(msgspec.json.encode(consents).decode())
    elif not consents:
        print(f"no check command allowed or declined in {root} yet (a change turn asks; `ask --verify` allows "
              "one question)")
    from contenox.verify import consent_scope

    for consent in [] if args.json else consents:
        scope = consent_scope(consent.command) if consent.allowed else ""
        print(f"{'allowed ' if consent.allowed else 'declined'}  {consent.command}"
              + (f"\n          and {scope}" if scope else ""))
    return 0


def cmd_threads(args: argparse.Namespace) -> int:
    """The workspace's threads (``contenox threads``), or one thread's turns (``contenox threads NAME``)."""
    from contenox.client import call

    cwd = str(Path(args.cwd).resolve())
    if args.name:
        _, turns = call(_config(args), "history", {"cwd": cwd, "thread": args.name})
        if args.json:
            print(msgspec.json.encode(turns).decode())
        elif not turns:
            print(f"no turns in thread {args.name!r} (`contenox threads` lists the threads)")
        for turn in [] if args.json else turns:
            if turn.get("unanswered"):
                print(f"## not answered\n> {turn['user']}\n\n({turn['unanswered']})\n")
            else:
                print(f"## turn {turn['turn']}\n> {turn['user']}\n\n{turn['answer'].strip()}\n")
        return 0
    _, threads = call(_config(args), "threads", {"cwd": cwd})
    if args.json:
        print(msgspec.json.encode(threads).decode())
    elif not threads:
        print("no threads yet in this workspace")
    else:
        for thread in threads:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(thread["last_used"]))
            print(f"{thread['thread']:24} {thread['turns']:3} turn(s)  {when}  {thread['title']}")
        print("\n`contenox threads NAME` shows a thread; `contenox ask --thread NAME ...` continues it, "
              "a new NAME starts a new one")
    return 0


def cmd_pins(args: argparse.Namespace) -> int:
    """``contenox pins [list | add PATH... | rm PATH...]``: the workspace's permanent pins."""
    from contenox.client import call

    config = _config(args)
    cwd = Path(args.cwd).resolve()
    if args.action != "list" and not args.paths:
        print(f"contenox: pins {args.action}: name the file(s) to {'pin' if args.action == 'add' else 'unpin'}",
              file=sys.stderr)
        return 2
    code = 0
    for path in args.paths:  # one at a time: a refused file is named and the others still go through
        try:
            call(config, "pin" if args.action == "add" else "unpin", {"cwd": str(cwd), "path": str(cwd / path)})
        except ContenoxError as exc:
            code = _fail(exc, False)
    _, result = call(config, "pins", {"cwd": str(cwd)})
    if args.json:
        print(msgspec.json.encode(result).decode())
    elif not result["pins"]:
        print(f"nothing pinned in {result['root']} (`contenox pins add PATH` pins a file into every turn)")
    else:
        print(f"pinned in {result['root']} (in every turn, in this order):")
        for path in result["pins"]:
            print(f"  {path}")
    return code


def cmd_explain(args: argparse.Namespace) -> int:
    from contenox.client import call

    _, result = call(_config(args), "explain", {"cwd": str(Path(args.cwd).resolve())})
    if args.json:
        print(msgspec.json.encode(result).decode())
    elif result is None:
        print("no turn yet in this workspace")
    else:
        print(_explain_table(result))
    return 0


def _status(config: Config, json_output: bool) -> int:
    """The running node's status; says so (exit 1) when no node runs, without starting one."""
    from contenox.buildinfo import build_id
    from contenox.client import call
    from contenox.node.paths import socket_path

    running, result = call(config, "status", start=False)
    if not running:
        print(msgspec.json.encode({"running": False}).decode() if json_output
              else f"no node running ({socket_path(config)})")
        return 1
    if json_output:
        print(msgspec.json.encode({"running": True, **result}).decode())
        return 0
    model = result["model"]
    print(f"node pid {result['pid']}, up {result['uptime_s']} s, {result['clients']} client(s), build "
          f"{result.get('build', '?')}")
    if result.get("build") != build_id():
        print(f"  this CLI is build {build_id()}: the next `contenox ask` restarts the node once it is idle")
    print(f"model {model['name']}: {model['state']}" + (f" ({model['error']})" if model.get("error") else ""))
    engine = result.get("engine")
    if isinstance(engine, dict):
        where = f"own process, pid {engine['pid']}" if engine.get("process") and engine.get("pid") else (
            "in the node process" if not engine.get("process") else "not started")
        print(f"engine {where}; {engine.get('restarts', 0)} restart(s)"
              + (f"; last: {engine['last_crash']}" if engine.get("last_crash") else ""))
    cache = result.get("cache")
    if isinstance(cache, dict):
        print("cache " + ", ".join(f"{k} {v}" for k, v in cache.items()))
    queue = result["queue"]
    print(f"queue {len(queue['active'])} running, {len(queue['waiting'])} waiting")
    for ws in result["workspaces"]:
        print(f"  {ws['root']}  session {ws['session_id']}  {ws['turns']} turn(s)"
              + (f"  pins {', '.join(ws['pins'])}" if ws["pins"] else ""))
    return 0


def _stop(config: Config) -> int:
    """Ask the running node to stop and wait until its socket is gone."""
    from contenox.client import call
    from contenox.node.paths import socket_path

    running, _ = call(config, "stop", start=False)
    if not running:
        print("no node running")
        return 0
    path = socket_path(config)
    deadline = time.monotonic() + 30
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    print("node stopped" if not path.exists() else "node is still stopping")
    return 0


def cmd_node(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.node_cmd == "serve":
        from contenox import daemon

        return daemon.serve(config)
    if args.node_cmd == "status":
        return _status(config, args.json)
    if args.node_cmd == "stop":
        return _stop(config)
    return cmd_explain(args)


def cmd_lsp(args: argparse.Namespace) -> int:
    from contenox.client import pipe_stdio

    return pipe_stdio(_config(args), "lsp")


def cmd_acp(args: argparse.Namespace) -> int:
    from contenox.client import pipe_stdio

    return pipe_stdio(_config(args), "acp")


def _completion_repos(rest: list[str]) -> list[str]:
    """``bench completions`` without ``--repo``: the eval set's repositories (``--repos`` names, or the default
    two), built from their released archives and passed as ``--repo PATH`` (bench does not import the eval)."""
    from contenox.bench.completions import DEFAULT_REPOS

    names = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    names.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    ns, kept = names.parse_known_args(rest)
    if "--repo" in kept or any(a.startswith("--repo=") for a in kept) or "-h" in kept or "--help" in kept:
        return kept
    from contenox.eval.prepare import DEFAULT_TASKS_DIR
    from contenox.eval.repos import materialize
    from contenox.eval.tasks import load_task_set

    specs = {spec.name: spec for spec in load_task_set([DEFAULT_TASKS_DIR]).repos}
    unknown = [n for n in ns.repos.split(",") if n not in specs]
    if unknown:
        raise SystemExit(f"contenox bench completions: not in the eval set: {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(specs))})")
    return kept + [a for n in ns.repos.split(",") for a in ("--repo", str(materialize(specs[n])))]


def cmd_bench(args: argparse.Namespace) -> int:
    rest = list(getattr(args, "bench_args", []) or [])
    if rest[:1] == ["completions"]:
        args.bench_args = _completion_repos(rest)
    from contenox.bench import run_bench

    return run_bench(_config(args), args)


def cmd_certify(args: argparse.Namespace) -> int:
    """Run the tool-call certification suite on a model; record the result beside it."""
    from contenox.certify import certify
    from contenox.runtime_ov import EngineOptions, ModelStore, start_engine
    from contenox.runtime_ov.certification import CERTIFICATION_FILE

    config = _config(args)
    model = ModelStore(config.models_dir).get(args.model)
    options = EngineOptions.from_config(config.engine, device=config.model.device)
    engine = start_engine(model, msgspec.structs.replace(options, cache_size_gb=min(options.cache_size_gb, 1.0)),
                          process=False)
    try:
        result = certify(engine, check=config.tools.check, require_call=config.tools.require_call, full=args.full)
    finally:
        engine.close()
    encoded = msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n"
    (Path(model.path) / CERTIFICATION_FILE).write_bytes(encoded)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{result.date}-certify-{model.name}.json").write_bytes(encoded)
    if args.json:
        print(encoded.decode(), end="")
        return 0
    verdict = "CERTIFIED for tool calls" if result.certified else "not certified: tools stay off for this model"
    print(f"{model.name}: {verdict}")
    if result.stopped:
        print(f"  {result.stopped} (--full runs every case)")
    print(f"  valid calls {result.valid_calls}/{result.tool_cases} ({100 * result.valid_call_rate:.0f}%, "
          f"needs >= {100 * result.thresholds['valid_call_rate_min']:.0f}%)")
    print(f"  false calls {result.false_calls}/{result.cases - result.tool_cases} "
          f"({100 * result.false_call_rate:.0f}%, needs <= {100 * result.thresholds['false_call_rate_max']:.0f}%)")
    print(f"  rejected tool-call markup {result.schema_errors}; by kind "
          + ", ".join(f"{k} {p}/{n}" for k, (p, n) in result.by_kind.items()))
    h = result.held_out
    if h:
        print(f"  held out (not in the rates): valid {h['valid_calls']}/{h['tool_cases']}, false "
              f"{h['false_calls']}/{h['plain_cases']}, malformed {h['malformed_calls']}"
              + ("; each case put to the tool check first" if result.tool_check else ""))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from contenox.eval.command import run

    return run(_config(args), args)


def cmd_config(args: argparse.Namespace) -> int:
    config = _config(args)
    print(f"# {config_path(config.root)}")
    print(render_config(config))
    return 0


# -- parser --------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="contenox", description="Local coding assistant node on OpenVINO.")
    p.add_argument("--version", action="version", version=f"contenox {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("init", help="write the config and pull the default model")
    s.add_argument("--model", help="model to pull instead of the configured default")
    s.set_defaults(func=cmd_init)

    s = sub.add_parser("ask", help="ask about the current repository (through the node)")
    s.add_argument("prompt", nargs="+")
    s.add_argument("--json", action="store_true", help="one JSON object: text and explain-context")
    s.add_argument("--pin", action="append", default=[], metavar="PATH", help="pin a file into the context")
    s.add_argument("--thread", default="cli", metavar="NAME",
                   help="conversation thread in this workspace (default: cli; the editors keep their own)")
    s.add_argument("--apply", action="store_true",
                   help="apply the answer's proposed edits to the working tree (all or nothing: each file must "
                        "still hold the text its edit was made from)")
    s.add_argument("--explain", action="store_true",
                   help="the explain-context table under the answer (default: a one-line cache summary)")
    s.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                   help="check a proposed change by running the check command in a scratch copy (--verify: allowed "
                        "for this question; --no-verify: never; default: ask once per workspace and command)")
    s.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_ask)

    s = sub.add_parser("verify", help="check commands this workspace allowed for verified fixes; off forgets them")
    s.add_argument("action", nargs="?", choices=("list", "off"), default="list")
    s.add_argument("--json", action="store_true")
    s.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("threads", help="the conversation threads of this workspace, or one thread's turns")
    s.add_argument("name", nargs="?", help="a thread to show (default: list them)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_threads)

    s = sub.add_parser("pins", help="files pinned into every turn of this workspace: list, add, remove")
    s.add_argument("action", nargs="?", choices=("list", "add", "rm"), default="list")
    s.add_argument("paths", nargs="*", metavar="PATH",
                   help="files to pin or unpin (relative to here); PATH:START-END pins those lines, PATH:outline "
                        "the file's definitions only; rm PATH removes every pin of the file")
    s.add_argument("--json", action="store_true")
    s.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_pins)

    s = sub.add_parser("explain-context", help="segments of the last turn: tokens, cached or new")
    s.add_argument("--json", action="store_true")
    s.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser("model", help="manage the model store")
    msub = s.add_subparsers(dest="model_cmd", required=True, metavar="ACTION")
    m = msub.add_parser("pull", help="download, verify and install a catalog model")
    m.add_argument("name")
    m.add_argument("--force", action="store_true", help="reinstall even when installed")
    m = msub.add_parser("list", help="installed models")
    m.add_argument("--json", action="store_true")
    m = msub.add_parser("use", help="make an installed model the default (a running node switches to it)")
    m.add_argument("name")
    m = msub.add_parser("rm", help="remove an installed model")
    m.add_argument("name")
    m = msub.add_parser("import", help="install a local OpenVINO IR directory or .gguf file")
    m.add_argument("path")
    m.add_argument("--name")
    s.set_defaults(func=cmd_model)

    s = sub.add_parser("node", help="the per-user daemon")
    nsub = s.add_subparsers(dest="node_cmd", required=True, metavar="ACTION")
    nsub.add_parser("serve", help="run the node in the foreground")
    n = nsub.add_parser("status", help="model, workspaces, sessions, cache, queue")
    n.add_argument("--json", action="store_true")
    nsub.add_parser("stop", help="stop the running node")
    n = nsub.add_parser("explain-context", help="same as `contenox explain-context`")
    n.add_argument("--json", action="store_true")
    n.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_node)

    s = sub.add_parser("lsp", help="LSP over stdio for editors (connects to the node)")
    s.add_argument("--stdio", action="store_true", help="accepted for vscode-languageclient")
    s.set_defaults(func=cmd_lsp)

    s = sub.add_parser("acp", help="Agent Client Protocol over stdio (Zed)")
    s.set_defaults(func=cmd_acp)

    s = sub.add_parser("bench", help="benchmark report (see bench/)")
    s.add_argument("bench_args", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("certify", help="the tool-call certification suite on a model (its safety bar and reach)")
    s.add_argument("model", help="an installed model (contenox model list)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--out", help="also write the result as <date>-certify-<model>.json in this directory")
    s.add_argument("--full", action="store_true",
                   help="run every case even once the model can no longer be certified (its full figures)")
    s.set_defaults(func=cmd_certify)

    s = sub.add_parser("eval", help="the coding-context eval gate (bench/eval): recall, citations, pass rate")
    s.add_argument("tasks", nargs="*", type=Path, help="task files or directories of *.toml "
                                                       "(default: bench/eval/tasks of this checkout)")
    s.add_argument("--model", help="model to evaluate (default: the configured default model)")
    s.add_argument("--retrieval-only", action="store_true",
                   help="plan each turn without running the model: score retrieval recall only")
    s.add_argument("--mode", action="append", choices=["retrieval", "baseline", "verified", "agent", "both", "inview",
                                                       "anticipated", "moved", "typed", "floor"],
                   default=None,
                   help="retrieval (the planner as shipped, one answer), baseline (repo map only), verified "
                        "(retrieval plus verified fixes: candidates checked in a scratch copy, the eval consenting "
                        "for its tasks), agent (retrieval plus the tool loop, tools on whatever the model's "
                        "certification; the task's check command the only command run), both (retrieval and "
                        "baseline), or the questions asked with their code in view: inview (today's layout), "
                        "anticipated (the place anticipated during --think-s), moved (the same, after the editor "
                        "was at another file of the workspace long enough for it to be anticipated), typed "
                        "(as anticipated, then the question typed at 5 characters a second, its drafts reported at "
                        "each clause's pause) and floor (everything but the question cached); repeatable "
                        "(default: both; retrieval with --retrieval-only)")
    s.add_argument("--kind", action="append", choices=["bug_localization", "cross_file_edit", "trace_test",
                                                       "refactor", "architecture"],
                   help="only tasks of this kind (repeatable)")
    s.add_argument("--task", action="append", metavar="ID", help="only this task (repeatable)")
    s.add_argument("--max-new-tokens", type=int, default=512, help="answer length cap (default 512)")
    s.add_argument("--think-s", type=float, default=10.0,
                   help="anticipated, moved and typed modes: seconds the editor stays idle at the place before the "
                        "question (10)")
    s.add_argument("--cache", type=Path, help="where the task repositories are built")
    s.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    s.add_argument("--out", type=Path, help="also write the JSON report to this file")
    s.add_argument("--resume", type=Path, metavar="FILE",
                   help="append each result to FILE as it comes (JSON lines) and skip results already in it")
    s.add_argument("--min-recall", type=float, default=None,
                   help="exit 1 when the retrieval mode's recall of must-cite files is below this (0..1)")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("config", help="print the effective config")
    s.set_defaults(func=cmd_config)
    return p


def _bare(argv: list[str]) -> list[str] | int:
    """A first word that is no command: a quoted question of several words is asked; anything else (a
    typo of a command, ``help``, unquoted words) is never sent to the model."""
    word = argv[0]
    if len(word.split()) > 1:
        return ["ask", *argv]  # `contenox "How does the planner order segments?" [--json ...]`
    if word in ("help", "version"):
        return ["--help" if word == "help" else "--version"]
    import difflib

    known = {c: c for c in _COMMANDS} | _SUBCOMMANDS
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean `contenox {known[close[0]]}`?" if close else ""
    print(f"contenox: unknown command {word!r}{hint}\n"
          f"To ask a question, quote it (contenox \"{' '.join(argv)}\") or use `contenox ask ...`; "
          f"`contenox --help` lists the commands.", file=sys.stderr)
    return 2


def _check_node_build() -> None:
    """A node of another build than this CLI is replaced when idle (or the user is told how), once per call."""
    from contenox.client import replace_stale_node

    said = replace_stale_node(load_config())
    if said:
        print(f"contenox: {said}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in _COMMANDS and not argv[0].startswith("-"):
        bare = _bare(argv)
        if isinstance(bare, int):
            return bare
        argv = bare
    parser = _parser()
    if argv and argv[0] == "bench" and not {"-h", "--help"} & set(argv[1:2]):
        # argparse's REMAINDER refuses leading options (`bench --quick`): hand the rest over untouched
        args = argparse.Namespace(command="bench", func=cmd_bench, verbose=False, bench_args=argv[1:])
    else:
        args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        if getattr(args, "command", None) in _NODE_CLIENTS:
            _check_node_build()
        return func(args)
    except ContenoxError as exc:
        return _fail(exc, bool(getattr(args, "json", False)))
    except KeyboardInterrupt:
        print("contenox: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the node's socket went away under a client command
        print(f"contenox: node_unavailable: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
