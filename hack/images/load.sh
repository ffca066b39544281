#!/usr/bin/env bash
# Builds (when needed) and imports the named local images into the containerd at
# $CONTAINERD_ADDRESS, namespace k8s.io (where the kubelet looks), and prints their refs, one a
# line, in the order given. An image already there is not imported again.
# Without CONTAINERD_ADDRESS, the address is read from the cluster.env of the local cluster
# $CLUSTER_NAME (default cronscale).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -ge 1 ] || die "usage: hack/images/load.sh NAME... (CONTAINERD_ADDRESS=/path/to/containerd.sock)"
if [ -z "${CONTAINERD_ADDRESS:-}" ]; then
  env_file="/var/tmp/cronscale/clusters/${CLUSTER_NAME:-cronscale}/cluster.env"
  [ -f "$env_file" ] || die "CONTAINERD_ADDRESS is not set and there is no $env_file"
  CONTAINERD_ADDRESS=$(sed -n 's/^CONTAINERD_ADDRESS=//p' "$env_file" | tr -d "\"'")
fi
[ -S "$CONTAINERD_ADDRESS" ] || die "no containerd socket at $CONTAINERD_ADDRESS"
CTR="${CTR:-ctr}"
command -v "$CTR" >/dev/null 2>&1 || die "ctr not found (Debian package containerd)"
ctr_() { "$CTR" -a "$CONTAINERD_ADDRESS" -n k8s.io "$@"; }

for name in "$@"; do
  line=$("$IMAGES_DIR/build.sh" "$name")
  ref="${line%%$'\t'*}"
  archive="${line#*$'\t'}"
  if ctr_ images ls -q "name==$ref" | grep -qxF "$ref"; then
    log "$ref already in $CONTAINERD_ADDRESS"
  else
    start=$(date +%s)
    # The archive's index names the image (io.containerd.image.name); unpacking now means the
    # kubelet's first container start does not pay for it.
    ctr_ images import "$archive" >/dev/null || die "ctr images import $archive failed"
    ctr_ images ls -q "name==$ref" | grep -qxF "$ref" || die "import of $archive did not create $ref"
    log "imported $ref in $(($(date +%s) - start))s"
  fi
  echo "$ref"
done
