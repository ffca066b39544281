#!/usr/bin/env bash
# Starts a local Kubernetes cluster named $CLUSTER_NAME (default cronscale): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler on the host, bound to loopback or the host end of the
# node's veth; one real node (containerd + kubelet + kube-proxy) in its own network namespace;
# optionally KWOK_NODES simulated nodes; then the ADDONS (comma list, hack/cluster/addons/NAME.sh).
# State: /var/tmp/cronscale/clusters/$CLUSTER_NAME/ (kubeconfig, cluster.env, logs/, pids/).
# Knobs: CLUSTER_NAME, KWOK_NODES, ADDONS, HPA_SYNC_PERIOD (5s), HPA_DOWNSCALE_STABILIZATION (30s),
# NODE_READY_TIMEOUT (300 s; a busy 2-core machine needed more than 120).
# See hack/cluster/README.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$CLUSTER_DIR/pki.sh"
source "$CLUSTER_DIR/node.sh"

[[ $EUID -eq 0 ]] || die "up.sh needs root (netns, mounts, containerd)"
KWOK_NODES="${KWOK_NODES:-0}"
ADDONS="${ADDONS:-}"
[[ "$KWOK_NODES" =~ ^[0-9]+$ ]] || die "KWOK_NODES must be a number"
t0=$SECONDS

"$CLUSTER_DIR/host-deps.sh" >/dev/null
# Only what this cluster needs: kwok with simulated nodes, helm with add-ons.
tools=(kubernetes etcd)
if ((KWOK_NODES > 0)); then tools+=(kwok); fi
if [[ -n "$ADDONS" ]]; then tools+=(helm); fi
BIN_DIR="$("$CLUSTER_DIR/build.sh" "${tools[@]}")"
export PATH="$BIN_DIR:$PATH"

# A cluster of this name left by a killed run: remove it all first.
if [[ -e "$STATE_DIR" ]] || [[ -e "/var/run/netns/$NODE_NETNS" ]]; then
  log "cleaning up a previous cluster of this name"
  CRONSCALE_KEEP_STATE=0 "$CLUSTER_DIR/down.sh" >&2
fi

mkdir -p "$STATE_DIR"/{logs,pids}
# Every process we start carries STATE_DIR in its environment: down.sh checks it before a kill.
export STATE_DIR
INDEX="$(cluster_index)"
echo "$INDEX" >"$STATE_DIR/index"
network_vars "$INDEX"

on_error() {
  local rc=$?
  log "up.sh failed (exit $rc); last log lines:"
  local f
  for f in "$STATE_DIR"/logs/*.log; do
    [[ -f "$f" ]] || continue
    echo "--- $f" >&2
    tail -n 15 "$f" >&2
  done
  if [[ "${CRONSCALE_KEEP_FAILED:-0}" != 1 ]]; then
    log "tearing down (set CRONSCALE_KEEP_FAILED=1 to keep it for debugging)"
    "$CLUSTER_DIR/down.sh" >&2 || true
  fi
  exit "$rc"
}
trap on_error ERR

# The pause image must be known before containerd starts; build it meanwhile.
"$REPO_ROOT/hack/images/build.sh" pause >"$STATE_DIR/pause.ref" 2>"$STATE_DIR/logs/images-pause.log" &
pause_job=$!

ETCD_PORT="$(free_port)"
ETCD_PEER_PORT="$(free_port)"
APISERVER_PORT="$(free_port)"
KCM_PORT="$(free_port)"
SCHEDULER_PORT="$(free_port)"
APISERVER_URL="https://$HOST_IP:$APISERVER_PORT"
KUBECONFIG="$STATE_DIR/kubeconfig"
ETCD_URL="http://127.0.0.1:$ETCD_PORT"

write_cluster_env() {
  cat >"$STATE_DIR/cluster.env" <<EOF
CLUSTER_NAME=$CLUSTER_NAME
STATE_DIR=$STATE_DIR
KUBECONFIG=$KUBECONFIG
BIN_DIR=$BIN_DIR
APISERVER_URL=$APISERVER_URL
ETCD_URL=$ETCD_URL
HOST_IP=$HOST_IP
NODE_IP=$NODE_IP
NODE_NETNS=$NODE_NETNS
NODE_NETNS_PATH=/var/run/netns/$NODE_NETNS
NODE_NAME=$NODE_NAME
CONTAINERD_ADDRESS=$CONTAINERD_SOCK
POD_CIDR=$POD_CIDR
SERVICE_CIDR=$SERVICE_CIDR
CLUSTER_DNS_IP=$CLUSTER_DNS_IP
CLUSTER_INDEX=$INDEX
CNI_BRIDGE=$BRIDGE
HOST_VETH=$HOST_VETH
CGROUP_ROOT=$CGROUP_ROOT
KUBERNETES_VERSION=$KUBERNETES_VERSION
AUTHENTICATION_CONFIG=$STATE_DIR/authentication.yaml
KWOK_NODES=$KWOK_NODES
ADDONS=$ADDONS
EOF
}
write_cluster_env

# start NAME CMD... — runs CMD detached (own session, survives the caller) with its log in
# logs/NAME.log and its pid in pids/NAME.pid.
start() {
  local name="$1"
  shift
  setsid "$@" </dev/null >"$STATE_DIR/logs/$name.log" 2>&1 &
  echo $! >"$STATE_DIR/pids/$name.pid"
}
# Node processes join only the netns (not `ip netns exec`, which remounts /sys and hides cgroups).
IN_NODE=(nsenter --net="/var/run/netns/$NODE_NETNS" --)

# wait_until DESC SECONDS CMD... — polls CMD every 0.25 s.
wait_until() {
  local desc="$1" limit="$2" end
  shift 2
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      # `die` exits without the ERR trap's log dump: show what the component said.
      [[ -f "$STATE_DIR/logs/$desc.log" ]] && tail -n 30 "$STATE_DIR/logs/$desc.log" >&2
      die "timed out after ${limit}s waiting for $desc"
    fi
    sleep 0.25
  done
}

log "making certs and the node network ($HOST_IP <-> $NODE_IP, pods $POD_CIDR)"
make_pki

# Secrets are encrypted at rest, as a production cluster should do it: etcd (and its backups)
# hold only ciphertext. secretbox (XSalsa20-Poly1305) with a fresh 32-byte key per cluster, kept
# with the PKI; identity last so data written before encryption stays readable. Custom resources
# are not covered (a ScheduledTask's inline env value is plain text in etcd).
(
  umask 077
  cat >"$PKI/encryption.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - secretbox:
          keys:
            - name: key1
              secret: $(head -c 32 /dev/urandom | base64 -w0)
      - identity: {}
EOF
)
# Structured authentication (AuthenticationConfiguration), no JWT issuer yet: the API server
# watches this file and applies a changed one without a restart once its new issuers answer
# discovery, so a test can make the API server trust an OIDC provider it runs itself
# (test/support/oidc.ts). Service-account and client-certificate authentication are unchanged.
cat >"$STATE_DIR/authentication.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt: []
EOF
make_netns
prepare_cgroups
# Every kubelet and containerd holds inotify instances; the kernel's default of 128 per user runs
# out with a few clusters on one machine, and the kubelet then dies at start ("Failed to start
# cAdvisor: inotify_init: too many open files"). Raise it (kind documents the same failure and fix).
if (($(cat /proc/sys/fs/inotify/max_user_instances) < 1024)); then
  sysctl -qw fs.inotify.max_user_instances=1024 || log "cannot raise fs.inotify.max_user_instances"
fi

start etcd etcd --name "$CLUSTER_NAME" --data-dir "$STATE_DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "$CLUSTER_NAME=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync --log-level warn
wait_until etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

P="$STATE_DIR/pki"
start kube-apiserver kube-apiserver \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address "$HOST_IP" --advertise-address "$HOST_IP" --secure-port "$APISERVER_PORT" \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
  --client-ca-file "$P/ca.crt" \
  --kubelet-client-certificate "$P/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$P/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --allow-privileged=true \
  --encryption-provider-config "$P/encryption.yaml" \
  --authentication-config "$STATE_DIR/authentication.yaml" \
  --requestheader-client-ca-file "$P/front-proxy-ca.crt" \
  --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$P/front-proxy-client.crt" --proxy-client-key-file "$P/front-proxy-client.key" \
  --enable-aggregator-routing=true \
  --max-requests-inflight 800 --max-mutating-requests-inflight 400
wait_until "kube-apiserver /readyz" 90 kubectl --kubeconfig "$KUBECONFIG" get --raw /readyz

cat >"$STATE_DIR/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: { kubeconfig: $P/scheduler.kubeconfig, qps: 200, burst: 400 }
leaderElection: { leaderElect: false }
EOF
start kube-scheduler kube-scheduler --config "$STATE_DIR/scheduler.yaml" \
  --authentication-kubeconfig "$P/scheduler.kubeconfig" --authorization-kubeconfig "$P/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT"
# HPA knobs: tests of scaling should not wait the production 15 s sync / 5 min stabilization.
start kube-controller-manager kube-controller-manager \
  --kubeconfig "$P/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$P/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$P/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
  --controllers '*' --use-service-account-credentials=true \
  --root-ca-file "$P/ca.crt" --service-account-private-key-file "$P/sa.key" \
  --cluster-signing-cert-file "$P/ca.crt" --cluster-signing-key-file "$P/ca.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" --cluster-name "$CLUSTER_NAME" \
  --kube-api-qps 200 --kube-api-burst 400 \
  --horizontal-pod-autoscaler-sync-period "${HPA_SYNC_PERIOD:-5s}" \
  --horizontal-pod-autoscaler-downscale-stabilization "${HPA_DOWNSCALE_STABILIZATION:-30s}"

wait $pause_job || die "building the pause image failed (see $STATE_DIR/logs/images-pause.log)"
PAUSE_REF="$(cut -f1 "$STATE_DIR/pause.ref")"
log "pause image: $PAUSE_REF"
write_node_configs "$PAUSE_REF"
start containerd "${IN_NODE[@]}" containerd --config "$STATE_DIR/containerd/config.toml"
wait_until containerd 30 ctr --address "$CONTAINERD_SOCK" version

# Images the node needs before any pod: pause (sandboxes) and shell (tests, add-ons).
CONTAINERD_ADDRESS="$CONTAINERD_SOCK" "$REPO_ROOT/hack/images/load.sh" pause shell \
  >"$STATE_DIR/logs/images-load.log" 2>&1 || die "loading images failed (see $STATE_DIR/logs/images-load.log)"

start kubelet "${IN_NODE[@]}" kubelet --config "$STATE_DIR/kubelet/config.yaml" \
  --kubeconfig "$P/kubelet.kubeconfig" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" \
  --root-dir "$STATE_DIR/kubelet" --v 1
start kube-proxy "${IN_NODE[@]}" kube-proxy --config "$STATE_DIR/kube-proxy.yaml"

if ((KWOK_NODES > 0)); then
  source "$CLUSTER_DIR/kwok.sh"
  start_kwok "$KWOK_NODES"
fi

log "waiting for node $NODE_NAME to be Ready"
wait_until "node $NODE_NAME Ready" "${NODE_READY_TIMEOUT:-300}" kubectl --kubeconfig "$KUBECONFIG" wait --for=condition=Ready \
  "node/$NODE_NAME" --timeout=2s
# Pods need the default ServiceAccount; its controller creates it shortly after start.
wait_until "default ServiceAccount" 60 kubectl --kubeconfig "$KUBECONFIG" get serviceaccount default -n default
if ((KWOK_NODES > 0)); then
  wait_until "$KWOK_NODES kwok nodes Ready" 120 kwok_nodes_ready "$KWOK_NODES"
fi
log "node Ready after $((SECONDS - t0))s"

if [[ -n "$ADDONS" ]]; then
  set -a
  source "$STATE_DIR/cluster.env"
  set +a
  IFS=',' read -r -a addon_list <<<"$ADDONS"
  for a in "${addon_list[@]}"; do
    [[ -n "$a" ]] || continue
    script="$CLUSTER_DIR/addons/$a.sh"
    [[ -x "$script" ]] || die "unknown add-on '$a' (no executable $script)"
    echo "$a" >>"$STATE_DIR/addons"
    log "add-on $a: up"
    "$script" up >&2
  done
fi

trap - ERR
log "cluster up in $((SECONDS - t0))s"
cat >&2 <<EOF

  Cluster '$CLUSTER_NAME' is up. Use it with:
    export KUBECONFIG=$KUBECONFIG
    export PATH=$BIN_DIR:\$PATH
    kubectl get nodes
  Everything about it (ports, IPs, paths): $STATE_DIR/cluster.env
  Stop it with: CLUSTER_NAME=$CLUSTER_NAME hack/cluster/down.sh   (or make cluster-down)

EOF
echo "$KUBECONFIG"
