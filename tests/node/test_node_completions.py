"""Inline completions on a real node core: SmolLM2 (no FIM) says why they are off; Qwen2.5-Coder-0.5B completes
with the repo-level context, serves repeats from its recent results and lets a newer keystroke supersede."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_asyncio

from contenox.node import Node
from contenox.node.contract import CompletionRequest
from contenox.runtime_ov.store import InstalledModel
from support.gitrepo import make_repo
from support.nodekit import write_config

GEOMETRY = '''"""Shapes."""
import math


class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return math.pi * self.radius ** 2
'''
MAIN = ('from geometry import Circle\n\n\ndef total_area(circles: list[Circle]) -> float:\n'
        '    """Sum of the areas of the circles."""\n    \n')


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"geometry.py": GEOMETRY, "main.py": MAIN})


def _at_body(repo: Path, **changes: object) -> CompletionRequest:
    return CompletionRequest(root=str(repo), path="main.py", text=MAIN, line=5, character=4,  # type: ignore[arg-type]
                             **changes)


async def test_a_model_without_fim_answers_unavailable_with_the_reason(home: Path, repo: Path) -> None:
    node = Node(write_config(home, "[engine]\ncache_size_gb = 0.2\n"))
    try:
        info = await node.completion_info()
        assert not info.available and info.model == "smollm2-135m"
        assert info.reason is not None and "fill-in-the-middle" in info.reason
        outcome = await node.complete(_at_body(repo))
        assert outcome.ended == "unavailable" and outcome.text == "" and outcome.reason == info.reason
    finally:
        await node.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fim_node(tmp_path_factory: pytest.TempPathFactory, fim_model: InstalledModel):  # type: ignore[no-untyped-def]
    """One node on the FIM model for the module (loading it takes seconds)."""
    home = tmp_path_factory.mktemp("fim-home")
    (home / "models").mkdir()
    (home / "models" / fim_model.name).symlink_to(fim_model.path, target_is_directory=True)
    node = Node(write_config(home, f'[model]\ndefault = "{fim_model.name}"\n\n[engine]\ncache_size_gb = 0.5\n'))
    yield node
    await node.close()


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_a_completion_sees_the_definitions_the_file_uses_and_is_cut_at_the_block(fim_node: Node,
                                                                                     repo: Path) -> None:
    assert (await fim_node.completion_info()).available
    outcome = await fim_node.complete(_at_body(repo, use_cache=False, time_budget_ms=0))
    assert outcome.context_files == ("geometry.py",) and outcome.context_tokens > 0
    assert outcome.text.strip() and outcome.ended in ("block", "stop", "suffix")
    assert "\ndef " not in outcome.text  # cut before anything outside the function body
    whole = outcome
    if "\n" in whole.text.strip("\n"):  # a budget that has run out by the first token keeps only the first line
        quick = await fim_node.complete(_at_body(repo, use_cache=False, time_budget_ms=1))
        assert (quick.text, quick.ended) == (whole.text.split("\n")[0].rstrip(), "time")
    plain = await fim_node.complete(_at_body(repo, use_cache=False, repo_context=False))
    assert plain.context_tokens == 0 and plain.context_files == ()
    # the context block and the file's start were computed by the first request: served from the cache now
    again = await fim_node.complete(_at_body(repo, use_cache=False, time_budget_ms=0))
    assert again.cached_tokens >= outcome.context_tokens - 32
    assert again.prompt_tokens == outcome.prompt_tokens


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_repeats_and_typing_through_the_suggestion_come_from_recent_results(fim_node: Node,
                                                                                  repo: Path) -> None:
    first = await fim_node.complete(_at_body(repo))
    assert first.text and first.ended != "cached"
    same = await fim_node.complete(_at_body(repo))
    assert (same.text, same.ended, same.prompt_tokens) == (first.text, "cached", 0)
    typed = first.text[:3]
    lines = MAIN.split("\n")
    lines[5] += typed
    through = await fim_node.complete(CompletionRequest(root=str(repo), path="main.py", text="\n".join(lines),
                                                        line=5, character=4 + len(typed)))
    assert (through.text, through.ended) == (first.text[3:], "cached")
    # the recent results are the workspace's, for the model they came from: another model's engine starts afresh
    state = fim_node._workspaces[str(repo.resolve())]
    assert state.completions is not None and state.completions.results
    state.completions.tokenizer = object()  # as after a switch to another model
    fresh = await fim_node.complete(_at_body(repo))
    assert fresh.ended != "cached" and fresh.prompt_tokens > 0
    assert state.completions.tokenizer is not None and len(state.completions.results) == 1


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_a_newer_request_from_the_same_client_and_file_supersedes_the_running_one(fim_node: Node,
                                                                                       repo: Path) -> None:
    await fim_node.completion_info()  # the engine is loaded: both requests reach it at once
    older = asyncio.ensure_future(fim_node.complete(_at_body(repo, use_cache=False, client_id="ed")))
    await asyncio.sleep(0)
    newer = await fim_node.complete(_at_body(repo, use_cache=False, client_id="ed"))
    assert (await older).ended == "superseded" and (await older).text == ""
    assert newer.text
