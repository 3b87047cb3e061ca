"""``contenox certify`` on the real SmolLM2: it ends uncertified, the result is kept beside the model, and the
node's turns then say why tools are off (the fallback path: grounded context, no tool claim)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from contenox import cli
from contenox.answer.toolcalls import schemas_of
from contenox.certify import HELD_OUT, SUITE, Case, certify, out_of_reach
from contenox.config import load_config
from contenox.planner.prompts import load_prompts
from contenox.planner.toolcheck import GRAMMAR, KIND_GRAMMAR, TEXT_ONLY_GRAMMAR, request_refusal
from contenox.runtime_ov import FinalEvent, GenerateRequest, InstalledModel, ModelStore, RequestMetrics
from contenox.runtime_ov.certification import CERTIFICATION_FILE, read_certification
from support.weights import link_model


def test_the_suite_has_the_issue_s_shape() -> None:
    kinds = {c.kind for c in SUITE}
    assert len(SUITE) == 80 and {"single", "multi-step", "no-tool", "temptation", "types", "refusal",
                                 "json-example", "mentions-tool"} <= kinds
    assert sum(1 for c in SUITE if c.tool is None) >= 35
    assert all(c.tokens >= 512 for c in SUITE if c.tool == "propose_edit")  # a diff needs room


class _Tokenizer:
    def __init__(self) -> None:
        self.systems: set[str] = set()

    def apply_chat_template(self, messages: list[dict[str, str]], tools: object = None) -> str:
        self.systems.add(messages[0]["content"])
        return messages[-1]["content"]

    def encode(self, text: str) -> list[int]:
        return [ord(ch) for ch in text]


class _Engine:
    """Answers each case as ``answer(case)`` says, and the tool check as ``check(case)`` does: the scoring,
    without a model."""

    def __init__(self, answer: Callable[[Case], str], check: Callable[[Case], str] = lambda case: "yes",
                 kind: Callable[[Case], str] = lambda case: "repo") -> None:
        self.tokenizer = _Tokenizer()
        self.model = SimpleNamespace(name="fake")
        self.profile = SimpleNamespace(model_digest="0" * 64)
        self.by_prompt = {c.prompt: c for c in (*SUITE, *HELD_OUT)}
        self.answer = answer
        self.check = check
        self.kind = kind
        self.requests: list[GenerateRequest] = []

    def generate(self, request: GenerateRequest, timeout: float) -> FinalEvent:
        self.requests.append(request)
        content = "".join(map(chr, request.token_ids))
        if request.grammar in (GRAMMAR, KIND_GRAMMAR):
            case = self.by_prompt[content.removeprefix("Request: ")]
            text = self.check(case) if request.grammar == GRAMMAR else self.kind(case)
        else:
            text = self.answer(self.by_prompt[content.split("\n\n")[0]])
        return FinalEvent(text=text, token_ids=[], finish_reason="stop", metrics=_METRICS)


_METRICS = RequestMetrics(prompt_tokens=1, predicted_cached_tokens=0, measured_recomputed_tokens=1, prefill_steps=1,
                          chunk_tokens=1, ttft_ms=1.0, prefill_tps=1.0, decode_tps=1.0, generated_tokens=1,
                          total_ms=1.0, cache_used_tokens=0, cache_capacity_tokens=1, peak_rss_bytes=1)


def _right(case: Case) -> str:
    if case.tool is None:
        return "An answer in words."
    arguments = {**{"path": "x", "name": "x", "pattern": "x", "command": "x", "diff": "d"}, **case.expect}
    required = schemas_of([json.loads(line) for line in load_prompts().tools.splitlines()])[case.tool]["properties"]
    body = {"name": case.tool, "arguments": {k: v for k, v in arguments.items() if k in required}}
    return "```json\n" + json.dumps(body, indent=2) + "\n```"


def _spoil(kind: str, count: int, wrong: str) -> Callable[[Case], str]:
    spoiled = {c.prompt for c in SUITE if c.kind == kind}
    chosen = set(sorted(spoiled)[:count])
    return lambda case: wrong if case.prompt in chosen else _right(case)


CALL = '```json\n{"name": "run_command", "arguments": {"command": "rm -rf /"}}\n```'
CUT = '```json\n{"name": "read_file", "arguments": {"path": "src/'


@pytest.mark.parametrize(("answer", "safe", "certified"), [
    (_right, True, True),
    (_spoil("refusal", 1, CALL), True, True),  # 1/37 false calls: within 4%
    (_spoil("refusal", 2, CALL), False, False),  # 2/37 = 5.4%: not safe, whatever the reach
    (_spoil("no-tool", 1, CUT), True, True),  # 1/80 malformed (and a false call)
    (_spoil("single", 2, CUT), False, False),  # 2/80 = 2.5% malformed
    (_spoil("single", 9, "I cannot."), True, False),  # safe, reach 34/43 = 79%
])
def test_safety_and_reach_decide_certification(answer: Callable[[Case], str], safe: bool, certified: bool) -> None:
    engine = _Engine(answer)
    result = certify(engine, check=False, full=True)
    assert (result.safe, result.certified) == (safe, certified)
    assert result.cases == 80 and len(result.answers) == 80 + len(HELD_OUT) and not result.tool_check
    assert not result.stopped
    assert all(r.tool_calls is not None for r in engine.requests)  # answered under the tool-call grammar
    assert max(r.max_new_tokens for r in engine.requests) >= 512
    [system] = engine.tokenizer.systems  # the node's tool policy, as its tool-enabled turns carry it
    assert system.endswith("\n\n" + load_prompts().tool_policy) and "answer in plain text" in system


@pytest.mark.parametrize(("answer", "why"), [
    (_spoil("single", 9, "I cannot."), "9 of 43 tool cases failed"),
    (_spoil("refusal", 2, CALL), "2 false calls"),
    (_spoil("single", 2, CUT), "2 malformed calls"),
])
def test_the_suite_stops_once_the_model_can_no_longer_be_certified(answer: Callable[[Case], str], why: str) -> None:
    stopped = certify(_Engine(answer), check=False)
    assert stopped.stopped.startswith(f"stopped after {stopped.cases} of 80 cases: {why}")
    assert not stopped.certified and stopped.suite_cases == 80 and stopped.cases < 80
    assert len(stopped.answers) == stopped.cases and stopped.held_out == {}  # the held-out prompts not asked
    assert not stopped.answers[-1]["ok"]  # the case that settled it is the last one run
    assert out_of_reach(stopped.answers[:-1]) == ""  # and not one case earlier
    assert certify(_Engine(_right), check=False).stopped == ""  # a model that passes runs every case


def test_a_no_from_the_tool_check_answers_in_text_and_a_call_written_anyway_still_counts() -> None:
    text_only = load_prompts().text_only
    plain_cases = [c for c in SUITE if c.tool is None]
    stubborn = plain_cases[0]  # the check says no, and the model calls a tool all the same
    missed = next(c for c in SUITE if c.tool == "read_file")  # the check wrongly says no: the reach is lost

    def answer(case: Case) -> str:
        if case is stubborn:
            return CALL
        told = "".join(map(chr, engine.requests[-1].token_ids)).endswith(text_only)
        return "In words, as told." if told else _right(case)

    engine = _Engine(answer, check=lambda case: "no" if case.tool is None or case is missed else "yes")
    result = certify(engine)
    assert result.tool_check and result.false_calls == 1 and result.valid_calls == result.tool_cases - 1
    by_case = {a["prompt"]: a for a in result.answers}
    assert by_case[stubborn.prompt]["tool_check"] == "no" and not by_case[stubborn.prompt]["ok"]
    asked = [r for r in engine.requests if r.grammar not in (GRAMMAR, KIND_GRAMMAR)]
    checks = [r for r in engine.requests if r.grammar == GRAMMAR]
    kinds = [r for r in engine.requests if r.grammar == KIND_GRAMMAR]
    refused = [c for c in (*SUITE, *HELD_OUT) if request_refusal(c.prompt)]  # no model asked: the node refuses
    assert len(asked) == 80 + len(HELD_OUT) and len(checks) == len(kinds) == len(asked) - len(refused)
    assert refused and all(c.tool is None for c in refused)
    assert all(a["tool_check_why"].startswith("the request asks to") for a in result.answers
               if any(a["prompt"] == c.prompt for c in refused))
    for request in asked:  # a no: the text-only line after the question, and no call grammar
        content = "".join(map(chr, request.token_ids))
        said_no = content.endswith("\n\n" + text_only)
        assert said_no == (request.tool_calls is None) == (request.grammar == TEXT_ONLY_GRAMMAR)
    assert sum(1 for r in asked if r.tool_calls is None) == len(plain_cases) + 1 + sum(
        1 for c in HELD_OUT if c.tool is None)
    held = result.held_out
    assert (held["tool_cases"], held["plain_cases"]) == (20, 18) and held["false_calls"] == 0
    assert {k: (v["tool_cases"], v["plain_cases"]) for k, v in held["by_set"].items()} == {
        "held-out": (12, 10), "held-out-2": (8, 8)}  # each set reported on its own too
    assert not result.require_call and all(r.tool_calls is None or not r.tool_calls.required for r in asked)


def test_the_second_question_takes_the_tools_when_it_answers_code_or_text() -> None:
    """Either phrasing can take the tools: a yes to "needs a tool?" with "code" for what kind of request answers in
    text, as a no does."""
    written = next(c for c in SUITE if c.kind == "mentions-tool")  # code named like a tool
    engine = _Engine(lambda case: CALL if case is written else _right(case),
                     kind=lambda case: "code" if case is written else "repo")
    result = certify(engine)
    by_case = {a["prompt"]: a for a in result.answers}
    assert by_case[written.prompt]["tool_check"] == "no"
    assert by_case[written.prompt]["tool_check_why"] == "the tool check answered no (needs a tool: yes; kind: code)"
    assert result.false_calls == 1  # told to answer in text, the call it wrote anyway still counts


def test_a_yes_from_the_tool_check_requires_a_call_when_asked() -> None:
    engine = _Engine(_right, check=lambda case: "no" if case.tool is None else "yes")
    result = certify(engine, require_call=True)
    assert result.require_call and result.certified
    asked = [r for r in engine.requests if r.tool_calls is not None]
    assert len(asked) == 43 + 20 and all(r.tool_calls is not None and r.tool_calls.required for r in asked)  # every yes: a call required
    assert not certify(_Engine(_right), check=False, require_call=True).require_call  # no check: nothing required


@pytest.mark.slow
def test_smollm2_is_not_certified_and_its_turns_say_so(default_model: InstalledModel, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    link_model(default_model, home / "models" / default_model.name)  # the directory ours: the result lands here
    # The suite without the check (with it, each yes makes a required call that runs to its token limit on
    # SmolLM2: minutes of CI for the same verdict; the check's path is tested above with scripted answers).
    (home / "config.toml").write_text(f'[model]\ndefault = "{default_model.name}"\n\n[tools]\ncheck = false\n')
    monkeypatch.setenv("CONTENOX_HOME", str(home))
    assert cli.main(["certify", default_model.name, "--json", "--out", str(tmp_path / "out")]) == 0
    result = json.loads(capsys.readouterr().out)
    # stopped once certification was out of reach: the verdict of the whole suite, in a fraction of its time
    assert result["suite_cases"] == 80 and result["cases"] < 80 and result["certified"] is False
    assert result["stopped"].startswith(f"stopped after {result['cases']} of 80 cases")
    assert result["valid_call_rate"] < 0.8
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
