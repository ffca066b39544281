#!/usr/bin/env bash
# Builds the local cluster's Go binaries from the wrapper modules under hack/cluster/tools/
# (versions from versions.env) and caches them outside the work tree, keyed by version:
#   ${CRONSCALE_CACHE:-$HOME/.cache/cronscale}/bin/<tool>-<version>/
# A tool whose cache dir is complete is skipped, so a warm run takes well under a second.
# Prints one line: a bin dir holding symlinks to every binary (kubectl, helm, kwok, etcd, ...).
# Progress goes to stderr. Usage: hack/cluster/build.sh [kubernetes|etcd|kwok|helm]...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}"
bin_root="$cache/bin"
mkdir -p "$bin_root"

export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local

log() { echo "build.sh: $*" >&2; }

k8s_ldflags() {
  local v="$KUBERNETES_VERSION" major minor
  major="${v#v}"
  major="${major%%.*}"
  minor="${v#v*.}"
  minor="${minor%%.*}"
  local flags="-s -w" pkg
  # Without these /version reports v0.0.0 (the staging modules carry no version of their own).
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

# build_tool NAME VERSION LDFLAGS PKG... — go build into a temp dir, then rename into place.
build_tool() {
  local name="$1" version="$2" ldflags="$3"
  shift 3
  local out="$bin_root/$name-$version"
  if [[ -f "$out/.complete" ]]; then
    return 0
  fi
  log "building $name $version (cold builds take minutes)"
  local start=$SECONDS tmp
  tmp="$(mktemp -d "$bin_root/.tmp-$name-XXXXXX")"
  (cd "$here/tools/$name" && nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp/" "$@")
  touch "$tmp/.complete"
  rm -rf "$out"
  mv "$tmp" "$out"
  log "built $name $version in $((SECONDS - start))s"
}

# kwok_stages — the kwok binary embeds no behaviour: its stages (node init + lease heartbeat,
# pod ready/complete/delete) ship as YAML in the kwok module. Collect them next to the binary.
kwok_stages() {
  local out="$bin_root/kwok-$KWOK_VERSION/kwok-stages.yaml" dir f
  [[ -s "$out" ]] && return 0
  dir="$(cd "$here/tools/kwok" && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$dir/kustomize/stage/$f"
  done >"$out.tmp"
  mv "$out.tmp" "$out"
}

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(kubernetes etcd kwok helm)

tool_version() {
  case "$1" in
  kubernetes) echo "$KUBERNETES_VERSION" ;;
  etcd) echo "$ETCD_VERSION" ;;
  kwok) echo "$KWOK_VERSION" ;;
  helm) echo "$HELM_VERSION" ;;
  *)
    echo "build.sh: unknown tool $1" >&2
    exit 2
    ;;
  esac
}
missing=0
for tool in "${want[@]}"; do
  [[ -f "$bin_root/$tool-$(tool_version "$tool")/.complete" ]] || missing=1
done
if [[ " ${want[*]} " == *" kwok "* ]] && [[ ! -f "$bin_root/kwok-$KWOK_VERSION/kwok-stages.yaml" ]]; then
  missing=1
fi
if ((missing)); then
  # Builds are CPU-heavy and other builds may share the machine: be nice, and never build the
  # same tool twice at once (two clusters starting together wait for one build). A warm call
  # takes no lock, so it never waits for someone else's build of a tool it does not need.
  exec 9>"$bin_root/.build.lock"
  flock 9
fi
for tool in "${want[@]}"; do
  case "$tool" in
  kubernetes)
    build_tool kubernetes "$KUBERNETES_VERSION" "$(k8s_ldflags)" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
      k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl
    ;;
  etcd) build_tool etcd "$ETCD_VERSION" "-s -w" . ;;
  kwok)
    build_tool kwok "$KWOK_VERSION" "-s -w" sigs.k8s.io/kwok/cmd/kwok
    ;;
  helm)
    build_tool helm "$HELM_VERSION" "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
      helm.sh/helm/v4/cmd/helm
    ;;
  *)
    echo "build.sh: unknown tool $tool" >&2
    exit 2
    ;;
  esac
done

if [[ -x "$bin_root/kwok-$KWOK_VERSION/kwok" ]]; then kwok_stages; fi

# One dir of symlinks for PATH/BIN_DIR, named after the whole version set.
link_dir="$bin_root/cluster-$KUBERNETES_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION-helm$HELM_VERSION"
mkdir -p "$link_dir"
for d in "$bin_root/kubernetes-$KUBERNETES_VERSION" "$bin_root/etcd-$ETCD_VERSION" \
  "$bin_root/kwok-$KWOK_VERSION" "$bin_root/helm-$HELM_VERSION"; do
  [[ -d "$d" ]] || continue
  for f in "$d"/*; do
    ln -sfn "$f" "$link_dir/$(basename "$f")"
  done
done
echo "$link_dir"
