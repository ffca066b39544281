#!/usr/bin/env bash
# Builds the operator image from ./Dockerfile with the project's own Docker daemon
# (hack/docker/dockerd.sh) on the locally assembled Node base (hack/images/build.sh node): no
# container registry is involved. Prints the ref, cronscale.local/operator:<12 hex>, where the
# tag is the content hash of the build inputs (Dockerfile, .dockerignore, package manifests,
# tsconfigs, the non-test sources of src/ and the base image's ref).
#
#   hack/docker/build-operator-image.sh              build (or find in the cache), print the ref
#   CONTAINERD_ADDRESS=/path/to.sock hack/docker/build-operator-image.sh
#                                                    ... and import it there (namespace k8s.io)
#   hack/docker/build-operator-image.sh --archive    print "REF<TAB>ARCHIVE" instead
#
# A build whose input hash was built before is skipped: the saved archive is reused (and the
# daemon is not even started). The npm ci step reaches the npm registry through the host's
# network (docker build --network host; the daemon has no bridge of its own); nothing else in
# the build uses the network, and the base image is loaded, never pulled. Knobs:
#   BUILD_CA_FILE  PEM bundle npm trusts in the build stage (default $NODE_EXTRA_CA_CERTS; "" for none)
#   DOCKER         the docker client (default /usr/bin/docker, Debian's, same API as the daemon)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}/operator-image"
DOCKER="${DOCKER:-/usr/bin/docker}"
REPO="cronscale.local/operator"

log() { echo "operator-image: $*" >&2; }
die() { echo "operator-image: error: $*" >&2; exit 1; }

print_archive=""
[ "${1:-}" = "--archive" ] && print_archive=1

# The build context, as a list of files relative to ROOT. It is exactly what .dockerignore lets
# through; the build is given a copy of these files only, so the hash covers the whole context.
context_files() {
  (
    cd "$ROOT"
    printf '%s\n' Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json
    find hack/docker/extra-ca -type f | LC_ALL=C sort
    find hack/build -type f | LC_ALL=C sort
    find src -type f ! -name '*.test.ts' ! -name 'testing.ts' | LC_ALL=C sort
  )
}

base_line=$("$ROOT/hack/images/build.sh" node) || die "cannot build the node base image"
base_ref="${base_line%%$'\t'*}"
base_archive="${base_line#*$'\t'}"
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/package.json" | head -1)

mapfile -t files < <(context_files)
hash=$(
  {
    echo "base $base_ref"
    echo "version $version"
    sha256sum <"$HERE/build-operator-image.sh"
    (cd "$ROOT" && sha256sum -- "${files[@]}")
  } | sha256sum | cut -c1-64
)
tag="${hash:0:12}"
ref="$REPO:$tag"
out="$CACHE/$tag"

import_ref() {
  [ -n "${CONTAINERD_ADDRESS:-}" ] || return 0
  [ -S "$CONTAINERD_ADDRESS" ] || die "no containerd socket at $CONTAINERD_ADDRESS"
  local ctr_=(ctr -a "$CONTAINERD_ADDRESS" -n k8s.io)
  if "${ctr_[@]}" images ls -q "name==$ref" | grep -qxF "$ref"; then
    log "$ref already in $CONTAINERD_ADDRESS"
    return
  fi
  local start=$SECONDS
  "${ctr_[@]}" images import "$out/image.tar" >/dev/null || die "ctr images import $out/image.tar failed"
  "${ctr_[@]}" images ls -q "name==$ref" | grep -qxF "$ref" || die "import did not create $ref"
  log "imported $ref into $CONTAINERD_ADDRESS in $((SECONDS - start))s"
}

finish() {
  import_ref
  if [ -n "$print_archive" ]; then printf '%s\t%s\n' "$ref" "$out/image.tar"; else echo "$ref"; fi
}

if [ -s "$out/image.tar" ]; then finish; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
flock 9
if [ -s "$out/image.tar" ]; then finish; exit 0; fi

start=$SECONDS
eval "$("$HERE/dockerd.sh" up)"
export DOCKER_HOST
docker_() { "$DOCKER" "$@"; }

if ! docker_ image inspect "$base_ref" >/dev/null 2>&1; then
  log "loading $base_ref"
  docker_ load -i "$base_archive" >/dev/null || die "docker load $base_archive failed"
fi

ctx=$(mktemp -d /tmp/cronscale-operator-ctx.XXXXXX)
trap 'rm -rf "$ctx" "$ctx.log"' EXIT
(cd "$ROOT" && cp --parents -- "${files[@]}" "$ctx/")
# Same metadata on every build (the classic builder's COPY cache looks at file headers).
chmod -R u=rwX,go=rX "$ctx"
# The CA npm must trust to reach the registry from this network (see hack/docker/extra-ca/).
# Not part of the hash: it decides whether the download works, not what the image holds.
ca_file="${BUILD_CA_FILE-${NODE_EXTRA_CA_CERTS:-}}"
if [ -n "$ca_file" ]; then
  [ -r "$ca_file" ] || die "BUILD_CA_FILE=$ca_file is not readable"
  cp "$ca_file" "$ctx/hack/docker/extra-ca/build-ca.pem"
fi
find "$ctx" -exec touch -h -d @0 {} +

# The classic builder: it uses the loaded base as is, where BuildKit's resolver may ask a
# registry about FROM images. --network host is for npm ci (the daemon has no bridge).
log "building $ref on $base_ref"
DOCKER_BUILDKIT=0 docker_ build \
  --network host \
  --build-arg "BASE=$base_ref" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$hash" \
  --tag "$ref" \
  "$ctx" >"$ctx.log" 2>&1 || { tail -40 "$ctx.log" >&2; die "docker build failed"; }
built=$SECONDS

mkdir -p "$out"
docker_ save -o "$out/image.tar.tmp" "$ref" || die "docker save failed"
mv "$out/image.tar.tmp" "$out/image.tar"
echo "$ref" >"$out/ref"
# Older operator images only take space in the daemon (its layer cache stays).
for old in $(docker_ images --format '{{.Repository}}:{{.Tag}}' "$REPO" | grep -vxF "$ref"); do
  docker_ rmi "$old" >/dev/null 2>&1 || true
done
size=$(docker_ image inspect --format '{{.Size}}' "$ref")
log "built $ref in $((built - start))s (saved in $((SECONDS - built))s; $((size / 1000000)) MB unpacked, $(du -m "$out/image.tar" | cut -f1) MB archive)"
finish
