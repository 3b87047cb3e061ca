"""``contenox certify MODEL``: can this model call tools reliably? A fixed suite on the real model.

60 prompts, each rendered with the model's own chat template and the node's tool schemas (the way the
template renders tools), answered greedily, and parsed with the strict parser
(:mod:`contenox.planner.toolcalls`):
- 35 that need a tool: single calls of each tool, an integer argument, a two-step task (its first call),
  and wrong-tool temptations (a symbol to find, not a file to read);
- 25 that need none: general questions, code to write from scratch, and requests no tool can serve (refusals).
A call counts as valid only when it parses, names the expected tool and its arguments hold the expected
values. Figures: valid-call rate (over the 35), false-call rate (any call over the 25), schema errors (rejected
``<tool_call>`` markup). Certified when valid >= 95% and false <= 2% (the profile's thresholds, issue 14).
The result is written beside the model (``contenox-certification.json``) and shown by ``contenox model list``.
"""

from __future__ import annotations

import json
import time
from datetime import date
from typing import Any

import msgspec

from contenox.planner.prompts import load_prompts
from contenox.planner.toolcalls import parse_tool_calls, schemas_of
from contenox.runtime_ov.certification import Certification

__all__ = ["SUITE", "certify"]

VALID_MIN = 0.95
FALSE_MAX = 0.02
_SYSTEM = ("You are Contenox, a coding assistant working in the user's repository. You can call the tools "
           "below when you need to read, search or change the workspace; answer directly when you do not.")


class Case(msgspec.Struct, frozen=True):
    kind: str
    prompt: str
    tool: str | None
    expect: dict[str, Any] = {}


def _suite() -> tuple[Case, ...]:
    files = ["src/app.py", "README.md", "config/settings.toml", "lib/parser.js", "tests/test_api.py",
             "docs/guide.md", "server/main.go", "Cargo.toml"]
    symbols = ["parse_config", "UserService", "render_page", "TokenBucket", "load_settings", "handleRequest",
               "Matrix.multiply", "retry_with_backoff"]
    cases = [Case("single", f"Show me the contents of {f}.", "read_file", {"path": f}) for f in files[:4]]
    cases += [Case("single", f"Open {f} so we can review it.", "read_file", {"path": f}) for f in files[4:]]
    cases += [Case("single", f"Where is `{s}` defined in this repository?", "find_symbol", {"name": s})
              for s in symbols[:5]]
    cases += [Case("temptation", f"I don't know which file has `{s}`; find its definition.", "find_symbol",
                   {"name": s}) for s in symbols[5:]]
    patterns = ["TODO", "print\\(", "import os", "deprecated", "FIXME"]
    cases += [Case("single", f"Search the codebase for the regular expression `{p}`.", "search", {"pattern": p})
              for p in patterns]
    cases += [Case("types", f"Search for `{p}` and return at most {n} results.", "search",
                   {"pattern": p, "limit": n}) for p, n in (("assert", 5), ("async def", 3))]
    cases += [Case("single", f"In {f}, {change} Propose the edit.", "propose_edit", {"path": f}) for f, change in (
        ("src/app.py", "rename the variable `cfg` to `config`."),
        ("config/settings.toml", "change the port from 8000 to 8080."),
        ("lib/parser.js", "add a semicolon at the end of line 3."),
        ("tests/test_api.py", "rename test_login to test_login_succeeds."),
        ("server/main.go", "change the listen address to :9090."))]
    cases += [Case("multi-step", f"Find where `{s}` is defined, then show me that whole file.", "find_symbol",
                   {"name": s}) for s in ("parse_config", "TokenBucket", "render_page")]
    cases += [Case("single", f"List the files in the {d} folder.", "list_files", {"path": d}) for d in ("src", "tests")]
    cases += [Case("single", f"Run the tests with `{c}` and tell me what fails.", "run_command", {"command": c})
              for c in ("pytest -q", "npm test")]
    general = ["What does HTTP status 404 mean?", "Explain what a mutex is in one paragraph.",
               "Write a Python function that reverses a string.", "What is the difference between a list and a "
               "tuple in Python?", "How do I create a virtual environment with venv?", "What is big-O notation?",
               "Write a JavaScript arrow function that adds two numbers.", "What does `git rebase` do?",
               "Explain recursion with a short example.", "What is a race condition?",
               "Write a SQL query that counts rows in a table named users.", "What is dependency injection?",
               "How does a hash map handle collisions?", "Write a regular expression that matches an email "
               "address.", "What is the difference between TCP and UDP?", "Translate 'hello world' to French.",
               "What is 17 times 23?", "Write a haiku about compilers.", "What is a closure in JavaScript?",
               "Explain what REST means."]
    cases += [Case("no-tool", q, None) for q in general]
    refusals = ["Delete the .git directory of this repository.", "Run `rm -rf /` on my machine.",
                "Push my changes to GitHub.", "Email this diff to my manager.", "Install numpy globally with sudo."]
    cases += [Case("refusal", q, None) for q in refusals]
    return tuple(cases)


SUITE = _suite()


def _matches(arguments: dict[str, Any], expect: dict[str, Any]) -> bool:
    for key, value in expect.items():
        got = arguments.get(key)
        if isinstance(value, str):
            if not isinstance(got, str) or value.lower().replace("\\", "") not in got.lower().replace("\\", ""):
                return False
        elif got != value:
            return False
    return True


def certify(engine: Any, *, max_new_tokens: int = 96) -> Certification:
    """Run the suite on ``engine`` (the Engine surface) and score it."""
    from contenox.runtime_ov import GenerateRequest

    definitions = [json.loads(line) for line in load_prompts().tools.splitlines()]
    tools = [{"type": "function", "function": d} for d in definitions]
    schemas = schemas_of(definitions)
    started = time.monotonic()
    valid = false = schema_errors = 0
    by_kind: dict[str, list[int]] = {}
    examples: list[dict[str, Any]] = []
    for case in SUITE:
        text = engine.tokenizer.apply_chat_template([{"role": "system", "content": _SYSTEM},
                                                     {"role": "user", "content": case.prompt}], tools=tools)
        final = engine.generate(GenerateRequest(session_id="certify", token_ids=engine.tokenizer.encode(text),
                                                max_new_tokens=max_new_tokens), timeout=600)
        parsed = parse_tool_calls(final.text, schemas)
        schema_errors += len(parsed.errors)
        if case.tool is None:
            ok = not parsed.calls and not parsed.errors
            false += 0 if ok else 1
        else:
            first = parsed.calls[0] if parsed.calls else None
            ok = first is not None and first.name == case.tool and _matches(first.arguments, case.expect)
            valid += 1 if ok else 0
        tally = by_kind.setdefault(case.kind, [0, 0])
        tally[0] += 1 if ok else 0
        tally[1] += 1
        if not ok and len(examples) < 12:
            examples.append({"kind": case.kind, "prompt": case.prompt, "expected": case.tool,
                             "answer": final.text[:300], "errors": list(parsed.errors)})
    tool_cases = sum(1 for c in SUITE if c.tool is not None)
    plain = len(SUITE) - tool_cases
    valid_rate, false_rate = valid / tool_cases, false / plain
    profile = engine.profile
    return Certification(
        model=engine.model.name, model_digest=profile.model_digest, date=date.today().isoformat(), cases=len(SUITE),
        tool_cases=tool_cases, valid_calls=valid, valid_call_rate=round(valid_rate, 4), false_calls=false,
        false_call_rate=round(false_rate, 4), schema_errors=schema_errors,
        certified=valid_rate >= VALID_MIN and false_rate <= FALSE_MAX,
        thresholds={"valid_call_rate_min": VALID_MIN, "false_call_rate_max": FALSE_MAX}, by_kind=by_kind,
        seconds=round(time.monotonic() - started, 1), examples=examples)
