"""Workspace bench: cold index, incremental refresh, repo-map render, RSS and map stability.

    contenox bench workspace [--repeat 15] [--ts DIR] [--skip-ts] [--out bench/results]

Corpora: a copy of this interpreter's standard library (found with sysconfig; site-packages and
__pycache__ left out) and, when available, the ``typescript`` npm package (``--ts`` points at a
directory holding ``node_modules/typescript``; otherwise it is installed with npm into a temp dir).
Token counts use SmolLM2-135M's tokenizer when it is installed, else about four characters a token. Prints a
table of figures with median, p90 and spread, and writes ``<out>/workspace_bench.json``. Map hashes are recorded:
equal hashes for equal inputs mean a deterministic map.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from contenox.bench.micro import copy_stdlib as _copy_stdlib
from contenox.bench.micro import ms as _ms
from contenox.bench.micro import stats as _stats
from contenox.bench.micro import token_counter
from contenox.config import Config, WorkspaceConfig
from contenox.workspace import Workspace

MENTIONS = ("parse", "Request", "encode", "Thread", "open", "Path", "loads", "Decimal", "socket", "compile",
            "HTTPConnection", "TextIOWrapper", "deque", "Event", "Logger", "sleep")


def _typescript(ts_dir: str | None, work: Path) -> Path | None:
    if ts_dir:
        lib = Path(ts_dir) / "node_modules" / "typescript" / "lib"
        return lib if lib.is_dir() else None
    if shutil.which("npm") is None:
        return None
    target = work / "npm"
    target.mkdir()
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "typescript@5"], cwd=target,
                       check=True, capture_output=True, timeout=300)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"npm install typescript failed ({exc}); skipping the TypeScript corpus", file=sys.stderr)
        return None
    lib = target / "node_modules" / "typescript" / "lib"
    return lib if lib.is_dir() else None


def _kept_share(before: str, after: str) -> float:
    """Share of the map's bytes (whole lines) that survive the edit unchanged."""
    if not before:
        return 1.0
    a, b = before.splitlines(True), after.splitlines(True)
    same = sum(sum(len(line) for line in a[block.a:block.a + block.size])
               for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return same / len(before)


def _map_entries(text: str) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    current = ""
    for line in text.splitlines():
        if line.startswith("│"):
            entries.append((current, line[1:]))
        elif line.endswith(":"):
            current = line[:-1]
    return entries


def _edit_signature(ws: Workspace, root: Path, count: Callable[[str], int], rng: random.Random,
                    tries: int) -> list[float]:
    """Map stability after one-function edits: a parameter added to a definition the map shows."""
    shares: list[float] = []
    for _ in range(tries * 4):
        if len(shares) >= tries:
            break
        before = ws.repo_map(4096, count)
        candidates = [(path, text) for path, text in _map_entries(before) if "(" in text and not text.endswith("…")]
        path, shown = rng.choice(candidates)
        file = root / path
        original = file.read_text(encoding="utf-8")
        lines = original.splitlines(True)
        matches = [i for i, line in enumerate(lines) if line.rstrip().replace("\t", "    ") == shown]
        if not matches:
            continue
        i = matches[0]
        lines[i] = lines[i].replace("(", "(bench_arg=None, ", 1)
        file.write_text("".join(lines), encoding="utf-8")
        ws.refresh([file])
        after = ws.repo_map(4096, count)
        assert after != before, f"editing {path}:{i + 1} must change the map"
        shares.append(_kept_share(before, after))
        file.write_text(original, encoding="utf-8")
        ws.refresh([file])
    return shares


def bench_corpus(name: str, root: Path, count: Callable[[str], int], repeat: int, work: Path,
                 config: WorkspaceConfig) -> dict[str, object]:
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    cache = work / f"cache-{name}"
    t0 = time.perf_counter()
    ws = Workspace.open(root, config, cache)
    cold = time.perf_counter() - t0
    status = ws.status()
    t0 = time.perf_counter()
    Workspace.open(root, config, cache)
    warm_open = time.perf_counter() - t0

    t0 = time.perf_counter()
    first_map = ws.repo_map(4096, count)
    first_render = time.perf_counter() - t0
    same_inputs = [ws.repo_map(4096, count) for _ in range(3)]
    renders: list[float] = []
    hashes = set()
    for i in range(repeat):
        mention = (MENTIONS[i % len(MENTIONS)],)
        t0 = time.perf_counter()
        text = ws.repo_map(4096, count, mentioned=mention)
        renders.append(time.perf_counter() - t0)
        hashes.add(hashlib.sha256(text.encode()).hexdigest())
    repeat_renders: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ws.repo_map(4096, count)
        repeat_renders.append(time.perf_counter() - t0)
    rss = proc.memory_info().rss

    rng = random.Random(7)
    tagged = sorted(p for p, f in ws._files.items() if (tags := f.tags) is not None and tags.defs)
    hinted: list[float] = []
    full: list[float] = []
    rerender: list[float] = []
    for i in range(repeat):
        path = root / rng.choice(tagged)
        original = path.read_bytes()
        body = original + (b"\n\n# bench edit %d\n" % i)
        path.write_bytes(body)
        t0 = time.perf_counter()
        events = ws.refresh([path])
        hinted.append(time.perf_counter() - t0)
        assert events, "an edit must produce an event"
        path.write_bytes(original)
        t0 = time.perf_counter()
        ws.refresh()
        full.append(time.perf_counter() - t0)
        new_def = original + (b"\n\ndef bench_added_%d(x):\n    return x\n" % i if path.suffix == ".py"
                              else b"\n\nfunction benchAdded%d(x) { return x; }\n" % i)
        path.write_bytes(new_def)
        ws.refresh([path])
        t0 = time.perf_counter()
        ws.repo_map(4096, count)
        rerender.append(time.perf_counter() - t0)
        path.write_bytes(original)
        ws.refresh([path])
    stability = _edit_signature(ws, root, count, rng, max(5, repeat // 2))
    body_before = ws.repo_map(4096, count)
    path = root / rng.choice(tagged)
    path.write_bytes(path.read_bytes() + b"\n# comment only\n")
    ws.refresh([path])
    body_share = _kept_share(body_before, ws.repo_map(4096, count))

    return {
        "corpus": name, "root": str(root),
        "files": status.files, "tagged_files": status.tagged_files, "definitions": status.definitions,
        "skipped": len(status.skipped), "skipped_reasons": sorted({s.reason for s in status.skipped}),
        "partial": len(status.partial), "non_utf8": len(status.non_utf8), "errors": len(status.errors),
        "cold_index_s": round(cold, 3), "warm_open_s": round(warm_open, 3),
        "first_render_ms": _ms(first_render),
        "render_4k_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(renders).items()},
        "render_4k_same_inputs_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(repeat_renders).items()},
        "incremental_refresh_hinted_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(hinted).items()},
        "incremental_refresh_full_rescan_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(full).items()},
        "render_after_definition_edit_ms": {k: (_ms(v) if k != "n" else v) for k, v in _stats(rerender).items()},
        "map_tokens": count(first_map), "map_bytes": len(first_map.encode()),
        "map_deterministic": len({first_map, *same_inputs}) == 1,
        "map_hashes_distinct_mentions": len(hashes),
        "map_stability_signature_edit": _stats(stability) if stability else None,
        "map_stability_comment_edit": round(body_share, 4),
        "rss_mb_after_index": round(rss / 2**20, 1), "rss_mb_delta": round((rss - rss0) / 2**20, 1),
    }


def main(config: Config, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="contenox bench workspace", description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--ts", help="directory holding node_modules/typescript (skips npm install)")
    parser.add_argument("--skip-ts", action="store_true")
    parser.add_argument("--out", default="bench/results", help="where the JSON report goes")
    args = parser.parse_args(argv)
    rss_start = psutil.Process().memory_info().rss
    count, tokenizer = token_counter(config)
    ws_config = config.workspace
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="contenox-ws-bench-") as tmp:
        work = Path(tmp)
        stdlib = _copy_stdlib(work / "stdlib")
        results.append(bench_corpus("python-stdlib", stdlib, count, args.repeat, work, ws_config))
        ts = None if args.skip_ts else _typescript(args.ts, work)
        if ts is not None:
            corpus = work / "typescript-lib"
            shutil.copytree(ts, corpus)
            results.append(bench_corpus("typescript-lib", corpus, count, args.repeat, work, ws_config))
    report = {"bench": "workspace", "tokenizer": tokenizer, "rss_mb_before_tokenizer": round(rss_start / 2**20, 1), "cpus": os.cpu_count(),
              "load_avg": os.getloadavg(), "python": platform.python_version(),
              "max_file_bytes": ws_config.max_file_bytes, "results": results}
    out = Path(args.out) / "workspace_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for r in results:
        print(f"\n== {r['corpus']}: {r['files']} files, {r['tagged_files']} tagged, {r['definitions']} definitions, "
              f"{r['skipped']} skipped {r['skipped_reasons']}")
        print(f"cold full index            {r['cold_index_s']:>9.2f} s   (warm open {r['warm_open_s']:.2f} s)")
        for key in ("incremental_refresh_hinted_ms", "incremental_refresh_full_rescan_ms", "render_4k_ms",
                    "render_4k_same_inputs_ms", "render_after_definition_edit_ms"):
            s = r[key]
            assert isinstance(s, dict)
            print(f"{key:<36} median {s['median']:>8.2f} ms  p90 {s['p90']:>8.2f}  min {s['min']:>8.2f}  "
                  f"max {s['max']:>8.2f}")
        print(f"first render (graph build)  {r['first_render_ms']:>9.1f} ms; map {r['map_tokens']} tokens, "
              f"deterministic={r['map_deterministic']}")
        stab = r["map_stability_signature_edit"]
        if isinstance(stab, dict):
            print(f"map bytes kept after a one-function signature edit: median {stab['median']:.3f} "
                  f"min {stab['min']:.3f}; after a comment edit {r['map_stability_comment_edit']:.3f}")
        print(f"RSS after index            {r['rss_mb_after_index']:>9.1f} MB (index +{r['rss_mb_delta']} MB; "
              f"the process held {rss_start / 2**20:.0f} MB before loading the tokenizer)")
    print(f"\ntokenizer: {tokenizer}; load average {os.getloadavg()}; report: {out}")
    return 0

