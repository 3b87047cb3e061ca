"""Probe: a line-level repair drawn whole or begun, under the line grammar's rules before and after 2026-12-03.

cachetools' TTLCache.expire with the eval's injected bug (ct-trace-ttl-expire), its buggy line 660 picked, the
node's line prompt (verify.focus.line_prompt); greedy + 3 samples (T 0.8, top-p 0.95) drawn as one group per arm.
Arms: ``whole`` (every line of the function decoded under the grammar: the node before a053f90, with the rules
of that commit), ``begun-old`` (the lines before the picked one prefilled, the draw ending at the line after it,
with those rules), ``begun`` (prefilled, with the current rules: more of the expression only after a line written
whole, and a block's opening line changed before its colon). ``fixed``: candidates whose line is a right fix.

Needs the eval's cachetools checkout (any ``contenox eval`` run over bench/eval/tasks/cachetools.toml builds
.cache/eval-repos/cachetools) and the old rules: ``git show a053f90:server/verify/grammar.py >
/tmp/probe/oldgrammar.py``. Run from the repository root:
``.venv/bin/python bench/probes/line_prefill.py qwen2.5-coder-1.5b whole,begun-old,begun 1``."""
import json, sys, time, tomllib
from pathlib import Path
from contenox.runtime_ov import EngineOptions, GenerateRequest, Sampling, start_engine
from contenox.runtime_ov.store import ModelStore
from contenox.verify import line_repair
sys.path.insert(0, '/tmp/probe')
from oldgrammar import line_repair as old_line_repair
from contenox.verify.focus import FOCUS_SYSTEM, Place, line_prompt

model = sys.argv[1]
src = Path(".cache/eval-repos/cachetools/src/cachetools/__init__.py").read_text().splitlines()
code = "\n".join(src[644:667]) + "\n"
code = code.replace("while curr is not root and not (time < curr.expires):", "while curr is not root and time > curr.expires:")
lines = code.splitlines()
index = next(i for i, l in enumerate(lines) if "while curr is not root" in l)
task = next(t for t in tomllib.loads(Path("bench/eval/tasks/cachetools.toml").read_text())["task"] if t["id"] == "ct-trace-ttl-expire")
terminal = task["terminal"].strip()
command = terminal.splitlines()[0].removeprefix("$ ")
place = Place(name="TTLCache.expire", path="src/cachetools/__init__.py", start=645, end=667, why="ran in the failing tests")
user = line_prompt(place, code, index, command, "\n".join(terminal.splitlines()[1:]), "", task["ask"])
new = line_repair(code, index)
old = old_line_repair(code, index)
root, *rules = old.grammar.split("\n")
after = "".join(l + "\n" for l in lines[index + 1:])
before = "".join(l + "\n" for l in lines[:index])
old_root = root.replace("root ::= ", "root ::= " + json.dumps("```python\n") + " " + json.dumps(before, ensure_ascii=False) + " ", 1)
ending = json.dumps(lines[index + 1] + "\n", ensure_ascii=False)
assert old_root.endswith(ending)
old_root = old_root[: -len(ending)] + json.dumps(after, ensure_ascii=False) + ' "```"'
old_grammar = "\n".join([old_root, *rules])
m = ModelStore(Path(".cache/test-home/models")).ensure(model)
eng = start_engine(m, EngineOptions(cache_size_gb=1.0, max_new_tokens=512), process=False)
chat = eng.tokenizer.apply_chat_template([{"role": "system", "content": FOCUS_SYSTEM}, {"role": "user", "content": user}])
base = list(eng.tokenizer.encode(chat))
eng.submit(GenerateRequest(session_id="warm", token_ids=base, max_new_tokens=1)).wait(900)  # the prompt cached once
right = ("not (time < curr.expires)", "time >= curr.expires", "curr.expires <= time")
out = {"model": model, "prompt_tokens": len(base), "runs": []}
for rep in range(int(sys.argv[3]) if len(sys.argv) > 3 else 2):
    for arm in (sys.argv[2].split(",") if len(sys.argv) > 2 else ("whole", "begun")):
        ids = base if arm == "whole" else base + list(eng.tokenizer.encode(new.begun))
        grammar = {"whole": old_grammar, "begun": new.grammar, "begun-old": old.grammar}[arm]
        t0 = time.perf_counter()
        handles = [eng.submit(GenerateRequest(session_id=f"{arm}{rep}{i}", token_ids=ids, max_new_tokens=512, grammar=grammar,
                                              sampling=None if i == 0 else Sampling(temperature=0.8, top_p=0.95, seed=9000 + i + 1 + 10 * rep)))
                   for i in range(4)]
        finals = [h.wait(1800) for h in handles]
        wall = time.perf_counter() - t0
        texts = [f.text if arm == "whole" else new.answer(f.text) for f in finals]
        changed = [t.split("\n")[index + 1].strip() for t in texts]
        run = {"arm": arm, "rep": rep, "wall_s": round(wall, 1), "decoded_tokens": [len(f.token_ids) for f in finals],
               "finish": [f.finish_reason for f in finals], "line": changed,
               "fixed": sum(1 for c in changed if any(r in c for r in right))}
        out["runs"].append(run)
        print(json.dumps(run), flush=True)
eng.close()
print(json.dumps(out))
