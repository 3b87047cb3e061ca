#!/usr/bin/env bash
# Ensure a headless-capable Chromium exists for the webview browser tests (idempotent).
# Honours CHROMIUM_PATH; otherwise installs Debian's `chromium` package when missing.
set -euo pipefail

if [[ -n "${CHROMIUM_PATH:-}" && -x "${CHROMIUM_PATH}" ]]; then
  echo "chromium: ${CHROMIUM_PATH}"
  exit 0
fi
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [[ -x "$candidate" ]]; then
    echo "chromium: $candidate"
    exit 0
  fi
done

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
echo "chromium: $(command -v chromium)"
