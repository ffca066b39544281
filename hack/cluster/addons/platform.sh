#!/usr/bin/env bash
# platform add-on set: everything a ScalePlatform needs locally — dns, storage, cert-manager,
# ingress, metrics, custom-metrics, s3 (ADDONS=platform). `up` builds the missing binaries first,
# all in one go, then starts each add-on in that order; `down` stops them in reverse.
#
#   platform.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PLATFORM_ADDONS=(dns storage cert-manager ingress metrics custom-metrics s3)

case "${1:-}" in
  up)
    "$ADDONS_DIR/build.sh" platform >/dev/null
    for a in "${PLATFORM_ADDONS[@]}"; do
      start=$SECONDS
      ADDON_NAME="$a" "$ADDONS_DIR/$a.sh" up
      alog "$a up in $((SECONDS - start))s"
    done
    ;;
  down)
    for ((i = ${#PLATFORM_ADDONS[@]} - 1; i >= 0; i--)); do
      a="${PLATFORM_ADDONS[$i]}"
      ADDON_NAME="$a" "$ADDONS_DIR/$a.sh" down || alog "warning: $a down failed"
    done
    ;;
  *) adie "usage: $0 up|down" ;;
esac
