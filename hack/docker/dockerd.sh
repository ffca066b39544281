#!/usr/bin/env bash
# A project-owned Docker daemon (Debian's docker.io) for building the operator image.
#
#   hack/docker/dockerd.sh up     start it (no-op when it already answers); prints DOCKER_HOST=...
#   hack/docker/dockerd.sh down   stop it (and its containerd); keeps the data (layer cache)
#   hack/docker/dockerd.sh purge  down, then delete the data
#   hack/docker/dockerd.sh env    print DOCKER_HOST=unix://... (eval-able)
#   hack/docker/dockerd.sh status exit 0 when it answers
#
# Everything lives under $DOCKER_STATE (default /var/tmp/cronscale/docker): data root, exec root,
# pid files, logs and the unix socket. The daemon gets its own containerd (own socket, root and
# state) so it never attaches to a containerd it finds at /run/containerd. No TCP listener, no
# bridge, no iptables rules, no IP forwarding: builds that need the network say --network host.
set -euo pipefail

STATE="${DOCKER_STATE:-/var/tmp/cronscale/docker}"
SOCK="$STATE/docker.sock"
CTD_SOCK="$STATE/containerd/containerd.sock"
DOCKER="${DOCKER:-/usr/bin/docker}"

log() { echo "dockerd: $*" >&2; }
die() { echo "dockerd: error: $*" >&2; exit 1; }

# The Debian client matches the daemon's API version; another docker on PATH may be newer.
docker_() { DOCKER_HOST="unix://$SOCK" "$DOCKER" "$@"; }
answers() { [ -S "$SOCK" ] && docker_ version >/dev/null 2>&1; }
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
# close_fds — closes every inherited descriptor above 2 (but bash's own 255), so a daemon
# started from here never holds a caller's lock file or pipe open.
close_fds() {
  local f fd
  for f in /proc/"$BASHPID"/fd/*; do
    fd="${f##*/}"
    [ "$fd" -gt 2 ] && [ "$fd" != 255 ] && eval "exec $fd>&-"
  done 2>/dev/null || true
}

ensure_installed() {
  if [ -x /usr/sbin/dockerd ] && [ -x "$DOCKER" ] && command -v containerd >/dev/null && command -v runc >/dev/null; then
    return
  fi
  [ "$(id -u)" = 0 ] || die "docker.io is not installed and installing it needs root"
  log "installing Debian docker.io"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io containerd runc >/dev/null \
    || die "apt-get install docker.io failed"
}

start_containerd() {
  pid_alive "$STATE/containerd.pid" && [ -S "$CTD_SOCK" ] && return
  mkdir -p "$STATE/containerd"
  cat >"$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
# The CRI plugin is the kubelet's business; this containerd only runs docker's build steps.
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTD_SOCK"
[ttrpc]
  address = "$CTD_SOCK.ttrpc"
[debug]
  address = "$STATE/containerd/debug.sock"
[metrics]
  address = ""
TOML
  rm -f "$CTD_SOCK"
  (close_fds; exec setsid containerd --config "$STATE/containerd/config.toml" >>"$STATE/containerd.log" 2>&1 </dev/null) &
  echo $! >"$STATE/containerd.pid"
  for _ in $(seq 100); do [ -S "$CTD_SOCK" ] && return; sleep 0.1; done
  tail -20 "$STATE/containerd.log" >&2
  die "containerd did not start (log: $STATE/containerd.log)"
}

up() {
  if answers; then echo "DOCKER_HOST=unix://$SOCK"; return; fi
  [ "$(id -u)" = 0 ] || die "dockerd needs root"
  ensure_installed
  mkdir -p "$STATE/data" "$STATE/exec"
  start_containerd
  # An empty config file: /etc/docker/daemon.json (registry mirrors, hosts...) must not apply.
  echo '{}' >"$STATE/daemon.json"
  rm -f "$SOCK"
  log "starting (state $STATE)"
  (close_fds; exec setsid /usr/sbin/dockerd \
    --config-file "$STATE/daemon.json" \
    --data-root "$STATE/data" \
    --exec-root "$STATE/exec" \
    --pidfile "$STATE/dockerd.pid" \
    --host "unix://$SOCK" \
    --containerd "$CTD_SOCK" \
    --storage-driver vfs \
    --bridge none \
    --iptables=false \
    --ip6tables=false \
    --ip-forward=false \
    --ip-masq=false \
    --userland-proxy=false \
    --log-level warn \
    >>"$STATE/dockerd.log" 2>&1 </dev/null) &
  for _ in $(seq 150); do
    answers && { echo "DOCKER_HOST=unix://$SOCK"; return; }
    sleep 0.2
  done
  tail -20 "$STATE/dockerd.log" >&2
  die "dockerd did not answer on $SOCK within 30s (log: $STATE/dockerd.log)"
}

# stop_pid FILE NAME — SIGTERM, wait up to 20 s, then SIGKILL; removes FILE.
stop_pid() {
  local file="$1" name="$2" pid
  pid_alive "$file" || { rm -f "$file"; return; }
  pid=$(cat "$file")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "$name did not stop; killing $pid"; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$file"
}

down() {
  if answers; then
    # Build containers are removed by docker itself; anything left (an interrupted build) goes.
    for c in $(docker_ ps -aq 2>/dev/null); do docker_ rm -f "$c" >/dev/null 2>&1 || true; done
  fi
  stop_pid "$STATE/dockerd.pid" dockerd
  stop_pid "$STATE/containerd.pid" containerd
  # Mounts of the exec root and leftover shim mounts, if a daemon was killed hard.
  if [ -d "$STATE" ]; then
    grep -F " $STATE/" /proc/self/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  fi
  rm -f "$SOCK" "$CTD_SOCK"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  purge) down; rm -rf "$STATE"; log "removed $STATE" ;;
  env) echo "DOCKER_HOST=unix://$SOCK" ;;
  status) answers ;;
  *) die "usage: hack/docker/dockerd.sh up|down|purge|env|status" ;;
esac
