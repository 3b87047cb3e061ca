"""One figure of the in-view eval (`contenox eval --mode inview --mode anticipated [--mode moved] --mode floor`): per
model, each question's time to first token in its modes (today's layout, anticipated in a fresh workspace, anticipated
after working elsewhere in it, the floor), and the inline
completion's latency with nothing running against while an anticipation prefills.

    .venv/bin/python bench/eval/plot_in_view.py REPORT.json [REPORT.json ...] --out bench/results/<date>-in-view.png
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import msgspec

from contenox.eval.report import EvalReport

MODES = ("inview", "anticipated", "moved", "typed", "floor")
LABELS = {"inview": "today's layout", "anticipated": "anticipated\n10 s think,\nfresh workspace",
          "moved": "anticipated\n10 s think, after\nwork elsewhere",
          "typed": "anticipated\n10 s think, then\nthe question typed", "floor": "floor\nall but the\nquestion cached"}


def _ttfts(report: EvalReport, mode: str) -> list[float]:
    return [r.in_view.ttft_client_ms / 1000.0 for r in report.results
            if r.mode == mode and r.error is None and r.in_view is not None and r.in_view.ttft_client_ms is not None]


def _completions(report: EvalReport, mode: str) -> list[float]:
    return [r.in_view.completion_ms / 1000.0 for r in report.results
            if r.mode == mode and r.in_view is not None and r.in_view.completion_ms is not None]


def plot(reports: list[EvalReport], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(reports), figsize=(8 * len(reports), 8.5), squeeze=False)
    for col, report in enumerate(reports):
        top, bottom = axes[0][col], axes[1][col]
        modes = [m for m in MODES if _ttfts(report, m)]
        data = [_ttfts(report, mode) for mode in modes]
        top.boxplot(data, tick_labels=[LABELS[m] for m in modes], showmeans=False)
        for i, values in enumerate(data, 1):
            if values:
                top.annotate(f"median {statistics.median(values):.1f} s", (i, statistics.median(values)),
                             textcoords="offset points", xytext=(18, 4), fontsize=8)
        top.set_ylabel("time to first token (s, client)")
        top.set_title(f"{report.model}: questions about the code in view ({len(data[0])} tasks)")
        top.tick_params(axis="x", labelsize=8)
        idle, during = _completions(report, "inview"), _completions(report, "anticipated")
        bottom.boxplot([idle, during], tick_labels=["completion, nothing running", "completion during anticipation"])
        for i, values in enumerate((idle, during), 1):
            if values:
                bottom.annotate(f"median {statistics.median(values):.2f} s", (i, statistics.median(values)),
                                textcoords="offset points", xytext=(18, 4), fontsize=8)
        bottom.set_ylabel("inline completion latency (s)")
    machine = reports[0].machine
    features = machine.get("cpu_features")
    isa = f", {'/'.join(features)}" if isinstance(features, list) and features else ""
    fig.suptitle(f"Anticipated context, {reports[0].date} ({machine.get('cpus')} CPUs{isa})")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    reports = [msgspec.json.decode(p.read_bytes(), type=EvalReport) for p in args.reports]
    print(plot(reports, args.out))


if __name__ == "__main__":
    main()
