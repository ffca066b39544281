#!/usr/bin/env bash
# Builds the robfig/cron v3 oracle (main.go) once per source + Go version and prints its path.
# The binary is cached as ${CRONSCALE_CACHE:-$HOME/.cache/cronscale}/bin/cron-oracle-<hash>.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}"
command -v go >/dev/null 2>&1 || { echo "cron-oracle: go is not installed" >&2; exit 2; }
hash=$( { cat "$here/main.go" "$here/go.mod" "$here/go.sum"; go version; } | sha256sum | cut -c1-16)
out="$cache/bin/cron-oracle-$hash"
if [ ! -x "$out" ]; then
  mkdir -p "$cache/bin"
  tmp="$out.tmp.$$"
  ( cd "$here" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o "$tmp" . ) >&2
  mv "$tmp" "$out"
fi
echo "$out"
