"""``contenox certify`` on the real SmolLM2: it ends uncertified, the result is kept beside the model, and the
node's turns then say why tools are off (the fallback path: grounded context, no tool claim)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contenox import cli
from contenox.config import load_config
from contenox.eval.certify import SUITE
from contenox.runtime_ov import InstalledModel, ModelStore
from contenox.runtime_ov.certification import CERTIFICATION_FILE, read_certification

pytestmark = pytest.mark.slow


def test_the_suite_has_the_issue_s_shape() -> None:
    kinds = {c.kind for c in SUITE}
    assert len(SUITE) >= 50 and {"single", "multi-step", "no-tool", "temptation", "types", "refusal"} <= kinds
    assert sum(1 for c in SUITE if c.tool is None) >= 20


def test_smollm2_is_not_certified_and_its_turns_say_so(default_model: InstalledModel, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    model_dir = home / "models" / default_model.name
    model_dir.mkdir()
    for item in Path(default_model.path).iterdir():  # the files linked, the directory ours: the result lands here
        (model_dir / item.name).symlink_to(item)
    (home / "config.toml").write_text(f'[model]\ndefault = "{default_model.name}"\n')
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    assert cli.main(["certify", default_model.name, "--json", "--out", str(tmp_path / "out")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["cases"], result["tool_cases"]) == (60, 35) and result["certified"] is False
    assert result["valid_call_rate"] < 0.95
    model = ModelStore(load_config(home).models_dir).get(default_model.name)
    kept = read_certification(Path(model.path), model.profile.model_digest)
    assert kept is not None and kept.certified is False
    assert not (Path(default_model.path) / CERTIFICATION_FILE).exists()  # the shared model dir is untouched
    assert read_certification(Path(model.path), "0" * 64) is None  # made for other weights: ignored
    assert list((tmp_path / "out").glob(f"*-certify-{default_model.name}.json"))
    monkeypatch.setenv("COLUMNS", "250")  # one table row per model, unwrapped
    assert cli.main(["model", "list"]) == 0
    assert "not certified" in capsys.readouterr().out
    shutil.rmtree(home / "models")
