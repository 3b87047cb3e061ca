"""``contenox bench remote`` against the stand-in server with a prefix cache (it reports as cached the longest
prefix of ids a prompt shares with any earlier one): the planner's real prompts over SmolLM2's tokenizer, two
developers' clones at different paths, a replayed session beside the naive chat ordering, the report and plot."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.bench.options import ReplayOptions
from contenox.bench.remote import main, run_remote
from contenox.runtime_ov import Tokenizer
from support.gitrepo import git, make_repo, write
from support.nodekit import write_config
from support.openai_standin import OpenAIStandin

pytestmark = pytest.mark.slow  # indexes three checkouts and plans a dozen turns


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "team-repo", {
        "pkg/calc.py": "def add(a, b):\n    return a + b\n",
        "pkg/errors.py": "class CalcError(Exception):\n    \"\"\"Raised for a bad operand.\"\"\"\n",
        "main.py": "from pkg.calc import add\n\nprint(add(1, 2))\n"})
    for n, (rel, text) in enumerate((("pkg/calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
                                                     "    return a - b\n"),
                                     ("main.py", "from pkg.calc import add, sub\n\nprint(add(1, 2), sub(3, 1))\n"),
                                     ("pkg/errors.py", "class CalcError(ValueError):\n    \"\"\"A bad operand.\"\"\"\n"))):
        write(root, rel, text)
        git(root, "commit", "-qam", f"step {n}")
    return root


@pytest.fixture
def server(tokenizer: Tokenizer) -> Iterator[OpenAIStandin]:
    with OpenAIStandin(tokenize=tokenizer.encode, prefix_cache=True) as standin:
        yield standin


def test_the_second_developer_finds_the_stable_prefix_cached_and_the_session_beats_the_naive_order(
        home: Path, repo: Path, server: OpenAIStandin) -> None:
    config = write_config(home, f'[engine]\nbackend = "openai"\nurl = "{server.url}"\ntoken_prompt = true\n')
    report = run_remote(config, ReplayOptions(repo=str(repo), commits="HEAD~3..HEAD", max_turns=2,
                                              max_new_tokens=4))
    alice, bob = report.developers
    assert alice.clone != bob.clone and alice.question != bob.question
    assert alice.server_cached_tokens == 0  # the server held nothing of this repository before
    assert bob.stable_tokens == alice.stable_tokens > 100
    assert bob.stable_cached_share == 1.0 and bob.server_cached_tokens is not None
    assert bob.server_cached_tokens < bob.prompt_tokens  # the question is his own
    assert len(report.turns) == 2 and report.summary is not None
    assert all(t.contenox_server_cached is not None and t.naive_server_cached is not None for t in report.turns)
    s = report.summary
    assert s.contenox_cached_share is not None and s.naive_cached_share is not None
    assert s.contenox_cached_share > s.naive_cached_share  # a timestamp early in the naive prompt ends its prefix
    assert s.second_developer_stable_share == 1.0 and report.notes == []
    assert report.tokenizer_check and report.token_prompt


def test_the_command_writes_the_report_and_names_a_missing_server(home: Path, repo: Path, server: OpenAIStandin,
                                                                  tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(home, "")
    assert main(config, ["--repo", str(repo), "--commits", "HEAD~2..HEAD"]) == 2
    assert "no server" in capsys.readouterr().err
    out = tmp_path / "results"
    assert main(config, ["--repo", str(repo), "--commits", "HEAD~2..HEAD", "--max-turns", "1", "--max-new", "2",
                         "--url", server.url, "--server-model", "team-coder-1.5b", "--token-prompt",
                         "--out", str(out)]) == 0
    [written] = out.glob("*-remote-team-coder-1.5b.json")  # the dot in the name kept
    data = json.loads(written.read_text())
    assert data["server_model"] == "team-coder-1.5b" and len(data["turns"]) == 1
    assert data["summary"]["second_developer_stable_share"] == 1.0
    assert (out / written.name.replace(".json", ".png")).stat().st_size > 1000
    assert all(r.body["model"] == "team-coder-1.5b" for r in server.completions())
