"""A turn runs over a serving engine (``[engine] backend = "openai"``): the node plans with SmolLM2's local
tokenizer, the stand-in server (the same tokenizer behind its /tokenize) streams the answer, and explain-context
carries the server's cached-token count."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.errors import ServingError
from contenox.node import Node, TurnRequest
from contenox.runtime_ov import Tokenizer
from support.gitrepo import make_repo
from support.nodekit import write_config
from support.openai_standin import OpenAIStandin, Reply

pytestmark = pytest.mark.slow  # the node indexes a workspace and loads the tokenizer


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"pkg/calc.py": "def add(a, b):\n    return a + b\n",
                                         "main.py": "from pkg.calc import add\n\nprint(add(1, 2))\n"})


@pytest.fixture
def server(tokenizer: Tokenizer) -> Iterator[OpenAIStandin]:
    with OpenAIStandin(tokenize=tokenizer.encode) as standin:
        yield standin


async def test_a_turn_runs_over_the_serving_engine(home: Path, repo: Path, tokenizer: Tokenizer,
                                                   server: OpenAIStandin) -> None:
    config = write_config(home, f'[engine]\nbackend = "openai"\nurl = "{server.url}"\nmodel = "team-smollm2"\n'
                                'max_new_tokens = 16\n')
    server.replies += [Reply(pieces=("`add` returns", " the sum of a and b."), cached_tokens=0),
                       Reply(pieces=("It is called", " in main.py."), cached_tokens=480)]
    node = Node(config)
    try:
        first = await node.turn(TurnRequest(root=str(repo), prompt="What does add do?", client_id="me"))
        assert first.text == "`add` returns the sum of a and b." and first.finish_reason == "stop"
        assert first.explain.cache_evidence == "server" and first.explain.server_cached_tokens == 0
        second = await node.turn(TurnRequest(root=str(repo), prompt="Who calls it?", client_id="me"))
        assert second.explain.server_cached_tokens == 480
        assert second.explain.measured_recomputed_tokens == second.explain.totals.tokens - 480
        status = await node.status()
        assert status["engine"]["alive"]
    finally:
        await node.close()
    first_sent, second_sent = server.completions()
    body = first_sent.body
    assert body["model"] == "team-smollm2" and body["max_tokens"] == 16 and body["stream"] is True
    # the planner's prompt as the template rendered it: SmolLM2's chat markers, the question last
    assert body["prompt"].startswith("<|im_start|>system\n") and body["prompt"].endswith("<|im_start|>assistant\n")
    assert "What does add do?" in body["prompt"]
    # the second turn extends the first: the same stable prefix, the same per-workspace cache key
    assert second_sent.body["prompt"].startswith(body["prompt"][:200])
    assert second_sent.body["prompt_cache_key"] == body["prompt_cache_key"]
    assert "What does add do?" in second_sent.body["prompt"] and "`add` returns" in second_sent.body["prompt"]


async def test_a_failing_server_fails_the_turn_with_its_name_and_status(home: Path, repo: Path,
                                                                        server: OpenAIStandin) -> None:
    config = write_config(home, f'[engine]\nbackend = "openai"\nurl = "{server.url}"\nretries = 0\n')
    server.replies.append(Reply(status=503, error="model is loading"))
    node = Node(config)
    try:
        with pytest.raises(ServingError, match="answered 503 Service Unavailable: model is loading") as caught:
            await node.turn(TurnRequest(root=str(repo), prompt="What does add do?", client_id="me"))
        assert caught.value.details == {"server": server.url, "status": 503}
        # the next turn goes through once the server answers again
        answer = await node.turn(TurnRequest(root=str(repo), prompt="What does add do?", client_id="me"))
        assert answer.text == "Hello world."
    finally:
        await node.close()


async def test_two_developers_on_one_commit_send_the_same_stable_prefix(
        tmp_path: Path, home: Path, repo: Path, server: OpenAIStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    """The team-shared prefix: two nodes with their own homes, users and clone paths of one commit send
    byte-identical stable segments (system .. pins), so the server computes them once for both."""
    import shutil

    from support.gitrepo import git

    config_text = f'[engine]\nbackend = "openai"\nurl = "{server.url}"\ntoken_prompt = true\nmax_new_tokens = 4\n'
    sent: list[tuple[list[int], int]] = []
    for user in ("alice", "bob"):
        user_home = tmp_path / user
        clone = user_home / "src" / f"{user}-checkout"
        clone.parent.mkdir(parents=True)
        git(clone.parent, "clone", "-q", str(repo), clone.name)
        dev_home = user_home / ".contenox"
        shutil.copytree(home, dev_home, symlinks=True)
        monkeypatch.setenv("HOME", str(user_home))
        monkeypatch.setenv("USER", user)
        monkeypatch.setenv("CONTENOX_HOME", str(dev_home))
        node = Node(write_config(dev_home, config_text))
        try:
            outcome = await node.turn(TurnRequest(root=str(clone), prompt="What does add do?", client_id=user))
        finally:
            await node.close()
        stable = sum(s.tokens for s in outcome.explain.segments
                     if s.kind in ("system", "tools", "policy", "instructions", "repo_map", "pins"))
        sent.append((server.completions()[-1].body["prompt"], stable))
    (alice, alice_stable), (bob, bob_stable) = sent
    assert alice_stable == bob_stable and alice_stable > 100
    assert alice[:alice_stable] == bob[:bob_stable]
    assert alice == bob  # the whole first turn, in fact: nothing in it names a user, a home or a clone path
