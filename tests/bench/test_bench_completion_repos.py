"""``contenox bench completions`` takes any repository folder; the CLI fills in the eval set's by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox import cli
from contenox.bench import completions
from contenox.config import Config


def test_given_folders_pass_through_and_eval_names_are_checked(tmp_path: Path) -> None:
    argv = ["completions", "--repo", str(tmp_path), "--per-repo", "2"]
    assert cli._completion_repos(argv) == argv  # a folder given: nothing materialized
    assert cli._completion_repos(["completions", "--help"]) == ["completions", "--help"]
    with pytest.raises(SystemExit, match=r"not in the eval set: nosuchrepo .*known: .*itsdangerous"):
        cli._completion_repos(["completions", "--repos", "itsdangerous,nosuchrepo"])


def test_the_bench_names_a_missing_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        completions.main(Config(), [])
    assert "no repositories: pass --repo PATH" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        completions.main(Config(), ["--repo", str(tmp_path / "gone")])
    assert f"not a folder: {tmp_path / 'gone'}" in capsys.readouterr().err
