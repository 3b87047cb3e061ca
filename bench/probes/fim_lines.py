"""Probe: does the model's fill-in-the-middle put a bug's line back? (Cloze-style repair, AlphaRepair's route.)

The focused rewrite of the bug's own function is right 2 times in 110 with the 1.5B
(``bench/probes/focused_temperature.py``): asked to rewrite a function it believes correct, the chat model
mostly copies it or rewrites the wrong line. Cloze-style repair (Xia and Zhang, "Less training, more repairing
please", 2022) asks the model instead what each line *should* be: the line is taken out and the model fills the
gap from the code around it, the way it completes code in the editor. Qwen2.5-Coder has a fill-in-the-middle
format (the node's inline completions use it; llama.cpp serves it as ``/infill``), and a line it fills differently
from the file is a candidate change.

For each task with an injected one-line bug: every line of the function it is in (Python; ``--span`` lines either
side for other languages) is blanked past its indentation and filled (a fill that runs on into the code after it
is cut at its first line), greedy and ``--samples`` times at temperature 0.8 (top-p 0.95) as one group, in the
repo-level FIM form (``<|repo_name|>``, ``<|file_sep|>`` path,
``<|fim_prefix|>`` .. ``<|fim_suffix|>`` .. ``<|fim_middle|>``; the file around the line within ``--prefix-tokens``
and ``--suffix-tokens``). Each fill that differs from the line is laid in a fresh checkout and the task's grading
test runs. Per task: lines filled, fills that differ (the candidates), right ones, and whether the bug's line was
among them; per line, how its fills were graded.

Needs the eval repositories (any ``contenox eval`` run builds ``.cache/eval-repos``) and the model installed in
``.cache/test-home/models``. From the repository root: ``.venv/bin/python bench/probes/fim_lines.py
qwen2.5-coder-1.5b --out bench/results/X.json TASK...``.
"""

from __future__ import annotations

import argparse
import ast
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from contenox.eval.checkout import checkout, run_test
from contenox.eval.prepare import DEFAULT_TASKS_DIR, prepare
from contenox.planner.fim import FimTokens, build_fim_prompt, cursor_window, fim_support
from contenox.runtime_ov import EngineOptions, GenerateRequest, Sampling, start_engine
from contenox.runtime_ov.store import ModelStore
from contenox.verify.focus import filled_lines, insertion_points, pickable_lines
from contenox.workspace import changed_lines


def _span(path: str, text: str, line: int, span: int) -> tuple[int, int]:
    """The 1-based first and last line of the innermost Python function holding ``line``; elsewhere (or at module
    level) ``span`` lines either side."""
    if path.endswith(".py"):
        best: tuple[int, int] | None = None
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
                    node.end_lineno or node.lineno):
                if best is None or node.lineno >= best[0]:
                    best = (node.lineno, node.end_lineno or node.lineno)
        if best is not None:
            return best
    count = len(text.splitlines())
    return max(1, line - span), min(count, line + span)


def fim_engine(model: str, cache: Path) -> tuple[dict[str, Any], dict[str, Any], Any, FimTokens]:
    """The eval's tasks by id and their repositories (built in ``cache``), the model's engine in this process, and
    its FIM markers and stops (the node's inline completions' own)."""
    task_set, repos = prepare([DEFAULT_TASKS_DIR], cache)
    installed = ModelStore(Path(".cache/test-home/models")).ensure(model)
    engine = start_engine(installed, EngineOptions(cache_size_gb=1.0, max_new_tokens=64), process=False)
    support = fim_support(engine.profile, engine.tokenizer)
    assert support.tokens is not None, support.reason
    return {task.id: task for task in task_set.tasks}, repos, engine, support.tokens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--span", type=int, default=10)
    parser.add_argument("--prefix-tokens", type=int, default=1536)
    parser.add_argument("--suffix-tokens", type=int, default=512)
    parser.add_argument("--cache", type=Path, default=Path(".cache/eval-repos"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--insert", action="store_true",
                        help="fill a line put in at each insertion point of the function (a line the bug took out) "
                             "instead of each of its lines")
    args = parser.parse_args(argv)
    tasks, repos, engine, fim = fim_engine(args.model, args.cache)
    tok = engine.tokenizer
    rows: list[dict] = []
    try:
        for task_id in args.tasks:
            task = tasks[task_id]
            assert task.check is not None and task.inject
            (path, changed), = list(changed_lines(task.inject).items())[:1]
            bug = min(changed)
            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="fim-lines-") as scratch:
                tree = checkout(task, repos[task.repo], Path(scratch) / "tree")
                source = (tree / path).read_text()
                lines = source.split("\n")
                # a line the bug took out: the one after it is changed_lines' (maybe past the function)
                first, last = _span(path, source, bug - 1 if args.insert else bug, args.span)
                code = "\n".join(lines[first - 1:last])
                picked: list[tuple[int, int]] = [(first + i, -1) for i in pickable_lines(code, path)] \
                    if not args.insert else [(first + after + 1, width)
                                             for after, width in insertion_points(code, path)]
                candidates: dict[tuple[int, str], str] = {}
                per_line: list[dict] = []
                for number, width in picked:
                    # --insert: ``number`` is the line put in (its fill a new line, the lines around it
                    # staying); otherwise the line taken out and filled
                    current = "" if args.insert else lines[number - 1]
                    indent = " " * width if args.insert else current[:len(current) - len(current.lstrip())]
                    before, rest = lines[:number - 1], lines[number - 1:] if args.insert else lines[number:]
                    blanked = "\n".join([*before, indent, *rest])
                    window = cursor_window(blanked, len(before), len(indent), lambda s: len(tok.encode(s)),
                                           prefix_tokens=args.prefix_tokens, suffix_tokens=args.suffix_tokens)
                    prompt = build_fim_prompt(fim, tok, window, path, [], task.repo, lambda entry: "",
                                              named=True).token_ids
                    handles = [engine.submit(GenerateRequest(
                        session_id=f"{task_id}-{number}-{width}-{i}", token_ids=prompt, max_new_tokens=64,
                        stop_token_ids=fim.stops + (() if args.insert else tok.newline_ids()),
                        group=f"{task_id}-{number}-{width}",
                        sampling=None if i == 0 else Sampling(temperature=0.8, top_p=0.95, seed=7000 + i)))
                        for i in range(1 + args.samples)]
                    fills = [h.wait(900).text for h in handles]
                    mine: dict[str, str] = {}
                    for fill in fills:
                        # the line's own fill (one that runs on is cut there); a line put in that opens a block, with it
                        fill = filled_lines(fill, len(indent), args.insert)
                        new = indent + fill
                        if new.rstrip() == current.rstrip() or not fill.strip() or new in mine or (
                                args.insert and new.strip() in (before[-1].strip(), (rest or [""])[0].strip())):
                            mine.setdefault(new, "unchanged" if new.rstrip() == current.rstrip() else "empty")
                            continue
                        key = (number, new)  # (an inserted line's fill holds its indent)
                        if key not in candidates:
                            changed_source = "\n".join([*before, new, *rest])
                            (tree / path).write_text(changed_source)
                            candidates[key] = "right" if run_test(task, tree, timeout=120.0).passed else "wrong"
                            (tree / path).write_text(source)
                        mine[new] = candidates[key]
                    per_line.append({"line": number, "bug": number == bug, "inserted": args.insert, "current": current,
                                     "greedy": indent + filled_lines(fills[0], len(indent), args.insert),
                                     "ran_on": sum(1 for f in fills if "\n" in f.rstrip("\n")),
                                     "fills": [{"text": t, "grade": g} for t, g in mine.items()]})
                    print(json.dumps({"task": task_id, "line": number, "bug": number == bug,
                                      "grades": list(mine.values())}), flush=True)
            bug_grades = [f["grade"] for row in per_line if row["bug"] for f in row["fills"]]
            row = {"task": task_id, "path": path, "bug_line": bug, "lines": len(picked),
                   "candidates": len(candidates), "right": sum(1 for g in candidates.values() if g == "right"),
                   "bug_line_filled_right": "right" in bug_grades,
                   "greedy_right": any(r["bug"] and r["greedy"] in [f["text"] for f in r["fills"]
                                                                    if f["grade"] == "right"] for r in per_line),
                   "wall_s": round(time.perf_counter() - started, 1), "per_line": per_line}
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "per_line"}), flush=True)
            args.out.write_text(json.dumps({"model": args.model, "samples": args.samples, "insert": args.insert,
                                            "rows": rows},
                                           indent=1) + "\n")
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
