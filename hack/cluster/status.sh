#!/usr/bin/env bash
# Says what of the local cluster $CLUSTER_NAME runs: each process, the node netns and links,
# the API's health and the nodes. Exit 0 when the API answers, 1 otherwise.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -d "$STATE_DIR" ]]; then
  echo "cluster $CLUSTER_NAME: not running (no $STATE_DIR)"
  exit 1
fi
if [[ -f "$STATE_DIR/cluster.env" ]]; then
  set -a
  source "$STATE_DIR/cluster.env"
  set +a
fi
echo "cluster $CLUSTER_NAME"
echo "  state dir:  $STATE_DIR"
echo "  kubeconfig: ${KUBECONFIG:-?}"
echo "  API:        ${APISERVER_URL:-?}"
echo "  node:       ${NODE_NAME:-?} at ${NODE_IP:-?} (netns ${NODE_NETNS:-?}), pods ${POD_CIDR:-?}"
echo "processes:"
for f in "$STATE_DIR"/pids/*.pid; do
  [[ -f "$f" ]] || continue
  name="$(basename "$f" .pid)"
  pid="$(cat "$f")"
  if pid_is_ours "$pid"; then
    printf '  %-24s running (pid %s)\n' "$name" "$pid"
  else
    printf '  %-24s NOT running (pid %s)\n' "$name" "$pid"
  fi
done
printf '  %-24s %s\n' containerd-shims "$(shim_pids | wc -l)"
echo "network:"
if [[ -e "/var/run/netns/${NODE_NETNS:-none}" ]]; then echo "  netns ${NODE_NETNS} present"; else echo "  netns missing"; fi
if ip link show "${HOST_VETH:-none}" >/dev/null 2>&1; then echo "  link ${HOST_VETH} present"; else echo "  link missing"; fi
echo "  mounts under state dir: $(mounts_under "$STATE_DIR" | wc -l)"
if [[ -n "${BIN_DIR:-}" ]] && [[ -x "$BIN_DIR/kubectl" ]]; then
  k=("$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG" --request-timeout 5s)
  if "${k[@]}" get --raw /readyz >/dev/null 2>&1; then
    echo "API: ready ($("${k[@]}" version -o json 2>/dev/null | jq -r .serverVersion.gitVersion))"
    "${k[@]}" get nodes -o wide 2>&1 | sed 's/^/  /' | head -20
    echo "  pods: $("${k[@]}" get pods -A --no-headers 2>/dev/null | wc -l)"
    exit 0
  fi
fi
echo "API: not answering"
exit 1
