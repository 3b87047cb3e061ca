#!/usr/bin/env bash
# The replay gate: >= 30 consecutive commits of two real repositories of different languages, each turn
# "Review this change." through the node's turn assembly, the naive ordering beside it and each turn's
# suffix-only floor. Repositories: this repository's own history (the 30 commits up to 1ffd0f4, the first
# build; COMMITS=A..B for others; Python) and semver's npm release history
# 7.0.0 -> 7.7.4 (JavaScript; bench/replay/semver-history.toml, built offline from the npm registry).
# Writes bench/results/<date>-<model>-replay-{contenox,semver}.json; reads: reuse efficiency median / p10.
#   MODEL=qwen2.5-coder-0.5b bench/replay/run.sh        (default: the fast smollm2-135m)
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTENOX_HOME="${CONTENOX_HOME:-$PWD/.cache/bench-home}"
MODEL="${MODEL:-smollm2-135m}"
TURNS="${TURNS:-30}"
.venv/bin/contenox init --model "$MODEL" >/dev/null
if [ "$MODEL" = smollm2-135m ]; then
  # an 8k-context model: room for the thread to keep its last turns beside the retrieved code
  printf '[model]\ndefault = "smollm2-135m"\n\n[planner]\nretrieval_tokens = 1024\nthread_tokens = 2048\n' \
    > "$CONTENOX_HOME/config.toml"
fi
.venv/bin/python -m contenox.eval --cache .cache/replay-repos bench/replay/semver-history.toml
out=bench/results
day=$(date +%F)
.venv/bin/contenox bench replay "$PWD" --commits "${COMMITS:-1ffd0f4~$((TURNS + 1))..1ffd0f4}" --max-turns "$TURNS" \
    --model "$MODEL" --out "$out/replay-contenox" "$@"
.venv/bin/contenox bench replay "$PWD/.cache/replay-repos/semver-history" --commits "v7.0.0..v7.7.4" \
    --max-turns "$TURNS" --model "$MODEL" --out "$out/replay-semver" "$@"
for f in "$out"/replay-contenox/"$day"-"$MODEL"-replay.json "$out"/replay-semver/"$day"-"$MODEL"-replay.json; do
  .venv/bin/python - "$f" <<'PY'
import sys, msgspec
from contenox.bench.report import ReplaySection
s = msgspec.json.decode(open(sys.argv[1], "rb").read(), type=ReplaySection).summary
r, f, n = s.reuse_efficiency, s.ttft_vs_floor, s.ttft_ratio_naive
print(f"{sys.argv[1]}: {s.turns} turns; reuse efficiency median {r.median:.1%} p10 {r.p10:.1%}; "
      f"TTFT/floor median {f.median:.2f}x p90 {f.p90:.2f}x; naive/contenox TTFT median {n.median:.2f}x "
      f"(p10 {n.p10:.2f}x, p90 {n.p90:.2f}x); cached share {s.contenox_cached_share:.0%} vs naive {s.naive_cached_share:.0%}")
PY
done
