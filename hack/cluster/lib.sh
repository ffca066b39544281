# shellcheck shell=bash
# Shared by up.sh, down.sh and status.sh: names, paths and small helpers of one local cluster.
# Sourced, not run. Everything a cluster makes is named after CLUSTER_NAME so two clusters on one
# machine never share a dir, port, netns, link, bridge, CIDR or cgroup.

CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$CLUSTER_DIR/../.." && pwd)"
# shellcheck source=versions.env
source "$CLUSTER_DIR/versions.env"

CLUSTER_NAME="${CLUSTER_NAME:-cronscale}"
if [[ ! "$CLUSTER_NAME" =~ ^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$ ]]; then
  echo "CLUSTER_NAME must be a DNS label of at most 42 characters: '$CLUSTER_NAME'" >&2
  exit 2
fi
CLUSTERS_ROOT=/var/tmp/cronscale/clusters
STATE_DIR="$CLUSTERS_ROOT/$CLUSTER_NAME"
NODE_NETNS="cronscale-$CLUSTER_NAME"
NODE_NAME="$CLUSTER_NAME-node"
# Pods' cgroups live under this cgroup (per controller on cgroup v1), so clusters don't mix.
CGROUP_ROOT="/cronscale-$CLUSTER_NAME"
CONTAINERD_SOCK="$STATE_DIR/containerd/containerd.sock"

log() { echo "[$CLUSTER_NAME] $*" >&2; }
die() {
  echo "[$CLUSTER_NAME] error: $*" >&2
  exit 1
}

# cluster_index — the cluster's number 1..239, which picks its veth /30 (10.213.N.0/30), pod
# CIDR (10.214.N.0/24), link and bridge names. Derived from a hash of the name; when another
# live cluster already holds that number the next free one is taken and remembered in the state
# dir (so down.sh finds the same links).
cluster_index() {
  if [[ -s "$STATE_DIR/index" ]]; then
    cat "$STATE_DIR/index"
    return
  fi
  local h n i taken
  h=$(printf '%s' "$CLUSTER_NAME" | cksum | cut -d' ' -f1)
  for ((i = 0; i < 239; i++)); do
    n=$(((h + i) % 239 + 1))
    taken=""
    if ip link show "csh$n" >/dev/null 2>&1; then taken=1; fi
    if grep -lsx "$n" "$CLUSTERS_ROOT"/*/index >/dev/null 2>&1; then taken=1; fi
    if [[ -z "$taken" ]]; then
      echo "$n"
      return
    fi
  done
  die "no free cluster index (239 clusters?)"
}

# network_vars N — sets the per-cluster addresses and names for index N.
network_vars() {
  local n="$1"
  HOST_VETH="csh$n"
  NODE_VETH_TMP="csn$n" # renamed to eth0 once inside the netns
  BRIDGE="csbr$n"
  HOST_IP="10.213.$n.1"
  NODE_IP="10.213.$n.2"
  POD_CIDR="10.214.$n.0/24"
  POD_GW="10.214.$n.1"
  # Services are only routed inside the node's netns (kube-proxy lives there), so every cluster
  # can use the same range without meeting another.
  SERVICE_CIDR="10.96.0.0/16"
  KUBERNETES_SVC_IP="10.96.0.1"
  CLUSTER_DNS_IP="10.96.0.10"
  CNI_NETWORK="cronscale-$CLUSTER_NAME"
}

# free_port [ADDR] — a TCP port nobody listens on (random in 20000-59999).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! ss -Htln "sport = :$p" | grep -q .; then
      # Not handed out twice within one up.sh run either.
      if [[ " ${USED_PORTS:-} " != *" $p "* ]]; then
        USED_PORTS="${USED_PORTS:-} $p"
        echo "$p"
        return
      fi
    fi
  done
  die "no free port found"
}

# pid_is_ours PID — true when PID runs and belongs to this cluster (its command line or its
# environment names the state dir), so a recycled pid is never killed.
pid_is_ours() {
  local pid="$1"
  [[ "$pid" =~ ^[0-9]+$ ]] && [[ -d "/proc/$pid" ]] || return 1
  if tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$STATE_DIR"; then return 0; fi
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "STATE_DIR=$STATE_DIR"
}

# shim_pids — containerd shims of this node: their command line carries our containerd socket
# (`-address <sock>`), which no other process's does.
shim_pids() {
  local pid
  for pid in $(pgrep -f -- "-address $CONTAINERD_SOCK" || true); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^[^ ]*containerd-shim'; then echo "$pid"; fi
  done
  return 0
}

# mounts_under DIR — mount points at or under DIR, deepest first.
mounts_under() {
  awk -v d="$1" '{ gsub(/\\040/, " ", $5); if ($5 == d || index($5, d "/") == 1) print $5 }' /proc/self/mountinfo |
    awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

# cgroup_dirs — this cluster's cgroup dirs on every mounted hierarchy.
cgroup_dirs() {
  local m
  for m in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts); do
    [[ -d "$m$CGROUP_ROOT" ]] && echo "$m$CGROUP_ROOT"
  done
  return 0
}
