#!/usr/bin/env bash
# Builds the Go binaries of the cluster add-ons into the cache and prints "<tool>\t<path>" per
# tool. Arguments are add-on names (dns ingress cert-manager metrics custom-metrics storage s3, or
# "platform" for all); no argument builds all. Each tool builds from its own wrapper module under
# go/<tool>/ (committed go.mod/go.sum) because several upstream go.mod files carry replace
# directives that `go install module@version` refuses, and because two of the binaries are
# small mains of ours over upstream libraries (cert-manager's controllers, the test
# custom-metrics server).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${CRONSCALE_CACHE:-$HOME/.cache/cronscale}/bin

tool_version() {
  case $1 in
    coredns) echo "$COREDNS_VERSION" ;;
    traefik) echo "$TRAEFIK_VERSION" ;;
    cert-manager-controller) echo "$CERT_MANAGER_VERSION" ;;
    metrics-server) echo "$METRICS_SERVER_VERSION" ;;
    custom-metrics) echo "$CUSTOM_METRICS_APISERVER_VERSION" ;;
    local-path-provisioner) echo "$LOCAL_PATH_PROVISIONER_VERSION" ;;
    versitygw) echo "$VERSITYGW_VERSION" ;;
    *) echo "unknown tool $1" >&2; return 1 ;;
  esac
}
tool_package() {
  case $1 in
    coredns) echo github.com/coredns/coredns ;;
    traefik) echo github.com/traefik/traefik/v3/cmd/traefik ;;
    cert-manager-controller) echo cronscale.local/addons/cert-manager-controller ;;
    metrics-server) echo sigs.k8s.io/metrics-server/cmd/metrics-server ;;
    custom-metrics) echo cronscale.local/addons/custom-metrics ;;
    local-path-provisioner) echo github.com/rancher/local-path-provisioner ;;
    versitygw) echo github.com/versity/versitygw/cmd/versitygw ;;
  esac
}
tool_ldflags() {
  local v=$2
  case $1 in
    coredns) echo "-X github.com/coredns/coredns/coremain.GitCommit=$v" ;;
    traefik) echo "-X github.com/traefik/traefik/v3/pkg/version.Version=$v" ;;
    metrics-server) echo "-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitVersion=$v" ;;
    local-path-provisioner) echo "-X main.VERSION=$v" ;;
    versitygw) echo "-X main.Version=$v" ;;
    *) echo "" ;;
  esac
}
addon_tools() {
  case $1 in
    dns) echo coredns ;;
    ingress) echo traefik ;;
    cert-manager) echo cert-manager-controller ;;
    metrics) echo metrics-server ;;
    custom-metrics) echo custom-metrics ;;
    storage) echo local-path-provisioner ;;
    s3) echo versitygw ;;
    platform) echo coredns traefik cert-manager-controller metrics-server custom-metrics local-path-provisioner versitygw ;;
    *) echo "unknown add-on $1" >&2; return 1 ;;
  esac
}

# Cache directory of a tool: version plus a hash of its wrapper module, so an edit of the
# wrapper (a replace, our own main.go) never reuses a stale binary.
tool_dir() {
  local tool=$1 v h
  v=$(tool_version "$tool")
  h=$(cd "$here/go/$tool" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-10)
  echo "$cache/$tool-$v-$h"
}

build_tool() {
  local tool=$1 dir v pkg tmp start
  dir=$(tool_dir "$tool")
  if [[ -x $dir/$tool ]]; then printf '%s\t%s\n' "$tool" "$dir/$tool"; return; fi
  mkdir -p "$cache"
  # One builder per tool at a time (parallel cluster-ups share the cache).
  exec {lock}>"$cache/.$tool.lock"
  flock "$lock"
  if [[ ! -x $dir/$tool ]]; then
    v=$(tool_version "$tool"); pkg=$(tool_package "$tool")
    tmp=$(mktemp -d "$cache/.$tool.XXXXXX")
    start=$(date +%s)
    echo "addons/build: building $tool $v (cold; nice 15)" >&2
    # nice: the control-plane build shares the 2 cores and is on the critical path.
    (cd "$here/go/$tool" && GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly \
      nice -n "${ADDONS_BUILD_NICE:-15}" go build -trimpath -ldflags "-s -w $(tool_ldflags "$tool" "$v")" \
      -o "$tmp/$tool" "$pkg") >&2
    mv "$tmp" "$dir"
    echo "addons/build: $tool built in $(( $(date +%s) - start ))s" >&2
  fi
  exec {lock}>&-
  printf '%s\t%s\n' "$tool" "$dir/$tool"
}

main() {
  # --tool TOOL: one binary by tool name (used by the add-on scripts through lib.sh).
  if [[ "${1:-}" == --tool ]]; then
    build_tool "$2"
    return
  fi
  local names=("$@") tools=() t n
  [[ ${#names[@]} -gt 0 ]] || names=(platform)
  for n in "${names[@]}"; do
    for t in $(addon_tools "$n"); do
      [[ " ${tools[*]} " == *" $t "* ]] || tools+=("$t")
    done
  done
  for t in "${tools[@]}"; do build_tool "$t"; done
}

main "$@"
