#!/usr/bin/env bash
# Stops the local cluster $CLUSTER_NAME and removes everything it made: add-ons, pod containers,
# kubelet, kube-proxy, containerd and its shims, every mount under the state dir, the node's
# netns and links, its cgroups, the control plane and any process listed in pids/*.pid; then the
# state dir itself. Safe to run on a half-started or already-stopped cluster.
# Knob: CRONSCALE_KEEP_STATE=1 keeps the state dir (logs) after everything is stopped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ $EUID -eq 0 ]] || die "down.sh needs root"
t0=$SECONDS

if [[ ! -e "$STATE_DIR" ]] && [[ ! -e "/var/run/netns/$NODE_NETNS" ]] && [[ -z "$(cgroup_dirs)" ]]; then
  log "no cluster named $CLUSTER_NAME"
  exit 0
fi
ENV_FILE="$STATE_DIR/cluster.env"
if [[ -f "$ENV_FILE" ]]; then
  set -a
  source "$ENV_FILE"
  set +a
fi
[[ -f "$STATE_DIR/index" ]] && network_vars "$(cat "$STATE_DIR/index")"

# kill_pidfile FILE [GRACE_S] — SIGTERM, then SIGKILL after GRACE_S; only if the pid is ours.
kill_pidfile() {
  local f="$1" grace="${2:-5}" pid i
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if pid_is_ours "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      [[ -d "/proc/$pid" ]] || break
      sleep 0.1
    done
    if [[ -d "/proc/$pid" ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    for ((i = 0; i < 50; i++)); do
      [[ -d "/proc/$pid" ]] || break
      sleep 0.1
    done
  fi
  rm -f "$f"
}

# 1. Add-ons, newest first, while the API still answers.
if [[ -f "$STATE_DIR/addons" ]]; then
  for a in $(tac "$STATE_DIR/addons"); do
    script="$CLUSTER_DIR/addons/$a.sh"
    if [[ -x "$script" ]]; then
      log "add-on $a: down"
      "$script" down >&2 || log "warning: add-on $a down failed"
    fi
  done
  rm -f "$STATE_DIR/addons"
fi

# 2. The kubelet first (or it restarts what we stop), then every pod container.
kill_pidfile "$STATE_DIR/pids/kubelet.pid" 3
kill_pidfile "$STATE_DIR/pids/kube-proxy.pid" 2
kill_pidfile "$STATE_DIR/pids/kwok.pid" 2
CTR=(ctr --address "$CONTAINERD_SOCK" -n k8s.io)
if [[ -S "$CONTAINERD_SOCK" ]] && timeout 5 "${CTR[@]}" version >/dev/null 2>&1; then
  tasks="$(timeout 10 "${CTR[@]}" tasks ls -q 2>/dev/null || true)"
  for t in $tasks; do timeout 5 "${CTR[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
  for t in $tasks; do timeout 10 "${CTR[@]}" tasks delete -f "$t" >/dev/null 2>&1 || true; done
fi

# 3. containerd, then any shim of this node still alive (matched by our socket path), removing
# the shim's own socket file under /run/containerd/s when it cannot do so itself.
kill_pidfile "$STATE_DIR/pids/containerd.pid" 3
# The shims live in the node netns, and unix sockets are listed per netns.
for pid in $(shim_pids); do
  socks="$(nsenter --net="/var/run/netns/$NODE_NETNS" -- ss -xlpn 2>/dev/null |
    awk -v p="pid=$pid," 'index($0, p) { print $5 }' | grep '^/run/containerd/s/' || true)"
  kill -KILL "$pid" 2>/dev/null || true
  for s in $socks; do rm -f "$s"; done
done
sleep 0.2

# 4. Every mount under the state dir (container rootfs, pod volumes, pod netns files).
for attempt in 1 2 3; do
  left="$(mounts_under "$STATE_DIR")"
  [[ -z "$left" ]] && break
  while IFS= read -r m; do
    umount "$m" 2>/dev/null || { [[ $attempt -eq 3 ]] && umount -l "$m" 2>/dev/null; } || true
  done <<<"$left"
done

# 5. The node netns (its veth end and pod links go with it), the host veth end and route.
if [[ -e "/var/run/netns/$NODE_NETNS" ]]; then
  ip netns delete "$NODE_NETNS" 2>/dev/null || { umount -l "/var/run/netns/$NODE_NETNS" 2>/dev/null; rm -f "/var/run/netns/$NODE_NETNS"; }
fi
if [[ -n "${HOST_VETH:-}" ]] && ip link show "$HOST_VETH" >/dev/null 2>&1; then
  ip link delete "$HOST_VETH" 2>/dev/null || true
fi
# The node makes no host iptables rules (kube-proxy and the CNI bridge live in the netns); CNI's
# result cache is the one file it keeps outside our dirs.
if [[ -n "${CNI_NETWORK:-}" ]]; then rm -f /var/lib/cni/results/"$CNI_NETWORK"-*; fi

# 6. Control plane and any other process of ours (add-ons write theirs to pids/ too).
# A throwaway cluster needs no graceful apiserver shutdown (it may take ~30 s on SIGTERM).
for name in kube-controller-manager kube-scheduler kube-apiserver; do
  kill_pidfile "$STATE_DIR/pids/$name.pid" 2
done
for f in "$STATE_DIR"/pids/*.pid; do
  [[ "$f" == */etcd.pid ]] && continue
  kill_pidfile "$f" 2
done
kill_pidfile "$STATE_DIR/pids/etcd.pid" 2

# The kubelet's device-plugin and pod-resources sockets have fixed host paths shared by every
# kubelet on the machine: remove them with the last cluster.
others="$(find "$CLUSTERS_ROOT" -mindepth 1 -maxdepth 1 -type d ! -name "$CLUSTER_NAME" 2>/dev/null | head -1)"
if [[ -z "$others" ]]; then
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/pod-resources/kubelet.sock
fi

# 7. The pods' cgroups (deepest first), then the state dir.
for d in $(cgroup_dirs); do
  find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
done
if [[ "${CRONSCALE_KEEP_STATE:-0}" == 1 ]]; then
  log "state dir kept: $STATE_DIR"
elif [[ -n "$(mounts_under "$STATE_DIR")" ]]; then
  log "warning: mounts remain under $STATE_DIR; not deleting it"
  exit 1
else
  # --one-file-system: never descend into anything still mounted from elsewhere.
  rm -rf --one-file-system "$STATE_DIR"
fi
log "cluster down in $((SECONDS - t0))s"
