"""One figure of `contenox eval` reports: per model, pass rate by task kind in each mode, and what the answers
got right on the way (must-cite files named, symbols named, edits that apply).

    .venv/bin/python bench/eval/plot.py REPORT.json [REPORT.json ...] --out bench/results/<date>-eval.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from contenox.eval.report import EvalReport, TaskResult
from contenox.eval.tasks import KINDS


def _share(results: list[TaskResult], part: int, whole: int) -> float:
    return part / whole if results and whole else 0.0


def _bars(report: EvalReport, mode: str) -> dict[str, float]:
    results = [r for r in report.results if r.mode == mode and r.error is None and r.generated]
    bars = {kind: _share([r for r in results if r.kind == kind],
                         sum(1 for r in results if r.kind == kind and r.passed),
                         sum(1 for r in results if r.kind == kind)) for kind in KINDS}
    bars["all tasks"] = _share(results, sum(1 for r in results if r.passed), len(results))
    bars["files named"] = _share(results, sum(len(set(r.files_named) | set(r.files_edited)) for r in results),
                                 sum(len(r.must_files) for r in results))
    bars["symbols named"] = _share(results, sum(len(r.symbols_named) for r in results),
                                   sum(len(r.must_symbols) for r in results))
    checked = [r for r in results if r.edit is not None]
    bars["edit applies"] = _share(checked, sum(1 for r in checked if r.edit and r.edit.applies), len(checked))
    bars["edit passes test"] = _share(checked, sum(1 for r in checked if r.edit and r.edit.test_passed),
                                      len(checked))
    return bars


def plot(reports: list[EvalReport], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(reports), 1, figsize=(10, 3.6 * len(reports)), dpi=110, squeeze=False)
    for ax, report in zip(axes[:, 0], reports, strict=True):
        modes = [s.mode for s in report.summaries]
        width = 0.8 / max(1, len(modes))
        labels: list[str] = []
        for i, mode in enumerate(modes):
            bars = _bars(report, mode)
            labels = list(bars)
            xs = [x + i * width for x in range(len(bars))]
            drawn = ax.bar(xs, [100 * v for v in bars.values()], width, label=mode)
            ax.bar_label(drawn, fmt="%.0f", fontsize=7)
        ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(labels))], labels, rotation=20,
                      ha="right", fontsize=8)
        ax.set_ylim(0, 110)
        ax.set_ylabel("%")
        ax.axhline(80 if "1.5b" in report.model else 60, color="grey", linestyle=":", linewidth=1)
        ax.set_title(f"{report.model} ({report.date}): pass rate by kind, and what the answers got right "
                     "(dotted: the pass-rate target)", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    decoder = msgspec.json.Decoder(EvalReport)
    print(plot([decoder.decode(path.read_bytes()) for path in args.reports], args.out))


if __name__ == "__main__":
    main()
