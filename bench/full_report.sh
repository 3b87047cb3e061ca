#!/usr/bin/env bash
# The full benchmark report: qwen2.5-coder-0.5b, the changed-suffix curve up to 16k tokens, a replay of a
# real history (this repository by default) with the naive ordering beside it, and the llama.cpp peer.
# Writes bench/results/<date>-qwen2.5-coder-0.5b.json and .png. Run it on a quiet machine (check `uptime`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTENOX_HOME="${CONTENOX_HOME:-$PWD/.cache/bench-home}"
# The published figures replay a clone of pallets/itsdangerous: REPLAY_REPO=PATH REPLAY_COMMITS=05c805f..4f269f6.
# By default, this repository's own last 12 commits.
REPLAY_REPO="${REPLAY_REPO:-$PWD}"
REPLAY_COMMITS="${REPLAY_COMMITS:-HEAD~12..HEAD}"
exec .venv/bin/contenox bench --model qwen2.5-coder-0.5b --replay "$REPLAY_REPO" --commits "$REPLAY_COMMITS" \
    --max-turns 11 "$@"
