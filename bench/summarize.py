"""Print the headline figures of a `contenox bench` report as Markdown (what bench/README.md shows).

    .venv/bin/python bench/summarize.py bench/results/<date>-<model>.json
"""

from __future__ import annotations

import sys
from pathlib import Path

from contenox.bench.report import Report, decode_report
from contenox.bench.stats import Spread


def _s(sp: Spread | None, unit: str = "ms") -> str:
    if sp is None:
        return "n/a"
    if sp.n == 1:
        return f"{sp.median:,.0f} {unit} (n=1)"
    return f"{sp.median:,.0f} {unit} ({sp.min:,.0f}-{sp.max:,.0f}, n={sp.n})"


def _f(sp: Spread | None) -> str:
    if sp is None:
        return "n/a"
    return f"{sp.median:.1f} ({sp.min:.1f}-{sp.max:.1f}, n={sp.n})"


def summarize(r: Report) -> str:
    i = r.identity
    out = [f"Model **{i.model}** ({i.profile.get('format')}), {i.cpu}, {i.cores} cores, OpenVINO GenAI "
           f"{i.openvino_genai_version.split('-')[0]}, {i.date}, load average at start {i.load_average}, "
           f"chunk {i.chunk_tokens} tokens, {i.max_new_tokens} greedy tokens per case, wall {r.wall_s:.0f} s.", ""]
    c = r.cold_full_prefill
    w = r.warm_same_prefix
    out += ["| case | tokens | ours (caller) | ours (engine TTFT) | bare floor | overhead | output = cold |",
            "|---|---|---|---|---|---|---|",
            f"| cold full prefill | {c.tokens} | {_s(c.ms)} | {_s(c.ttft_ms)} | {_s(c.floor_ttft_ms)} | "
            f"{c.overhead_ratio:.2f}x | - |",
            f"| warm, same prefix | {w.cached_tokens} cached + {w.new_tokens} new | {_s(w.ms)} | {_s(w.ttft_ms)} | "
            f"{_s(w.floor_ttft_ms)} | {w.overhead_ratio:.2f}x | {w.vs_cold.equal} |"]
    hit = f"hit rate {w.hit_rate:.1%} (measured at least {w.measured_hit_rate_min:.1%})"
    for p in r.warm_changed_suffix.points:
        out.append(f"| warm, {p.changed_tokens} changed | {p.cached_tokens} cached + {p.suffix_tokens} new | "
                   f"{_s(p.ms)} | {_s(p.ttft_ms)} | {_s(p.floor_ttft_ms)} | {p.overhead_ratio:.2f}x | "
                   f"{p.output_equals_cold}"
                   + (f" (first divergence at {p.vs_cold.first_divergent_index})" if not p.vs_cold.equal else "")
                   + " |")
    e = r.edited_stable_segment
    out += [f"| edited stable segment (token {e.edit_at_token}) | {e.prompt_tokens} | - | {_s(e.ttft_ms)} | "
            f"{_s(e.floor_ttft_ms)} | - | {e.output_equals_cold} |", ""]
    out.append("Cold TTFT of the same ids beside each curve point: " + ", ".join(
        f"{p.changed_tokens}: {_s(p.cold_ttft_ms)}" for p in r.warm_changed_suffix.points) + ".")
    if r.warm_changed_suffix.skipped_points:
        out.append("Not measured: " + "; ".join(r.warm_changed_suffix.skipped_points) + ".")
    out.append(f"Warm same prefix: {hit}.")
    out.append(f"Edited stable segment: expected miss {e.expected_cache_miss} tokens, block model "
               f"{e.predicted_cache_miss}, measured {e.actual_cache_miss} (difference "
               f"{e.actual_cache_miss - e.expected_cache_miss}; the step count is exact to {i.chunk_tokens}).")
    ctl = c.engine_vs_bare_cold
    if ctl is not None:
        out.append(f"Control, both cold: engine output = bare cold pipeline output: {ctl.equal}"
                   + ("" if ctl.equal else f" (first divergence at {ctl.first_divergent_index})") + ".")
    d = r.decode
    out.append(f"Decode: {d.output_tokens} tokens, {_f(d.tokens_per_sec)} tok/s (bare floor {_f(d.floor_tokens_per_sec)}).")
    s, t = r.snapshot_save, r.snapshot_restore
    if s.available:
        out.append(f"Snapshot of {s.tokens} tokens: {s.bytes / 1e6:.1f} MB, save {_s(s.ms)} ({s.throughput_MBps} MB/s), "
                   f"restore {_s(t.ms)} ({t.throughput_MBps} MB/s), continuation equal: {t.output_equals_original}.")
    else:
        out.append(f"Snapshots: not measured ({s.reason}).")
    out += ["", "| failure | provoked | error / outcome | recovery |", "|---|---|---|---|"]
    for f in r.failure_cases:
        kind = (f.error or {}).get("kind", "-")
        extra = ""
        if f.error and "cancel_latency_ms" in f.error:
            extra = f", cancel latency {f.error['cancel_latency_ms']} ms (loop lag {f.error['loop_lag_ms']} ms)"
        out.append(f"| {f.name} | {f.provoked} | {kind}: {f.outcome}{extra} | "
                   f"{'-' if f.recovery_ms is None else f'{f.recovery_ms:.0f} ms'} |")
    res = r.residency
    out += ["", f"Residency: resident {res.resident_models}, on demand {res.on_demand_models}, load "
            f"{res.load_ms:.0f} ms, unload {res.unload_ms:.0f} ms, host memory peak {res.host_memory_peak / 2**30:.1f} GiB "
            f"(all pipelines of the run), swap events {res.swap_events}."]
    if r.peer is not None:
        p = r.peer
        if p.available:
            out += ["", f"Peer, {p.name} {p.version} on the same GGUF and ids ({p.prompt_tokens} tokens, warm suffix "
                    f"{p.suffix_tokens}):", "", "| | cold TTFT | warm TTFT | decode tok/s |", "|---|---|---|---|",
                    f"| llama.cpp | {_s(p.cold_ttft_ms)} | {_s(p.warm_ttft_ms)} | {_f(p.decode_tps)} |",
                    f"| contenox | {_s(p.ours_cold_ttft_ms)} | {_s(p.ours_warm_ttft_ms)} | {_f(p.ours_decode_tps)} |",
                    "", f"Greedy output hash: llama.cpp {p.peer_output_hash}, ours {p.ours_output_hash}."]
        else:
            out += ["", f"Peer: not measured: {p.reason}"]
    if r.replay is not None and r.replay.summary is not None:
        s2 = r.replay.summary
        out += ["", f"Replay of {r.replay.repo} {r.replay.commits} ({s2.turns} turns): contenox TTFT "
                f"{_s(s2.contenox_ttft_ms)}, naive {_s(s2.naive_ttft_ms)}; naive/contenox mean TTFT "
                f"**{s2.mean_ttft_ratio:.2f}x**, median **{s2.median_ttft_ratio:.2f}x**; cached-token share "
                f"{s2.contenox_cached_share:.0%} vs {s2.naive_cached_share:.0%} (**{s2.cached_share_ratio:.1f}x**); "
                f"largest |predicted - measured| recomputed tokens {s2.prediction_max_error_tokens}."]
        if s2.reuse_efficiency is not None:
            out += [f"Reuse efficiency (cached / reusable tokens per turn): median "
                    f"**{s2.reuse_efficiency.median:.0%}**, p10 **{s2.reuse_efficiency.p10:.0%}**"
                    + (f"; contenox TTFT / suffix-only floor: median {s2.ttft_vs_floor.median:.2f}x, "
                       f"p90 {s2.ttft_vs_floor.p90:.2f}x" if s2.ttft_vs_floor is not None else "")
                    + (f"; naive / contenox TTFT per turn: median {s2.ttft_ratio_naive.median:.2f}x "
                       f"(p10 {s2.ttft_ratio_naive.p10:.2f}x, p90 {s2.ttft_ratio_naive.p90:.2f}x)"
                       if s2.ttft_ratio_naive is not None else "") + "."]
    for note in r.notes:
        out.append(f"Note: {note}")
    return "\n".join(out)


if __name__ == "__main__":
    print(summarize(decode_report(Path(sys.argv[1]).read_bytes())))
