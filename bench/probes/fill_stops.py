"""Probe: what stopping a line's fill at its line break saves, and that it changes no fill.

Verification fills each line of a localized function in (``[verify] infill``; ``bench/probes/fim_lines.py``) as
one group of a greedy fill and sampled ones, and uses only each fill's first line. Drawn up to 48 tokens, a group
decodes until its longest fill ends, so a fill that runs on into the code after its line holds the whole group.
The node now stops a line's own fill at any token holding a line break (the tokenizer's
:meth:`~contenox.runtime_ov.tokenizer.Tokenizer.newline_ids`). For every line of each task's buggy function, the
same group (the node's FIM prompt, greedy and ``--samples`` at temperature 0.8 with fixed seeds) is drawn twice,
with and without the line-break stops, in turn: per line, the wall time and tokens of each, and whether the
fills' first lines are the same (the same tokens are drawn up to the stop, but once the group's other fills have
stopped the batch is smaller: a sampled fill, even with its seed, may draw otherwise, and a near tie of the greedy
one may tip). The prompt is prefilled
before either draw, so decoding alone is compared.

From the repository root: ``.venv/bin/python bench/probes/fill_stops.py qwen2.5-coder-1.5b --out X.json TASK...``
(needs ``.cache/eval-repos`` and the model in ``.cache/test-home/models``, as ``fim_lines.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from contenox.eval.checkout import checkout
from contenox.planner.fim import build_fim_prompt, cursor_window
from contenox.runtime_ov import GenerateRequest, Sampling
from contenox.verify.focus import pickable_lines
from contenox.workspace import changed_lines

_SPAN = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--cache", type=Path, default=Path(".cache/eval-repos"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    from fim_lines import _span, fim_engine  # the fill probe's engine and function span

    tasks, repos, engine, fim = fim_engine(args.model, args.cache)
    tok = engine.tokenizer
    breaks = tok.newline_ids()
    rows: list[dict] = []
    try:
        for task_id in args.tasks:
            task = tasks[task_id]
            (path, changed), = list(changed_lines(task.inject).items())[:1]
            with tempfile.TemporaryDirectory(prefix="fill-stops-") as scratch:
                tree = checkout(task, repos[task.repo], Path(scratch) / "tree")
                lines = (tree / path).read_text().split("\n")
            first, last = _span(path, "\n".join(lines), min(changed), _SPAN)
            code = "\n".join(lines[first - 1:last])
            for number in [first + i for i in pickable_lines(code, path)]:
                current = lines[number - 1]
                indent = current[:len(current) - len(current.lstrip())]
                emptied = "\n".join([*lines[:number - 1], indent, *lines[number:]])
                window = cursor_window(emptied, number - 1, len(indent), lambda s: len(tok.encode(s)),
                                       prefix_tokens=1536, suffix_tokens=512)
                prompt = build_fim_prompt(fim, tok, window, path, [], task.repo, lambda entry: "",
                                          named=True).token_ids
                drawn: dict[str, dict] = {}
                # the prompt prefilled first (both draws then find it cached: decoding alone is compared), and
                # the two drawn in turns, one first on one line, the other on the next
                engine.submit(GenerateRequest(session_id=f"{task_id}-{number}-warm", token_ids=prompt,
                                              max_new_tokens=1)).wait(900)
                order = [("to_line_break", fim.stops + breaks), ("to_limit", fim.stops)]
                for how, stops in order if len(rows) % 2 == 0 else order[::-1]:
                    started = time.perf_counter()
                    handles = [engine.submit(GenerateRequest(
                        session_id=f"{task_id}-{number}-{how}-{i}", token_ids=prompt, max_new_tokens=args.max_tokens,
                        stop_token_ids=stops, group=f"{task_id}-{number}-{how}",
                        sampling=None if i == 0 else Sampling(temperature=0.8, top_p=0.95, seed=7000 + i)))
                        for i in range(1 + args.samples)]
                    finals = [h.wait(900) for h in handles]
                    drawn[how] = {"wall_s": round(time.perf_counter() - started, 2),
                                  "tokens": [len(f.token_ids) for f in finals],
                                  "first_lines": [f.text.split("\n", 1)[0].rstrip() for f in finals]}
                row = {"task": task_id, "line": number, **{f"{k}_{how}": v for how, d in drawn.items()
                                                            for k, v in d.items() if k != "first_lines"},
                       "same_greedy": drawn["to_line_break"]["first_lines"][0] == drawn["to_limit"]["first_lines"][0],
                       "same_first_lines": drawn["to_line_break"]["first_lines"] == drawn["to_limit"]["first_lines"]}
                if not row["same_first_lines"]:  # which fills differ (greedy first)
                    row["first_lines"] = {how: d["first_lines"] for how, d in drawn.items()}
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        engine.close()
    broke = [r["wall_s_to_line_break"] for r in rows]
    limit = [r["wall_s_to_limit"] for r in rows]
    summary = {"lines": len(rows), "same_greedy": sum(r["same_greedy"] for r in rows),
               "same_first_lines": sum(r["same_first_lines"] for r in rows),
               "median_wall_s_to_line_break": statistics.median(broke),
               "median_wall_s_to_limit": statistics.median(limit),
               "total_wall_s_to_line_break": round(sum(broke), 1), "total_wall_s_to_limit": round(sum(limit), 1),
               "group_steps_to_line_break": sum(max(r["tokens_to_line_break"]) for r in rows),
               "group_steps_to_limit": sum(max(r["tokens_to_limit"]) for r in rows)}
    print(json.dumps(summary), flush=True)
    args.out.write_text(json.dumps({"model": args.model, "samples": args.samples, "max_tokens": args.max_tokens,
                                    "summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
