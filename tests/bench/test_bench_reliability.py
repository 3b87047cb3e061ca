"""``contenox bench reliability`` end to end on a small load: its own node, the real test model, every section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contenox import cli

pytestmark = pytest.mark.slow


def test_the_reliability_report_holds_every_figure(home: Path, tmp_path: Path) -> None:
    code = cli.main(["bench", "reliability", "--windows", "2", "--threads", "1", "--requests", "10", "--prompts", "2",
                     "--cancels", "2", "--fuzz", "30", "--relay-fuzz", "20", "--memory-rounds", "2", "--memory-requests", "5", "--memory-prompts", "1", "--out", str(tmp_path)])
    [path] = tmp_path.glob("*-reliability-smollm2-135m.json")
    report = json.loads(path.read_text())
    assert (code, report.get("error")) == (0, None)
    figures = dict(report["figures"])
    assert figures.pop("node_rss_mb") == f"{report['memory']['node_rss_mb_first']} -> " \
                                         f"{report['memory']['node_rss_mb_last']}"
    assert isinstance(figures.pop("node_rss_growth_mb_per_round"), float)
    assert figures == {
        "requests": 22, "lost": 0, "misrouted": 0, "node_crashes": 0, "cancels_honoured_pct": 100.0,
        "fuzzed_messages": 90, "fuzz_probes_lost": 0, "relay_fuzzed_messages": 40, "relay_probes_lost": 0,
        "relay_exits": 0, "bad_inputs_structured": "11/11", "unopened_files_structured": "9/9",
        "status_during_bad_reads": "9/9", "connections_leaked": 0}
    assert [f["protocol"] for f in report["relay_fuzz"]] == ["lsp-relay", "acp-relay"]
    unopened = report["unopened_files"]["cases"]
    assert {c["case"].split(" on ")[0] for c in unopened} == {"hover", "inline completion", "explain selection"}
    assert all(c["kind"] == "workspace_error" and c["status_answers"] >= 1 for c in unopened)
    assert {c["reason"] for c in unopened if "3 MB" in c["case"]} == {"too_large"}
    assert {c["reason"] for c in unopened if "3 MB" not in c["case"]} == {"special"}
    memory = report["memory"]
    assert [r["round"] for r in memory["rounds"]] == [1, 2]
    assert all(r["node_rss_mb"] > 50 and r["engine_rss_mb"] > 50 for r in memory["rounds"])
    assert memory["rounds"][1]["turns"] > memory["rounds"][0]["turns"]  # each round asked real questions
    assert memory["kv_cache_capacity_mb"] > 0
    crashes = report["crashes"]
    assert crashes["engine_killed_mid_turn"]["turn_error"] == "engine_crashed"
    assert crashes["engine_killed_mid_turn"]["restarts"] == 1
    assert crashes["node_killed"]["new_pid"] and crashes["node_killed"]["turns_kept"]
