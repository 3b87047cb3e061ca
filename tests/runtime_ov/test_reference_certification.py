"""The certification made on the reference machine ships with contenox: a catalog model's weights are the same
bytes everywhere (sha256-checked on pull), so a fresh install gives the certified model its tools without running
``contenox certify``; this machine's own certification comes first; one made under other tool prompts or grammars
no longer holds."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from contenox.config import load_config
from contenox.node import backend
from contenox.node.agent import tool_policy_digest
from contenox.runtime_ov.catalog import PypiPartsSource, load_catalog
from contenox.runtime_ov.certification import (
    CERTIFICATION_FILE,
    Certification,
    read_certification,
    reference_records,
)


def _record(digest: str, *, certified: bool = True, policy: str = "") -> Certification:
    return Certification(model="m", model_digest=digest, date="2026-12-02", cases=80, tool_cases=43,
                         valid_calls=39 if certified else 15, valid_call_rate=0.907 if certified else 0.35,
                         false_calls=1, false_call_rate=0.027, schema_errors=1, certified=certified,
                         thresholds={}, by_kind={}, seconds=1.0, policy_digest=policy)


def test_the_shipped_record_certifies_the_catalogs_1_5b_under_this_checkouts_tool_policy() -> None:
    [record] = [r for r in reference_records() if r.model == "qwen2.5-coder-1.5b"]
    entry = load_catalog().resolve("qwen2.5-coder-1.5b")
    # a GGUF's model digest is its sha256, which the pull from PyPI checks
    assert [record.model_digest] == [s.sha256 for s in entry.sources if isinstance(s, PypiPartsSource)]
    assert record.certified and record.safe and record.valid_call_rate >= 0.8
    assert record.false_call_rate <= 0.04 and record.malformed_call_rate <= 0.02
    assert record.tool_check and record.require_call and not record.answers
    assert record.policy_digest == tool_policy_digest(), (
        "the tool prompts, grammars or call forms changed since the 1.5B was certified: run `contenox certify "
        "qwen2.5-coder-1.5b --out bench/results`, then scripts/ship-certification qwen2.5-coder-1.5b")


def test_this_machines_record_comes_first_and_other_weights_get_none(tmp_path: Path) -> None:
    shipped = tmp_path / "reference.json"
    shipped.write_bytes(msgspec.json.encode({"records": [_record("a" * 64)]}))
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    found = read_certification(model_dir, "a" * 64, references=shipped)
    assert found is not None and found.reference and found.certified
    assert read_certification(model_dir, "b" * 64, references=shipped) is None
    (model_dir / CERTIFICATION_FILE).write_bytes(msgspec.json.encode(_record("a" * 64, certified=False)))
    own = read_certification(model_dir, "a" * 64, references=shipped)
    assert own is not None and not own.reference and not own.certified  # this machine's says no
    shipped.write_text("{not json", encoding="utf-8")
    assert reference_records(shipped) == []


class _Profile(msgspec.Struct):
    model_digest: str


class _Model(msgspec.Struct):
    path: str


class _Engine:
    def __init__(self, model_dir: Path, digest: str) -> None:
        self.model = _Model(path=str(model_dir))
        self.profile = _Profile(model_digest=digest)
        self.tokenizer = None


@pytest.mark.parametrize(("policy", "tools", "note"), [
    ("current", True, ""),
    ("", True, ""),  # a record made before the digest was kept
    ("0" * 64, False, "certified under other tool prompts or grammars"),
])
def test_a_certification_under_another_tool_policy_gives_no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  policy: str, tools: bool, note: str) -> None:
    made: dict[str, object] = {}

    class Planner:
        def __init__(self, *args: object, tools: bool, tools_note: str, **kw: object) -> None:
            made.update(tools=tools, note=tools_note)

    import contenox.planner

    monkeypatch.setattr(contenox.planner, "Planner", Planner)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    digest = "c" * 64
    record = _record(digest, policy=tool_policy_digest() if policy == "current" else policy)
    (model_dir / CERTIFICATION_FILE).write_bytes(msgspec.json.encode(record))
    home = tmp_path / "home"
    home.mkdir()
    backend.make_planner(load_config(home), _Engine(model_dir, digest), tmp_path / "state")  # type: ignore[arg-type]
    assert made["tools"] is tools and note in str(made["note"])
