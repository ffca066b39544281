#!/usr/bin/env bash
# Builds the local image NAME (recipe: hack/images/recipes/NAME.sh) unless the cache already
# has it, and prints "REF<TAB>ARCHIVE". The archive is an OCI layout that is also a
# docker-archive; REF is cronscale.local/NAME:<first 12 hex of the manifest digest>.
# The cache key is everything the image is made of (resolved .deb versions, sources, versions,
# the recipe and the builder), so a warm call costs a hash and a file check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 1 ] || die "usage: hack/images/build.sh NAME (one of: $(cd "$IMAGES_DIR/recipes" && ls | sed 's/\.sh$//' | tr '\n' ' '))"
NAME="$1"
RECIPE="$IMAGES_DIR/recipes/$NAME.sh"
[ -f "$RECIPE" ] || die "no image named '$NAME' (no $RECIPE)"
# shellcheck source=/dev/null
source "$RECIPE"

mkdir -p "$IMAGES_CACHE"
BUILDER=$(builder_bin)
key=$( { recipe_inputs; cat "$IMAGES_DIR/lib.sh" "$RECIPE"; basename "$BUILDER"; } | sha256sum | cut -c1-16)
out="$IMAGES_CACHE/$NAME/$key"

print_result() { printf '%s\t%s\n' "$(cat "$out/ref")" "$out/image.tar"; }
if [ -s "$out/ref" ] && [ -f "$out/image.tar" ]; then print_result; exit 0; fi

# One build of an image at a time (a test run and a cluster start may ask together).
exec 9>"$IMAGES_CACHE/$NAME.lock"
flock 9
if [ -s "$out/ref" ] && [ -f "$out/image.tar" ]; then print_result; exit 0; fi

# build_once — the build itself, in a subshell so that its work directory goes with it.
build_once() (
  log "building $NAME"
  start=$(date +%s)
  mkdir -p "$out"
  WORK=$(mktemp -d "$IMAGES_CACHE/.work-$NAME.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  LAYERS=()
  recipe_build "$WORK"
  layer_args=()
  for l in "${LAYERS[@]}"; do layer_args+=(-layer "$l"); done
  ref=$("$BUILDER" -repo "$IMAGE_REPO_PREFIX/$NAME" -config "$WORK/config.json" "${layer_args[@]}" -out "$out/image.tar")
  echo "$ref" >"$out/ref.tmp" && mv "$out/ref.tmp" "$out/ref"
  log "built $ref in $(($(date +%s) - start))s ($(du -h "$out/image.tar" | cut -f1))"
)

status=0
build_once || status=$?
if [ "$status" = "$APT_STALE" ] && [ -z "${CRONSCALE_IMAGES_APT_RETRIED:-}" ] && [ "$(id -u)" = 0 ]; then
  log "refreshing the package lists (apt-get update) and starting over"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
  exec 9>&-
  CRONSCALE_IMAGES_APT_RETRIED=1 exec "$IMAGES_DIR/build.sh" "$NAME"
fi
[ "$status" = 0 ] || exit "$status"
print_result
