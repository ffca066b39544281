# shellcheck shell=bash
# Shared by the add-on scripts (hack/cluster/addons/<name>.sh up|down). Sourced, not run.
# up.sh runs them with cluster.env exported; down.sh may not, so the env is read back from the
# state dir of CLUSTER_NAME when it is missing.
set -euo pipefail

ADDONS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$ADDONS_DIR/../../.." && pwd)"

if [[ -z "${KUBECONFIG:-}" || -z "${BIN_DIR:-}" || -z "${NODE_NETNS:-}" ]]; then
  STATE_DIR="${STATE_DIR:-/var/tmp/cronscale/clusters/${CLUSTER_NAME:-cronscale}}"
  [[ -f "$STATE_DIR/cluster.env" ]] || {
    echo "addons: no $STATE_DIR/cluster.env (is the cluster up?)" >&2
    exit 1
  }
  set -a
  # shellcheck source=/dev/null
  source "$STATE_DIR/cluster.env"
  set +a
fi
export STATE_DIR KUBECONFIG

ADDON_NAME="${ADDON_NAME:-$(basename "$0" .sh)}"
alog() { echo "[$CLUSTER_NAME/$ADDON_NAME] $*" >&2; }
adie() {
  alog "error: $*"
  exit 1
}

kc() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG" --request-timeout=20s "$@"; }

# addon_bin TOOL — path of the cached binary, building it first when missing.
addon_bin() { "$ADDONS_DIR/build.sh" --tool "$1" | cut -f2; }

# start_proc NAME [--netns] CMD... — runs CMD detached (own session, STATE_DIR in its env so
# down.sh recognises it), log in logs/NAME.log, pid in pids/NAME.pid. --netns runs it inside the
# node's network namespace (nsenter, not `ip netns exec`: that remounts /sys).
start_proc() {
  local name="$1"
  shift
  local prefix=()
  if [[ "${1:-}" == --netns ]]; then
    prefix=(nsenter --net="/var/run/netns/$NODE_NETNS" --)
    shift
  fi
  mkdir -p "$STATE_DIR/logs" "$STATE_DIR/pids"
  setsid "${prefix[@]}" "$@" </dev/null >"$STATE_DIR/logs/$name.log" 2>&1 &
  echo $! >"$STATE_DIR/pids/$name.pid"
}

# stop_proc NAME — SIGTERM, then SIGKILL after 5 s; only a pid whose environ carries our
# STATE_DIR (a recycled pid is never someone else's process).
stop_proc() {
  local f="$STATE_DIR/pids/$1.pid" pid i
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if [[ -r /proc/$pid/environ ]] && tr '\0' '\n' <"/proc/$pid/environ" | grep -qxF "STATE_DIR=$STATE_DIR"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# proc_alive NAME — the process of pids/NAME.pid still runs.
proc_alive() {
  local f="$STATE_DIR/pids/$1.pid"
  [[ -f "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# wait_for DESC SECONDS CMD... — polls CMD every 0.5 s; on timeout shows the add-on's log.
wait_for() {
  local desc="$1" limit="$2" end
  shift 2
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      [[ -f "$STATE_DIR/logs/$ADDON_NAME.log" ]] && tail -n 30 "$STATE_DIR/logs/$ADDON_NAME.log" >&2
      adie "timed out after ${limit}s waiting for $desc"
    fi
    sleep 0.5
  done
}

# free_port — a TCP port nobody listens on (random in 20000-59999).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! ss -Htln "sport = :$p" | grep -q .; then
      echo "$p"
      return
    fi
  done
  adie "no free port"
}

# host_service NS NAME PORT [PROTO...] — a selector-less Service whose one endpoint is
# HOST_IP:PORT (a process of ours on the host end of the node's veth). The apiserver runs with
# --enable-aggregator-routing, so an APIService on such a Service is dialled at that endpoint
# and needs no ClusterIP route on the host.
host_service() {
  local ns="$1" name="$2" port="$3"
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: $name, namespace: $ns, labels: {app.kubernetes.io/part-of: cronscale-addons}}
spec:
  ports: [{name: https, port: 443, targetPort: $port, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $name-host
  namespace: $ns
  labels:
    kubernetes.io/service-name: $name
    endpointslice.kubernetes.io/managed-by: addons.cronscale.io
    app.kubernetes.io/part-of: cronscale-addons
addressType: IPv4
ports: [{name: https, port: $port, protocol: TCP}]
endpoints: [{addresses: ["$HOST_IP"], conditions: {ready: true}}]
EOF
}

# apiservice_available NAME — the APIService reports Available=True.
apiservice_available() {
  [[ "$(kc get apiservice "$1" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" == True ]]
}

# serving_cert DIR CN SAN — a CA and a serving cert for an aggregated API server, so the
# APIService can carry a caBundle instead of insecureSkipTLSVerify.
serving_cert() {
  local dir="$1" cn="$2" san="$3"
  mkdir -p "$dir"
  [[ -f "$dir/tls.crt" ]] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$cn-ca" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 3650 -out "$dir/tls.crt" \
    -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san") 2>/dev/null
}
