"""A small real editing history replayed through the node's turn assembly on the real engine: the base repo map
and everything before the new turn stay cached across edits; only an instruction edit invalidates the prefix."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from contenox.config import PlannerConfig, WorkspaceConfig
from contenox.planner import Planner, build_inputs, change_reasons
from contenox.planner.map_base import MapBase, MapChange, changes_since, render_changes
from contenox.runtime_ov import Engine, EngineOptions, GenerateRequest, Priority
from contenox.runtime_ov.store import InstalledModel
from contenox.workspace import Workspace

CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
REPORT = "from calc import add\n\n\ndef total(values):\n    out = 0\n    for v in values:\n        out = add(out, v)\n" \
         "    return out\n"


def test_changes_since_the_base_and_their_rendering() -> None:
    base = {"a.py": ("def f(x)", "def g()"), "b.py": ("class B",)}
    now = {"a.py": ("def f(x, y)", "def g()"), "c.py": ("def h()",)}
    changes = changes_since(base, now)
    assert changes == [MapChange(path="a.py", added=("def f(x, y)",), removed=("def f(x)",)),
                       MapChange(path="b.py", added=(), removed=("class B",)),
                       MapChange(path="c.py", added=("def h()",), removed=())]
    assert render_changes(changes) == ("a.py:\n+ def f(x, y)\n- def f(x)\nb.py: (no definitions left)\n- class B\n"
                                       "c.py:\n+ def h()")


def test_the_base_is_rebuilt_only_when_it_must_be_and_says_why() -> None:
    mb = MapBase()
    renders: list[str] = []

    def render() -> str:
        renders.append(f"map {len(renders)}")
        return renders[-1]

    count = len  # one token a character
    text, changes, notes = mb.current(((), 1024), "abc1234def", {"a.py": ("def f()",)}, render, count, 40)
    assert (text, changes, notes, mb.label(changes)) == ("map 0", [], [], "base @abc1234")
    text, changes, notes = mb.current(((), 1024), "fff", {"a.py": ("def f()", "def g()")}, render, count, 40)
    assert text == "map 0" and notes == [] and mb.label(changes) == "base @abc1234 + 1 changed symbol"
    big = {"a.py": tuple(f"def f{i}()" for i in range(10))}
    text, changes, notes = mb.current(((), 1024), "fff", big, render, count, 40)
    assert text == "map 1" and changes == [] and notes == [
        "repo map rebased: 11 changed symbols outgrew the delta budget (40 tokens)"]
    text, changes, notes = mb.current((("a.py",), 1024), "fff", big, render, count, 40)
    assert text == "map 2" and notes == ["repo map rebased: pins or map budget changed"]


@pytest.fixture(scope="module")
def engine(default_model: InstalledModel) -> Iterator[Engine]:
    eng = Engine.start(default_model, EngineOptions(cache_size_gb=0.5, chunk_tokens=64, max_new_tokens=8))
    yield eng
    eng.close()


def _git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(root.parent)}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


@pytest.mark.slow
def test_a_replayed_history_keeps_the_base_map_and_the_thread_cached(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "report.py").write_text(REPORT)
    (root / "AGENTS.md").write_text("Keep functions small.\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "start")
    ws = Workspace.open(root, WorkspaceConfig(), tmp_path / "index")
    config = PlannerConfig(retrieval_tokens=512)
    planner = Planner(engine.tokenizer, engine.profile, config, tmp_path / "planner", backend_version="test")
    mb = MapBase()

    def count(text: str) -> int:
        return len(engine.tokenizer.encode(text))

    edits = [  # (file, new text, commit?) as a developer makes them between questions
        ("calc.py", CALC + "\n\ndef mul(a, b):\n    return a * b\n", False),           # a new function
        ("report.py", REPORT.replace("out = 0", "out = 0  # running sum"), True),      # a body edit, committed
        ("calc.py", (CALC + "\n\ndef mul(a, b, c=1):\n    return a * b * c\n"), False),  # a signature change
        ("AGENTS.md", "Keep functions small.\nName things plainly.\n", False),         # instructions
    ]
    turns = []
    for path, text, commit in [(None, None, False), *edits]:
        if path is not None:
            (root / path).write_text(text)
            if commit:
                _git(root, "commit", "-qam", f"edit {path}")
        events = ws.refresh()
        inputs = build_inputs(config, ws, count, root=root, prompt="Review this change.", selection=None, pins=(),
                              terminal="", thread="replay", reasons=change_reasons(events), map_base=mb)
        plan = planner.plan(inputs, predict_cached=engine.predict_cached)
        final = asyncio.run(engine.submit(GenerateRequest(session_id="replay", token_ids=plan.token_ids,
                                                          max_new_tokens=8, priority=Priority.INTERACTIVE)).result())
        explain = planner.record(plan, final.metrics, answer_text=final.text)
        turns.append((plan, final, explain))

    first_map = turns[0][0].manifest.segment("repo_map")
    for step, (plan, final, _explain) in enumerate(turns[1:4], 1):
        segs = {s.kind: s for s in plan.manifest.segments}
        assert segs["repo_map"].token_hash == first_map.token_hash, step  # the base map did not move
        assert segs["repo_map"].invalidated_by is None and segs["repo_map"].note.startswith("base @")
        previous_end = turns[step - 1][0].manifest.segment("user").token_end  # the last turn, all of it
        cached = plan.manifest.predicted_cached_tokens
        assert cached >= segs["history"].token_start, step  # the stable prefix is served from the cache
        assert cached >= previous_end - 64, (step, cached, previous_end)  # and so is the whole previous turn
        assert final.metrics.measured_recomputed_tokens <= len(plan.token_ids) - cached + 64
    added = turns[1][0].messages[-1]["content"]
    assert "# Repository map changes since the map above" in added and "+ def mul(a, b):" in added
    changed = turns[3][0].messages[-1]["content"]
    assert "calc.py (replaces its earlier change):\n+ def mul(a, b, c=1):\n```" in changed  # against the base
    assert turns[3][0].manifest.segment("repo_map").note == "base @" + turns[0][0].manifest.segment(
        "repo_map").note.split("@")[1].split(" ")[0] + " + 1 changed symbol"
    body_only = turns[2][0].manifest.segment("map_delta")
    assert body_only.tokens == 0  # a body edit changes no definition line: no delta at all
    instructions = turns[4][0].manifest.segment("instructions")
    assert instructions.invalidated_by is not None and "AGENTS.md" in instructions.invalidated_by


def test_mentioned_files_enter_whole_while_they_fit_then_as_outlines(tmp_path: Path) -> None:
    from contenox.planner.inputs import mention_section

    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "calc.py").write_text(CALC)
    (root / "report.py").write_text(REPORT)
    ws = Workspace.open(root, WorkspaceConfig(), None)
    ws.refresh()
    count = len  # one token per character: easy to reason about
    whole, notes = mention_section(ws, ["calc.py", "report.py"], count, 10_000)
    assert whole == f"# Files mentioned with the question\n\n## calc.py\n```python\n{CALC.rstrip()}\n```\n\n" \
                    f"## report.py\n```python\n{REPORT.rstrip()}\n```"
    assert notes == tuple(f"mentioned {name}: in this turn's message ({len(f'## {name}')+len(text.rstrip())+15} "
                          "tokens), kept in the thread" for name, text in (("calc.py", CALC), ("report.py", REPORT)))
    budget = len(f"## calc.py\n```python\n{CALC.rstrip()}\n```") + 10
    cut, notes = mention_section(ws, ["calc.py", "report.py"], count, budget)
    assert cut.endswith("## report.py (outline only)\n```python\ndef total(values):\n```")
    whole_report = len("## report.py\n```python\n" + REPORT.rstrip() + "\n```")
    assert notes[1:] == (f"mentioned report.py: outline only ({whole_report} tokens whole; the turn's mentions may use "
                     f"{budget}, planner.mention_tokens)",)
    assert mention_section(ws, [], count, 10) == ("", ())


def test_pins_of_a_line_range_or_an_outline(tmp_path: Path) -> None:
    from contenox.planner.inputs import pin_text, split_pin

    assert split_pin("a/b.py") == ("a/b.py", None, False)
    assert split_pin("a/b.py:3-7") == ("a/b.py", (3, 7), False)
    assert split_pin("a/b.py:outline") == ("a/b.py", None, True)
    assert split_pin("a/b.py:7-3") == ("a/b.py:7-3", None, False)  # not a range: taken as a file name
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "report.py").write_text(REPORT)
    ws = Workspace.open(root, WorkspaceConfig(), None)
    ws.refresh()
    assert pin_text(ws, "report.py") == REPORT
    assert pin_text(ws, "report.py:4-5") == "# lines 4-5 of 8\ndef total(values):\n    out = 0"
    assert pin_text(ws, "report.py:7-99") == "# lines 7-8 of 8\n        out = add(out, v)\n    return out"
    assert pin_text(ws, "report.py:outline") == "# outline (pinned as outline)\ndef total(values):"
