#!/usr/bin/env bash
# Installs Debian's Chromium when missing: the store's and the admin's browser tests
# drive it with playwright-core, which never downloads a browser of its own. Idempotent:
# with the binary present it runs no apt command at all.
set -euo pipefail

bin="${CRONSCALE_CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$bin" ]]; then
  echo "chromium-deps.sh: $bin present"
  exit 0
fi
if [[ $EUID -ne 0 ]]; then
  echo "chromium-deps.sh: $bin missing; run as root (or: sudo apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get update -qq
fi
echo "chromium-deps.sh: installing chromium"
apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "chromium-deps.sh: installed chromium"
