"""The report's figure: warm TTFT against changed-suffix tokens, with the bare floor and cold runs."""

from __future__ import annotations

from pathlib import Path

from contenox.bench.report import Report

__all__ = ["plot_suffix_curve"]


def plot_suffix_curve(report: Report, path: Path) -> Path:
    """Write the PNG; needs matplotlib (the optional ``bench`` extra)."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = report.warm_changed_suffix.points
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    if points:
        xs = [max(p.suffix_tokens, 1) for p in points]

        def series(values: list[tuple[float, float, float]], label: str, style: str) -> None:
            med = [v[0] for v in values]
            low = [v[0] - v[1] for v in values]
            high = [v[2] - v[0] for v in values]
            ax.errorbar(xs, med, yerr=[low, high], fmt=style, capsize=3, label=label)

        series([(p.ms.median, p.ms.min, p.ms.max) for p in points],
               "warm, ours: plan + submit + first token event", "o-")
        series([(p.ttft_ms.median, p.ttft_ms.min, p.ttft_ms.max) for p in points],
               "warm, ours: engine TTFT", "x-")
        series([(p.floor_ttft_ms.median, p.floor_ttft_ms.min, p.floor_ttft_ms.max) for p in points],
               "warm, bare pipeline floor", "s--")
        series([(p.cold_ttft_ms.median, p.cold_ttft_ms.min, p.cold_ttft_ms.max) for p in points],
               "cold, same ids (full prefill)", "^:")
        for p, x in zip(points, xs, strict=True):
            ax.annotate(f"{p.changed_tokens}", (x, p.ttft_ms.median), textcoords="offset points", xytext=(4, -12),
                        fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
            axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    else:
        ax.text(0.5, 0.5, "no suffix points measured", ha="center", transform=ax.transAxes)
    ident = report.identity
    ax.set_xlabel("tokens after the cached prefix (changed suffix + question)")
    ax.set_ylabel("time to first token, ms (median, min-max)")
    ax.set_title(f"{ident.model}: warm TTFT vs changed suffix (cached prefix "
                 f"{report.warm_changed_suffix.prefix_tokens} tokens)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, f"{ident.cpu}, {ident.cores} cores, OpenVINO {ident.openvino_genai_version.split('-')[0]}, "
             f"{ident.date}", fontsize=6, alpha=0.7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
