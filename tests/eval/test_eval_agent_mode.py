"""``contenox eval --mode agent``: its private node gets the tools whatever the model's certification (that node's
config only), the task's check command is the only command its turns run, and the tool loop is reported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from contenox.config import load_config
from contenox.eval.report import AgentTask, EvalReport, TaskResult, render_table, summarize
from contenox.eval.runner import EvalNode, _AgentLoop
from contenox.eval.tasks import Check, Task

CHECK = f"{sys.executable} -c \"import sys; print('checked'); sys.exit(3)\""


def _task(command: str = CHECK) -> Task:
    return Task(id="t", repo="r", commit="v1", ask="Fix it.", kind="bug_localization", must_cite_files=("a.py",),
                must_cite_symbols=(), check=Check(test_command=command))


def test_only_the_tasks_check_command_runs_and_the_loop_is_reported(tmp_path: Path) -> None:
    loop = _AgentLoop(_task(), tmp_path, {})
    ran = loop.asked("run_command", {"command": "  " + CHECK.replace(" -c", "   -c"), "cwd": str(tmp_path)})
    assert ran["ran"] is True and ran["exit_code"] == 3 and "checked" in ran["output"]
    refused = loop.asked("run_command", {"command": "rm -rf build", "cwd": str(tmp_path)})
    assert refused["ran"] is False and "only the task's check command" in refused["reason"]
    # after an edit the node runs the command in its scratch copy: only the task's check is consented to
    assert loop.asked("allow_check", {"command": " " + CHECK, "cwd": str(tmp_path)}) == {"allowed": True}
    assert loop.asked("allow_check", {"command": "make", "cwd": str(tmp_path)}) == {"allowed": False}
    for params in ({"id": "step0-0", "status": "in_progress", "title": "read_file(path='a.py')"},
                   {"id": "step0-0", "status": "completed", "title": "Read a.py", "output": "..."},
                   {"id": "step1-0", "status": "failed", "title": "Run rm -rf build", "output": "error: not run"},
                   {"id": "step1-1", "status": "completed", "title": "Run tests (exit code 3)", "output": ""},
                   {"id": "step2-0", "status": "completed",
                    "title": "Run tests in a scratch copy with the proposed edits (exit code 0)", "output": ""}):
        loop.heard("tool", params)
    loop.heard("chunk", {"text": "x"})
    report = loop.report()
    assert report.steps == 3 and report.calls[:3] == ("Read a.py", "Run rm -rf build", "Run tests (exit code 3)")
    assert report.tool_errors == ("Run rm -rf build: error: not run",)
    assert report.commands_refused == ("rm -rf build", "make") and report.commands_run[0].endswith("(exit code 3)")
    assert report.commands_run[1] == "Run tests in a scratch copy with the proposed edits (exit code 0)"


def test_a_task_without_a_check_command_runs_none(tmp_path: Path) -> None:
    loop = _AgentLoop(_task(""), tmp_path, {})
    assert loop.asked("run_command", {"command": "pytest"})["reason"].endswith("(it has none)")


@pytest.mark.parametrize("enabled", ["false", "true"])
def test_only_the_agent_modes_node_ignores_certification(tmp_path: Path, enabled: str) -> None:
    """Only agent mode has the tools; the other modes are one answer even for a certified model."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"[tools]\nenabled = {enabled}\n", encoding="utf-8")
    base = load_config(home)
    agent = EvalNode(base, "m", "agent", max_new_tokens=64)
    retrieval = EvalNode(base, "m", "retrieval", max_new_tokens=64)
    try:
        assert agent.config.tools.enabled and agent.config.tools.ignore_certification
        assert not retrieval.config.tools.enabled and not retrieval.config.tools.ignore_certification
        assert not base.tools.ignore_certification and not load_config(home).tools.ignore_certification
        assert base.tools.enabled is (enabled == "true")
    finally:
        agent.close()
        retrieval.close()


def test_the_agent_summary_counts_steps_calls_and_errors() -> None:
    base = dict(repo="r", files_in_prompt=(), chunks=3, prompt_tokens=4000, cached_tokens=0, segment_tokens={},
                kind="bug_localization", mode="agent", must_files=("x",), recall=1.0)
    results = [TaskResult(id="a", passed=True, agent=AgentTask(steps=3, calls=("Read x", "Edit x", "Run t"),
                                                               commands_run=("t (exit code 0)",)), **base),
               TaskResult(id="b", passed=False, agent=AgentTask(steps=1, calls=("Read y",),
                                                                tool_errors=("Read y: no such file",)), **base),
               TaskResult(id="c", passed=False, agent=AgentTask(), **base)]
    s = summarize("agent", results)
    assert s.agent == {"tasks": 3, "steps_median": 1, "steps_max": 3, "tasks_with_a_call": 2, "calls": 4,
                       "tool_errors": 1, "commands_run": 1, "commands_refused": 0}
    table = render_table(EvalReport(model="m", date="d", retrieval_only=False, task_files=(), machine={},
                                    summaries=(s,), results=tuple(results)))
    assert ("agent: 2/3 task(s) called a tool; steps per task median 1, most 3; 4 call(s), 1 tool error(s); "
            "1 command(s) run, 0 refused") in table
    assert summarize("retrieval", [TaskResult(id="d", **{**base, "mode": "retrieval"})]).agent is None
