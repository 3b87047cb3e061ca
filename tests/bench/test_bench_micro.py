"""The per-layer micro-benchmarks are ``contenox bench`` subcommands on the configured models."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox import cli


def test_the_planner_bench_plans_with_the_installed_tokenizer(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "planner", "--tokens", "2048", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "only user text changed" in rows and "one pin edited (retokenize one)" in rows
    [cold, edited] = [line.split(": ")[1] for line in out.splitlines() if line.startswith("ids sha256")]
    assert len(cold) == len(edited) == 64 and cold != edited  # the edited pin changed the planned ids


def test_the_workspace_and_retrieval_benches_are_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("workspace", "retrieval"):
        with pytest.raises(SystemExit) as exited:
            cli.main(["bench", name, "--help"])
        assert exited.value.code == 0
        assert f"usage: contenox bench {name}" in capsys.readouterr().out
