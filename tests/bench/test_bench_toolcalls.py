"""``contenox bench toolcalls`` on the real Qwen2.5-Coder-0.5B, one short repeat: every arm is decoded from the
cached prompt, the required arm answers with a call, and the report holds each constrained arm's ratio to the same
answer unconstrained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contenox.bench.toolcalls import main
from contenox.config import load_config
from contenox.runtime_ov import InstalledModel

pytestmark = pytest.mark.slow


def test_the_report_compares_each_constrained_arm_with_the_same_answer_free(tmp_path: Path,
                                                                          fim_model: InstalledModel) -> None:
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / fim_model.name).symlink_to(fim_model.path, target_is_directory=True)
    (home / "config.toml").write_text('[engine]\ncache_size_gb = 0.3\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(load_config(home), ["--model", fim_model.name, "--repeats", "1", "--max-new-tokens", "24",
                                    "--out", str(out)]) == 0
    [written] = out.glob("*-toolcalls-*.json")
    report = json.loads(written.read_text())
    assert set(report["ratio_to_free"]) == {"prose, grammar armed", "call, under its schema", "call, required"}
    assert all(r > 0 for r in report["ratio_to_free"].values())
    runs = report["runs"]
    for run in (run for arm in runs.values() for run in arm):  # decoded from the cached prompt
        assert run["recomputed_prompt_tokens"] < run["prompt_tokens"] / 2
    assert runs["call, required"][0]["text"].lstrip().startswith(("<tool_call>", "```json"))
