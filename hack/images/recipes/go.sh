# shellcheck shell=bash
# go: the runtime of Go tasks. The base layer plus the Go toolchain from the Go module
# golang.org/toolchain (the same archive `go` itself downloads for GOTOOLCHAIN), at
# /usr/local/go. The root file system is read-only in task pods, so every cache Go writes is
# under /tmp (GOCACHE, GOPATH, GOMODCACHE); GOTOOLCHAIN=local and GOPROXY=off keep it from ever
# reaching for the network; no C compiler, so CGO_ENABLED=0.

GO_TOOLCHAIN_VERSION="${CRONSCALE_IMAGE_GO_VERSION:-1.26.11}"

go_toolchain_dir() {
  go_env
  local mod="golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.linux-amd64" dir
  dir=$(go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/bin/go" ] || die "cannot download $mod from the Go module proxy"
  echo "$dir"
}

recipe_inputs() {
  base_inputs
  cat "$IMAGES_DIR/files/go/"*
  # The module proxy's checksum (go.sum line) names the toolchain's content.
  echo "golang.org/toolchain go$GO_TOOLCHAIN_VERSION $(cd /tmp && go_env && go mod download -json \
    "golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.linux-amd64" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')"
}

# warm_go_cache GOROOT SEED WORK — compiles the standard packages listed in
# files/go/std-packages.txt with the image's own toolchain into SEED, the build cache the task
# command (and the image's go wrapper) copies into GOCACHE. Go leaves GOROOT's location out of
# the action IDs and outputs of standard packages, so the entries hit at /usr/local/go too.
# Packages only, no main program, and no package index (GODEBUG=goindex=0): those entries would
# name the build directory. Entry timestamps are fixed, the trim stamp dropped, so the layer's
# bytes depend only on the toolchain and the list.
warm_go_cache() {
  local goroot="$1" seed="$2" work="$3" stamp
  log "compiling the standard library seed cache (about a minute of CPU)"
  # shellcheck disable=SC2046 # one package a word
  (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work/home" GOROOT="$goroot" GOCACHE="$seed" \
    GOTOOLCHAIN=local GOPROXY=off CGO_ENABLED=0 GOTELEMETRY=off GODEBUG=goindex=0 GOFLAGS= \
    nice "$goroot/bin/go" build $(cat "$IMAGES_DIR/files/go/std-packages.txt")) \
    || die "cannot warm the Go build cache"
  rm -f "$seed/trim.txt" "$seed/testexpire.txt"
  if grep -rlF "$work" "$seed" | head -3 | grep -q .; then
    die "the Go seed cache names the build directory $work; it would differ at every build"
  fi
  stamp=$(printf '%20d' 946684800000000000)
  find "$seed" -name '*-a' -exec sed -i -E "s/[ 0-9]{20}\$/$stamp/" {} +
  chmod -R a+rX,go-w "$seed"
}

recipe_build() {
  local work="$1" src
  base_layer "$work/base"
  src=$(cd /tmp && go_toolchain_dir)
  mkdir -p "$work/go/usr/local/bin"
  cp -a "$src" "$work/go/usr/local/go"
  # The module cache keeps files read-only; in the image they get ordinary modes. Go's own
  # test suite and API lists are not needed to build programs.
  # Module zips carry no exec bits: the toolchain's commands get them back here.
  chmod -R u+w,go-w "$work/go/usr/local/go"
  chmod 0755 "$work/go/usr/local/go/bin/"* "$work/go/usr/local/go/pkg/tool/linux_amd64/"*
  rm -rf "$work/go/usr/local/go/test" "$work/go/usr/local/go/api"
  warm_go_cache "$work/go/usr/local/go" "$work/go/usr/local/go/cronscale-cache-seed" "$work"
  install -m 0755 "$IMAGES_DIR/files/go/go" "$work/go/usr/local/bin/go"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/local/go/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8",
          "GOCACHE=/tmp/.cache/go-build", "GOPATH=/tmp/go", "GOMODCACHE=/tmp/go/pkg/mod",
          "GOTOOLCHAIN=local", "GOPROXY=off", "CGO_ENABLED=0", "GOTELEMETRY=off"],
  "Cmd": ["go", "version"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$work/base" "$work/go")
}
