"""Opt-in: the node over a real llama.cpp server (``[engine] backend = "openai"``).

Runs when ``CONTENOX_LLAMA_SERVER`` names a ``llama-server`` binary, or ``scripts/llama-server`` has built one
into ``.cache/llama-server/`` (a build from source: about 8 minutes on 2 cores, which CI does not spend).
The server serves the same GGUF the node plans with (SmolLM2-135M; Qwen2.5-Coder-0.5B for inline completions):
the engine surface streams, cancels and reads the server's cached-token counts; ``contenox ask``, a Zed (ACP)
session and a VS Code (LSP) chat answer unchanged over it, and explain-context shows the server's own counts.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.runtime_ov import (
    FinalEvent,
    GenerateRequest,
    ServedEngine,
    ServedOptions,
    TokenEvent,
    Tokenizer,
)
from contenox.runtime_ov.store import InstalledModel
from support.lsp_e2e_kit import PYTHON, NodeHome, make_repo, private_home

pytestmark = pytest.mark.slow

_BUILT = Path(__file__).resolve().parents[1] / ".cache" / "llama-server" / "llama-server"


def _binary() -> Path | None:
    named = os.environ.get("CONTENOX_LLAMA_SERVER")
    if named:
        return Path(named)
    return _BUILT if _BUILT.exists() else None


if _binary() is None:
    pytest.skip("no llama-server: set CONTENOX_LLAMA_SERVER or run scripts/llama-server", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    def __init__(self, binary: Path, gguf: Path, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        # the launch line the README documents, sized for this test: one slot, a small context
        self.proc = subprocess.Popen(
            [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(self.port), "-c", "8192",
             "--parallel", "1", "--threads", "2", "--cache-reuse", "256", "--metrics", "--alias", "team-smollm2"],
            stdout=log.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"llama-server did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def llama(default_model: InstalledModel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    binary = _binary()
    assert binary is not None
    server = LlamaServer(binary, default_model.weights, tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        server.close()


async def _run(engine: ServedEngine, ids: list[int], max_new: int = 8) -> tuple[list[int], FinalEvent]:
    handle = engine.submit(GenerateRequest(session_id="t", token_ids=ids, max_new_tokens=max_new))
    tokens: list[int] = []
    final: FinalEvent | None = None
    async for event in handle:
        if isinstance(event, TokenEvent):
            tokens += event.token_ids
        elif isinstance(event, FinalEvent):
            final = event
    assert final is not None
    return tokens, final


@pytest.mark.parametrize("token_prompt", [True, False])
async def test_the_engine_surface_over_llama_server(llama: LlamaServer, default_model: InstalledModel,
                                                    tokenizer: Tokenizer, token_prompt: bool) -> None:
    engine = ServedEngine.start(default_model, ServedOptions(url=llama.url, model="team-smollm2",
                                                             token_prompt=token_prompt, max_new_tokens=8))
    try:
        assert engine.tokenizer_check.startswith("matches"), engine.tokenizer_check
        prefix = tokenizer.apply_chat_template([
            {"role": "system", "content": "You are a careful code reviewer. " * 40},
            {"role": "user", "content": "def add(a, b):\n    return a + b\n\nWhat does add return?"}])
        ids = tokenizer.encode(prefix)
        tokens, first = await _run(engine, ids)
        assert tokens and first.text and first.metrics.prompt_tokens == len(ids)
        assert first.metrics.cache_evidence == "server"
        longer = tokenizer.encode(prefix + "It returns")
        _, second = await _run(engine, longer)
        assert second.metrics.cache_evidence == "server" and second.metrics.server_cached_tokens is not None
        # the server kept the first prompt's KV: all of it but the tokens it re-evaluates
        assert second.metrics.server_cached_tokens >= len(ids) - 8, second.metrics
        assert second.metrics.measured_recomputed_tokens == len(longer) - second.metrics.server_cached_tokens

        # cancel after the first token: the stream closes, the request ends cancelled, the server serves on
        handle = engine.submit(GenerateRequest(session_id="t", token_ids=ids + tokenizer.encode(" Count to 500:"),
                                               max_new_tokens=400))
        async for event in handle:
            if isinstance(event, TokenEvent):
                handle.cancel()
            elif isinstance(event, FinalEvent):
                assert event.finish_reason == "cancelled" and event.metrics.generated_tokens < 400
        again, _ = await _run(engine, ids, max_new=2)
        assert again
    finally:
        engine.close()


async def test_verified_fix_candidates_over_llama_server_are_edit_blocks_of_real_lines(
        llama: LlamaServer, default_model: InstalledModel, tokenizer: Tokenizer) -> None:
    """Sampled candidates of one group go as separate streams, each under the edit-block grammar in llama.cpp's
    ``grammar`` field (the node's EBNF is read as GBNF): every one is an edit block whose SEARCH lines the file
    holds."""
    from contenox.runtime_ov import Sampling
    from contenox.verify.grammar import edit_block_grammar

    source = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    engine = ServedEngine.start(default_model, ServedOptions(url=llama.url, model="team-smollm2", token_prompt=True,
                                                             grammar_field="grammar", max_new_tokens=60))
    try:
        ids = tokenizer.encode(tokenizer.apply_chat_template([
            {"role": "user", "content": f"calc.py:\n{source}\nadd subtracts. Fix it with one edit block."}]))
        grammar = edit_block_grammar("calc.py", source)
        handles = [engine.submit(GenerateRequest(session_id="v", token_ids=ids, max_new_tokens=60, group="g",
                                                 grammar=grammar,
                                                 sampling=Sampling(temperature=0.8, top_p=0.95, seed=seed)))
                   for seed in (1, 2, 3)]
        for handle in handles:
            final = None
            async for event in handle:
                if isinstance(event, FinalEvent):
                    final = event
            assert final is not None and final.finish_reason in ("stop", "length"), final
            text = final.text
            assert text.startswith("calc.py\n<<<<<<< SEARCH\n"), text
            search = text.split("<<<<<<< SEARCH\n", 1)[1].split("=======\n", 1)[0]
            assert search and search in source + "\n", text
    finally:
        engine.close()


@pytest.fixture
def served_home(default_model: InstalledModel, llama: LlamaServer) -> Iterator[NodeHome]:
    home = Path(tempfile.mkdtemp(prefix="contenox-served-")) / "home"
    config = (f'[model]\ndefault = "{default_model.name}"\n\n[engine]\nbackend = "openai"\nurl = "{llama.url}"\n'
              'model = "team-smollm2"\ntoken_prompt = true\nmax_new_tokens = 8\n\n[node]\nidle_exit_s = 120\n'
              "\n[anticipate]\nenabled = false\n")
    try:
        with private_home(home, default_model.name, Path(default_model.path), config) as node:
            yield node
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


async def test_ask_zed_and_vscode_answer_over_llama_server(served_home: NodeHome, tmp_path: Path) -> None:
    from acp.schema import ClientCapabilities

    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
    from support.acp_recorder import Recorder
    from support.lsp_client import chat, start_window

    repo = make_repo(tmp_path / "repo")

    def ask(question: str) -> dict[str, object]:
        done = subprocess.run([PYTHON, "-m", "contenox", "ask", "--json", "--no-verify", question], cwd=repo,
                              env=served_home.env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    first = ask("What does helper do?")
    assert first["text"]
    explain = first["explain"]
    assert isinstance(explain, dict) and explain["cache_evidence"] == "server"
    second = ask("And who calls it?")
    explain = second["explain"]
    assert isinstance(explain, dict) and explain["cache_evidence"] == "server"
    assert explain["server_cached_tokens"] > explain["totals"]["tokens"] // 2  # the thread's prefix, served cached
    shown = subprocess.run([PYTHON, "-m", "contenox", "explain-context"], cwd=repo, env=served_home.env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert "server cached" in shown.stdout, shown.stdout + shown.stderr

    recorder = Recorder()
    async with spawn_agent_process(recorder, PYTHON, "-m", "contenox", "acp", env=served_home.env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        session = await conn.new_session(cwd=str(repo))
        done = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                  prompt=[text_block("What does main.run print?")]), 300)
        assert done.stop_reason in ("end_turn", "max_tokens") and recorder.text(session.session_id)
        usage = recorder.of("usage_update", session.session_id)[-1].field_meta["contenox"]
        assert usage["cache_evidence"] == "server" and usage["server_cached_tokens"] is not None

    client, _ = await start_window(repo, served_home.env)
    try:
        answer = await asyncio.wait_for(chat(client, "vscode-1", "Where is helper defined?"), 300)
        assert answer["text"]
        assert answer["explain"]["cache_evidence"] == "server"
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_inline_completions_over_llama_server(fim_model: InstalledModel, tmp_path: Path) -> None:
    """Inline completions send their FIM ids to the server (Qwen2.5-Coder-0.5B: SmolLM2 has no FIM tokens)."""
    from lsprotocol import types

    from support.gitrepo import TINY_APP
    from support.gitrepo import make_repo as make_files
    from support.lsp_client import request, start_window

    binary = _binary()
    assert binary is not None
    server = LlamaServer(binary, fim_model.weights, tmp_path / "fim-server.log")
    home = tmp_path / "fim-home"
    (home / "models").mkdir(parents=True)
    (home / "models" / fim_model.name).symlink_to(fim_model.path, target_is_directory=True)
    (home / "config.toml").write_text(
        f'[model]\ndefault = "{fim_model.name}"\n\n[engine]\nbackend = "openai"\nurl = "{server.url}"\n'
        'token_prompt = true\n\n[node]\nidle_exit_s = 120\n\n[anticipate]\nenabled = false\n', encoding="utf-8")
    node = NodeHome(home, Path(tempfile.mkdtemp(prefix="cx-", dir="/tmp")))
    main = 'from util import helper\n\n\ndef doubled(x: int) -> int:\n    """helper(x), twice."""\n    \n'
    repo = make_files(tmp_path / "repo", {**TINY_APP, "main2.py": main})
    client, _ = await start_window(repo, node.env)
    try:
        info = await request(client, "contenox/completionInfo", {})
        assert info["available"] is True, info
        uri = (repo / "main2.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=main)))
        position = types.Position(line=5, character=4)
        result = await asyncio.wait_for(client.text_document_inline_completion_async(types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position,
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked))), 300)
        assert isinstance(result, types.InlineCompletionList) and len(result.items) == 1
        assert isinstance(result.items[0].insert_text, str) and result.items[0].insert_text.strip()
        assert "<|fim" not in result.items[0].insert_text
    finally:
        await client.shutdown_session()
        await client.stop()
        node.stop()
        shutil.rmtree(node.runtime, ignore_errors=True)
        server.close()
