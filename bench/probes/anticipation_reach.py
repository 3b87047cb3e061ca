"""Probe: would a bigger anticipation of the place hold the code a pasted question adds?

A question sent whole after the user sat at a place (pasted, or from Zed, which reports no draft) finds the place's
anticipation computed and adds only the code it points at that the anticipation lacks (the definitions and files it
names, up to ``[anticipate] question_tokens``, 512): a median ~430 tokens on cachetools' 12 questions, and what keeps
that mode at 2.9x the floor (README, "Anticipated context"). If those chunks ranked just past the anticipation's
budget, growing the anticipation while the user thinks would hold them; this measures whether they do, with the
planner alone (no engine, no model run): for each task, the place the in-view eval uses (``place_of``), the
anticipation's retrieval there at each ``--budget`` (the failing run with it for bug and trace tasks, as the editor
reports it), and the question's own retrieval; per budget, the tokens of the question's pointed chunks the
anticipation does not hold (``points_at``), with and without the 512 cap.

Needs the eval repositories (``.cache/eval-repos``) and the model's tokenizer (an installed model's IR folder).
From the repository root: ``.venv/bin/python bench/probes/anticipation_reach.py bench/eval/tasks/cachetools.toml
--model-dir .cache/test-home/models/qwen2.5-coder-0.5b --out bench/results/X.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from contenox.config import Config
from contenox.eval.checkout import checkout
from contenox.eval.in_view import Place, place_of
from contenox.eval.tasks import load_tasks
from contenox.node.anticipating import reported_run
from contenox.planner.inputs import build_inputs
from contenox.planner.segments import chunk_part
from contenox.runtime_ov.tokenizer import load_tokenizer
from contenox.workspace import Workspace, points_at


def _ir(model_dir: Path) -> Path:
    """The model's OpenVINO IR folder (where its tokenizer is)."""
    found = sorted(p for p in model_dir.glob("ir-*") if p.is_dir())
    return found[0] if found else model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--repos", type=Path, default=Path(".cache/eval-repos").resolve())
    parser.add_argument("--budget", type=int, action="append", help="anticipation budgets (tokens)")
    parser.add_argument("--cap", type=int, default=512, help="[anticipate] question_tokens")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    budgets = args.budget or [2048, 3072, 4096, 6144]
    config = Config()
    tokenizer = load_tokenizer(_ir(args.model_dir))

    def count(text: str) -> int:
        return len(tokenizer.encode(text))

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cx-reach-") as scratch:
        for task in load_tasks([args.tasks]):
            tree = checkout(task, args.repos.resolve() / task.repo, Path(scratch) / task.id)
            place = place_of(task, tree)
            workspace = Workspace.open(tree, config.workspace, Path(scratch) / "cache")
            terminal = reported_run(task.terminal.strip("\n")) if task.terminal.strip() else ""

            def retrieved(prompt: str, budget: int, *, at: Place = place, ws: Workspace = workspace, root: Path = tree,
                          run: str = terminal) -> list[Any]:
                planner = msgspec.structs.replace(config.planner, retrieval_tokens=budget) if budget \
                    else config.planner
                return list(build_inputs(planner, ws, count, root=root, prompt=prompt, selection=None, pins=[],
                                         terminal=run, thread="t", reasons={}, open_file=at.path,
                                         selection_lines=(at.line, at.line)).retrieved)

            question = retrieved(task.ask, 0)
            row: dict[str, Any] = {"id": task.id, "place": f"{place.path}:{place.line}", "budgets": {}}
            for budget in budgets:
                anticipated = retrieved("", budget)
                held = {(c.id, c.text) for c in anticipated}
                added = [c for c in question if (c.id, c.text) not in held and points_at(c.reasons)]
                tokens = sum(count(chunk_part(c)) for c in added)
                row["budgets"][str(budget)] = {
                    "anticipated_tokens": sum(count(chunk_part(c)) for c in anticipated),
                    "added_tokens": tokens, "added_capped": min(tokens, args.cap),
                    "added": [f"{c.id} ({'; '.join(c.reasons[:2])})" for c in added]}
            rows.append(row)
            print(task.id, {b: v["added_capped"] for b, v in row["budgets"].items()}, flush=True)
    summary = {str(b): {"median_added_capped": statistics.median(r["budgets"][str(b)]["added_capped"] for r in rows),
                        "median_anticipated": statistics.median(r["budgets"][str(b)]["anticipated_tokens"]
                                                                for r in rows),
                        "filled_90pct": sum(r["budgets"][str(b)]["anticipated_tokens"] >= 0.9 * b for r in rows)}
               for b in budgets}
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"tasks": str(args.tasks), "summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
