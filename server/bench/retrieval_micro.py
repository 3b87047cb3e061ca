"""Retrieval bench: plan-time cost of ``Workspace.retrieve`` on a warm index of the Python standard library.

    nice -n 10 contenox bench retrieval [--repeat 5] [--budget 3000] [--out bench/results]

Copies this interpreter's standard library (as ``contenox bench workspace`` does; a plain folder, no git),
opens it (tags cached under the temp dir), times the first retrieval (which chunks every file and builds
the BM25 postings), then times ~20 varied questions (mentions, prose, stack traces, a selection, a diff,
an edit between turns) ``--repeat`` times each on the warm index. Token counts use the real default model's
tokenizer when present. Writes ``<out>/retrieval_bench.json`` with median / p90 / spread and a hash of
every answer (equal hashes across repeats: deterministic). ``plan_turn_ms`` times a whole planned turn as the
node plans it (instructions, repo map, diff, retrieval, segments, tokens, manifest) per question.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import psutil

from contenox.bench.micro import MODEL, token_counter
from contenox.bench.micro import copy_stdlib as _copy_stdlib
from contenox.bench.micro import ms as _ms
from contenox.bench.micro import stats as _stats
from contenox.config import Config
from contenox.workspace import RetrievalQuery, Workspace

TRACE = ('Traceback (most recent call last):\n  File "/usr/lib/python3.11/argparse.py", line 1880, in parse_known_args\n'
         '  File "/usr/lib/python3.11/json/decoder.py", line 353, in raw_decode\n'
         "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n")
DIFF = ("--- a/json/decoder.py\n+++ b/json/decoder.py\n@@ -350,4 +350,5 @@ class JSONDecoder(object):\n"
        "         try:\n-            obj, end = self.scan_once(s, idx)\n+            obj, end = self.scan_once(s, idx)\n"
        "+            log(obj)\n         except StopIteration as err:\n")
QUESTIONS = [
    RetrievalQuery(text="How does json.loads decode a string?"),
    RetrievalQuery(text="Where is `HTTPConnection.request` implemented?"),
    RetrievalQuery(text="why does this fail?", terminal=TRACE),
    RetrievalQuery(text="how are thread pools shut down in concurrent futures"),
    RetrievalQuery(text="What does Path.resolve do with symlinks?"),
    RetrievalQuery(text="explain parse_qsl and how it splits the query string"),
    RetrievalQuery(text="what does this do?", open_file="asyncio/tasks.py", selection_lines=(420, 440)),
    RetrievalQuery(text="how does the logging module format a record timestamp"),
    RetrievalQuery(text="where is the default SSL context created"),
    RetrievalQuery(text="how does subprocess handle timeouts when communicating with a child"),
    RetrievalQuery(text="dataclass field with a default factory"),
    RetrievalQuery(text="textwrap dedent implementation"),
    RetrievalQuery(text="How does Decimal.quantize round?"),
    RetrievalQuery(text="How does `shutil.copytree` handle symlinks?"),
    RetrievalQuery(text="what is heapq.heappush"),
    RetrievalQuery(text="csv DictReader fieldnames when the header row is missing"),
    RetrievalQuery(text="review my change", diff=DIFF),
    RetrievalQuery(text="urllib.parse.urlsplit netloc parsing"),
    RetrievalQuery(text="extract all members of a zip archive in zipfile"),
    RetrievalQuery(text="how does argparse format the usage line?", selection="def _format_usage(self, usage, actions"),
]


def _plan_turns(config: Config, ws: Workspace, root: Path, count: Callable[[str], int], repeat: int) -> tuple[list[float], list[int]]:
    """A whole planned turn as the node plans it (build_inputs: instructions, repo map, diff, retrieval; then
    Planner.plan: segments, tokens, manifest) per question, on the warm index; [] without the real model."""
    from contenox.planner import Planner, build_inputs
    from contenox.runtime_ov.store import ModelStore
    from contenox.runtime_ov.tokenizer import load_tokenizer
    try:
        model = ModelStore(config.models_dir).get(MODEL)
    except Exception as exc:  # no model: the retrieval figures stand alone
        print(f"plan_turn skipped: {exc}", file=sys.stderr)
        return [], []
    tokenizer = load_tokenizer(model.weights)
    times: list[float] = []
    tokens: list[int] = []
    with tempfile.TemporaryDirectory(prefix="contenox-plan-bench-") as state:
        planner_config = config.planner
        for i, query in enumerate(QUESTIONS):
            planner = Planner(tokenizer, model.profile, planner_config, Path(state) / f"q{i}", backend_version="bench")
            for _ in range(repeat + 1):  # the first warms the planner's token cache for the fixed segments
                t0 = time.perf_counter()
                inputs = build_inputs(planner_config, ws, count, root=root, prompt=query.text, selection=query.selection,
                                      pins=(), terminal=query.terminal, thread="bench", reasons={})
                plan = planner.plan(inputs, lambda ids: 0)  # timed alone: no engine, nothing cached
                elapsed = time.perf_counter() - t0
            times.append(elapsed)
            tokens.append(len(plan.token_ids))
    return times, tokens


def main(config: Config, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="contenox bench retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--out", default="bench/results", help="where the JSON report goes")
    args = parser.parse_args(argv)
    count, tokenizer = token_counter(config)
    proc = psutil.Process()
    with tempfile.TemporaryDirectory(prefix="contenox-retrieval-bench-") as tmp:
        work = Path(tmp)
        root = _copy_stdlib(work / "stdlib")
        ws_config = config.workspace
        t0 = time.perf_counter()
        ws = Workspace.open(root, ws_config, work / "cache")
        cold_open = time.perf_counter() - t0
        rss0 = proc.memory_info().rss
        t0 = time.perf_counter()
        ws.retrieve(QUESTIONS[0], args.budget, count)
        build = time.perf_counter() - t0
        rss1 = proc.memory_info().rss
        t0 = time.perf_counter()
        ws.prepare()
        prepare = time.perf_counter() - t0
        status = ws.status()
        chunks = len(ws._retriever.chunks)
        times: list[float] = []
        per_question: list[dict[str, Any]] = []
        deterministic = True
        for query in QUESTIONS:
            mine: list[float] = []
            hashes: set[str] = set()
            result = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                result = ws.retrieve(query, args.budget, count)
                mine.append(time.perf_counter() - t0)
                hashes.add(hashlib.sha256(msgspec.json.encode(result)).hexdigest())
            assert result is not None
            deterministic = deterministic and len(hashes) == 1
            times.extend(mine)
            per_question.append({"question": query.text, "median_ms": _ms(sorted(mine)[len(mine) // 2]),
                                 "chunks": len(result.chunks), "used": result.used,
                                 "top": [f"{c.id} {c.name} {list(c.reasons)}" for c in result.chunks[:3]],
                                 "hash": sorted(hashes)[0][:16]})
        plan_times, plan_tokens = _plan_turns(config, ws, root, count, args.repeat)
        edit = root / "json" / "decoder.py"
        edit.write_text(edit.read_text() + "\n\ndef bench_added(x):\n    return x\n")
        t0 = time.perf_counter()
        ws.refresh([edit])
        refresh = time.perf_counter() - t0
        t0 = time.perf_counter()
        ws.retrieve(QUESTIONS[0], args.budget, count)
        after_edit = time.perf_counter() - t0
    stats = {k: (_ms(v) if k != "n" else v) for k, v in _stats(times).items()}
    report = {
        "bench": "retrieval", "tokenizer": tokenizer, "python": platform.python_version(), "cpus": psutil.cpu_count(),
        "budget_tokens": args.budget, "repeat": args.repeat, "corpus": "python-stdlib (copy, no git)",
        "files": status.files, "tagged_files": status.tagged_files, "definitions": status.definitions,
        "chunks": chunks, "cold_open_s": round(cold_open, 3), "chunk_index_build_s": round(build, 3),
        "prepare_compile_ms": _ms(prepare), "rss_mb_chunk_index": round((rss1 - rss0) / 2**20, 1),
        "retrieve_ms": stats, "refresh_after_edit_ms": _ms(refresh), "retrieve_after_edit_ms": _ms(after_edit),
        "plan_turn_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(plan_times).items()} if plan_times else None,
        "plan_turn_prompt_tokens_median": sorted(plan_tokens)[len(plan_tokens) // 2] if plan_tokens else None,
        "deterministic": deterministic, "questions": per_question,
    }
    out = Path(args.out) / "retrieval_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "questions"}, indent=1))
    for q in per_question:
        print(f"{q['median_ms']:>8} ms  {q['question'][:60]}")
    return 0

