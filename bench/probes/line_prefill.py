"""Probe: a line-level repair drawn whole or begun, under the line grammar's rules before and after 2026-12-03.

cachetools' TTLCache.expire with the eval's injected bug (ct-trace-ttl-expire), its buggy line 660 picked, the
node's line prompt (verify.focus.line_prompt); greedy + 3 samples (T 0.8, top-p 0.95) drawn as one group per arm.
Arms: ``whole`` (every line of the function decoded under the grammar: the node before a053f90, with the rules
of that commit), ``begun-old`` (the lines before the picked one prefilled, the draw ending at the line after it,
with those rules), ``begun`` (prefilled, with the current rules: more of the expression only after a line written
whole, and a block's opening line changed before its colon). ``fixed``: candidates whose line is a right fix.

Needs the eval's cachetools checkout (any ``contenox eval`` run over bench/eval/tasks/cachetools.toml builds
.cache/eval-repos/cachetools) and the old rules in a file: ``git show a053f90:server/verify/grammar.py >
/tmp/oldgrammar.py``. From the repository root:
``.venv/bin/python bench/probes/line_prefill.py qwen2.5-coder-1.5b /tmp/oldgrammar.py whole,begun-old,begun 1``.
Results: bench/results/2026-12-03-probe-line-prefill.txt.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import tomllib
from pathlib import Path

from contenox.runtime_ov import EngineOptions, GenerateRequest, Sampling, start_engine
from contenox.runtime_ov.store import ModelStore
from contenox.verify import line_repair
from contenox.verify.focus import FOCUS_SYSTEM, Place, line_prompt

RIGHT = ("not (time < curr.expires)", "time >= curr.expires", "curr.expires <= time")


def main(model: str, old_rules: str, arms: list[str], reps: int) -> None:
    spec = importlib.util.spec_from_file_location("oldgrammar", old_rules)
    assert spec is not None and spec.loader is not None
    old_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old_module)
    source = Path(".cache/eval-repos/cachetools/src/cachetools/__init__.py").read_text().splitlines()
    code = "\n".join(source[644:667]) + "\n"
    code = code.replace("while curr is not root and not (time < curr.expires):",
                        "while curr is not root and time > curr.expires:")
    lines = code.splitlines()
    index = next(i for i, line in enumerate(lines) if "while curr is not root" in line)
    tasks = tomllib.loads(Path("bench/eval/tasks/cachetools.toml").read_text())["task"]
    task = next(t for t in tasks if t["id"] == "ct-trace-ttl-expire")
    terminal = task["terminal"].strip()
    command = terminal.splitlines()[0].removeprefix("$ ")
    place = Place(name="TTLCache.expire", path="src/cachetools/__init__.py", start=645, end=667,
                  why="ran in the failing tests")
    user = line_prompt(place, code, index, command, "\n".join(terminal.splitlines()[1:]), "", task["ask"])
    new, old = line_repair(code, index), old_module.line_repair(code, index)
    # the whole function under the old rules: the fence and the lines before, the line's rules, the lines after
    root, *rules = old.grammar.split("\n")
    before = "".join(line + "\n" for line in lines[:index])
    after = "".join(line + "\n" for line in lines[index + 1:])
    ending = json.dumps(lines[index + 1] + "\n", ensure_ascii=False)
    assert root.endswith(ending)
    whole = root.replace("root ::= ", "root ::= " + json.dumps("```python\n") + " "
                         + json.dumps(before, ensure_ascii=False) + " ", 1)
    whole = whole[: -len(ending)] + json.dumps(after, ensure_ascii=False) + ' "```"'
    grammars = {"whole": "\n".join([whole, *rules]), "begun": new.grammar, "begun-old": old.grammar}
    installed = ModelStore(Path(".cache/test-home/models")).ensure(model)
    engine = start_engine(installed, EngineOptions(cache_size_gb=1.0, max_new_tokens=512), process=False)
    chat = engine.tokenizer.apply_chat_template([{"role": "system", "content": FOCUS_SYSTEM},
                                                 {"role": "user", "content": user}])
    base = list(engine.tokenizer.encode(chat))
    engine.submit(GenerateRequest(session_id="warm", token_ids=base, max_new_tokens=1)).wait(900)  # cached once
    for rep in range(reps):
        for arm in arms:
            ids = base if arm == "whole" else base + list(engine.tokenizer.encode(new.begun))
            started = time.perf_counter()
            handles = [engine.submit(GenerateRequest(
                session_id=f"{arm}{rep}{i}", token_ids=ids, max_new_tokens=512, grammar=grammars[arm],
                sampling=None if i == 0 else Sampling(temperature=0.8, top_p=0.95, seed=9001 + i + 10 * rep)))
                for i in range(4)]
            finals = [h.wait(1800) for h in handles]
            wall = time.perf_counter() - started
            texts = [f.text if arm == "whole" else new.answer(f.text) for f in finals]
            changed = [t.split("\n")[index + 1].strip() for t in texts]
            print(json.dumps({"model": model, "arm": arm, "rep": rep, "wall_s": round(wall, 1),
                              "decoded_tokens": [len(f.token_ids) for f in finals],
                              "finish": [f.finish_reason for f in finals], "line": changed,
                              "fixed": sum(1 for c in changed if any(r in c for r in RIGHT))},
                             ensure_ascii=False), flush=True)
    engine.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]) if len(sys.argv) > 4 else 2)
