"""Probe: at the bug's own function, how often is a focused rewrite right, by sampling temperature?

The verified runs' candidates pass their grading test 1.2% of the time (``bench/probes/oracle.py``), and the
offered answer was right whenever any candidate was: the drawing fails, not the choice. This probe takes
localization out: for each task, the function its injected bug is in (the place a perfect localization gives),
the node's focused prompt (``verify.focus.focus_prompt``: the question, the failing run, the failing test, the
function) and its grammar (the function's own first line, then the body), drawn greedy and then ``--samples``
times at each temperature (top-p 0.95) as one group. Each rewrite replaces the function in a fresh checkout of the
task (its bug injected) and the task's grading test runs. Per task and temperature: rewrites drawn, distinct, the
same as the buggy function, that do not parse, right (the test passes).

Needs the eval repositories (any ``contenox eval`` run builds ``.cache/eval-repos``) and the model installed in
``.cache/test-home/models``. From the repository root: ``.venv/bin/python bench/probes/focused_temperature.py
qwen2.5-coder-1.5b --temperatures 0.3,0.6,0.8 --samples 7 --out bench/results/X.json TASK...``.
"""

from __future__ import annotations

import argparse
import ast
import json
import tempfile
import textwrap
import time
from pathlib import Path

from contenox.eval.checkout import checkout, run_test
from contenox.eval.prepare import DEFAULT_TASKS_DIR, prepare
from contenox.runtime_ov import EngineOptions, GenerateRequest, Sampling, start_engine
from contenox.runtime_ov.store import ModelStore
from contenox.verify.focus import FOCUS_SYSTEM, Place, failing_test_frames, focus_prompt, for_language
from contenox.verify.grammar import function_grammar
from contenox.workspace import changed_lines


def _function_at(text: str, line: int) -> tuple[str, int, int] | None:
    """The innermost function of Python ``text`` holding 1-based ``line``: (qualified name, first, last line)."""
    best: tuple[str, int, int] | None = None

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                if isinstance(child, ast.ClassDef):
                    visit(child, name + ".")
                elif child.lineno <= line <= (child.end_lineno or child.lineno):
                    best = (name, first, child.end_lineno or child.lineno)
                    visit(child, name + ".")

    visit(ast.parse(text), "")
    return best


def _test_code(output: str, tree: Path) -> str:
    for path, line, function in failing_test_frames(output, tree):
        text = (tree / path).read_text()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == function and (
                    not line or node.lineno <= line <= (node.end_lineno or node.lineno)):
                return "\n".join(text.splitlines()[node.lineno - 1:node.end_lineno])
    return ""


_THINK = ("Before the code, write one or two sentences: which line of `{name}` is wrong and why (what the check "
          "expects against what it got). Then reply with the whole corrected function in one ```python code block.")
"""``--think``: the rewrite's last instruction when the model reasons first (chain of thought before the code)."""


def _think_grammar(first_line: str) -> str:
    """:func:`function_grammar` after up to three lines of prose (the reasoning ``--think`` asks for)."""
    rules = function_grammar(first_line).split("\n")
    return "\n".join([rules[0].replace("root ::= ", 'root ::= reason{1,3} "\\n"? ', 1), *rules[1:],
                      'reason ::= [^`\\n] [^\\n]* "\\n"'])


def _rewrite(answer: str) -> str | None:
    """The function an answer drawn under the grammar holds (its fenced body), or None."""
    answer = answer[answer.find("```"):] if "```" in answer else ""
    body = answer.split("\n", 1)[1] if "\n" in answer else ""
    return body.rsplit("```", 1)[0] if "```" in body else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--temperatures", default="0.3,0.6,0.8")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--cache", type=Path, default=Path(".cache/eval-repos"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--think", action="store_true", help="the model reasons in prose before the rewrite")
    args = parser.parse_args(argv)
    temperatures = [float(t) for t in args.temperatures.split(",")]
    task_set, repos = prepare([DEFAULT_TASKS_DIR], args.cache)
    tasks = {task.id: task for task in task_set.tasks}
    installed = ModelStore(Path(".cache/test-home/models")).ensure(args.model)
    engine = start_engine(installed, EngineOptions(cache_size_gb=1.0, max_new_tokens=512), process=False)
    rows: list[dict] = []
    try:
        for task_id in args.tasks:
            task = tasks[task_id]
            assert task.check is not None
            (path, lines), = list(changed_lines(task.inject).items())[:1]
            with tempfile.TemporaryDirectory(prefix="focused-temp-") as scratch:
                tree = checkout(task, repos[task.repo], Path(scratch) / "tree")
                source = (tree / path).read_text()
                found = _function_at(source, min(lines))
                assert found is not None, (task_id, path, lines)
                name, first, last = found
                code = "\n".join(source.splitlines()[first - 1:last])
                terminal = task.terminal.strip().splitlines()
                command, output = terminal[0].removeprefix("$ "), "\n".join(terminal[1:])
                place = Place(name=name, path=path, start=first, end=last, why="the bug's function (given)")
                user = focus_prompt(place, code, command, output, _test_code(output, tree), task.ask)
                if args.think:
                    user = user.rsplit("\n\n", 1)[0] + "\n\n" + _THINK.format(name=name)
                chat = engine.tokenizer.apply_chat_template([
                    {"role": "system", "content": for_language(FOCUS_SYSTEM, path)}, {"role": "user", "content": user}])
                ids = list(engine.tokenizer.encode(chat))
                grammar = (_think_grammar if args.think else function_grammar)(code.splitlines()[0])
                engine.submit(GenerateRequest(session_id=f"{task_id}-warm", token_ids=ids, max_new_tokens=1)).wait(900)
                arms: list[tuple[str, Sampling | None, int]] = [("greedy", None, 1)] + [
                    (f"T{t}", Sampling(temperature=t, top_p=0.95, seed=7000), args.samples) for t in temperatures]
                for arm, sampling, count in arms:
                    started = time.perf_counter()
                    handles = [engine.submit(GenerateRequest(
                        session_id=f"{task_id}-{arm}-{i}", token_ids=ids, max_new_tokens=512, grammar=grammar,
                        sampling=None if sampling is None else Sampling(temperature=sampling.temperature,
                                                                         top_p=0.95, seed=7000 + i),
                        group=f"{task_id}-{arm}")) for i in range(count)]
                    texts = [h.wait(1800).text for h in handles]
                    wall = time.perf_counter() - started
                    graded: dict[str, str] = {}
                    for text in texts:
                        body = _rewrite(text)
                        if body is None or body in graded:
                            continue
                        if body.strip() == code.strip():
                            graded[body] = "unchanged"
                            continue
                        try:
                            ast.parse(textwrap.dedent(body))
                        except SyntaxError:
                            graded[body] = "does_not_parse"
                            continue
                        new = source.splitlines()
                        new[first - 1:last] = body.rstrip("\n").splitlines()
                        (tree / path).write_text("\n".join(new) + "\n")
                        graded[body] = "right" if run_test(task, tree, timeout=120.0).passed else "wrong"
                        (tree / path).write_text(source)
                    row = {"task": task_id, "place": name, "arm": arm, "drawn": len(texts), "distinct": len(graded),
                           **{k: sum(1 for v in graded.values() if v == k)
                              for k in ("right", "wrong", "unchanged", "does_not_parse")},
                           "cut": sum(1 for t in texts if _rewrite(t) is None), "wall_s": round(wall, 1),
                           "rewrites": [{"grade": grade, "body": body} for body, grade in graded.items()]}
                    if args.think:
                        row["reasons"] = [t[:t.find("```")].strip() for t in texts]
                    rows.append(row)
                    print(json.dumps({k: v for k, v in row.items() if k != "rewrites"}), flush=True)
                    args.out.write_text(json.dumps({"model": args.model, "rows": rows}, indent=1) + "\n")
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
