# shellcheck shell=bash
# bun: the runtime of Bun tasks. The base layer (glibc, which the binary links) plus the bun
# binary from the npm package @oven/bun-linux-x64-baseline (the build for any x86-64 CPU, with
# or without AVX2), at /usr/local/bin/bun. Caches go to /tmp; telemetry and crash reports off.

BUN_PACKAGE="@oven/bun-linux-x64-baseline"
BUN_VERSION="${CRONSCALE_IMAGE_BUN_VERSION:-1.4.5}"

recipe_inputs() { base_inputs; echo "$BUN_PACKAGE@$BUN_VERSION"; }

recipe_build() {
  local work="$1" tgz
  base_layer "$work/base"
  tgz=$(npm_tarball "$BUN_PACKAGE" "$BUN_VERSION")
  mkdir -p "$work/bun/usr/local/bin" "$work/unpack"
  tar -xzf "$tgz" -C "$work/unpack" --no-same-owner
  install -m 0755 "$work/unpack/package/bin/bun" "$work/bun/usr/local/bin/bun"
  ln -s bun "$work/bun/usr/local/bin/bunx"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8",
          "BUN_INSTALL_CACHE_DIR=/tmp/.bun/install/cache", "BUN_RUNTIME_TRANSPILER_CACHE_PATH=0",
          "DO_NOT_TRACK=1"],
  "Cmd": ["bun", "--version"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$work/base" "$work/bun")
}
