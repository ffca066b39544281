# shellcheck shell=bash
# Simulated nodes (kwok) of one local cluster, sourced by up.sh when KWOK_NODES > 0.
# kwok runs on the host as one controller that fakes nodes and the pods bound to them.
# The nodes are tainted and labelled, so only pods that ask for them land there:
#   nodeSelector: { type: kwok }
#   tolerations: [{ key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule }]

# start_kwok N — the kwok controller plus N Node objects kwok-node-0..N-1.
start_kwok() {
  local n="$1" i
  # Pod IPs of simulated pods are labels only (nothing routes to them): a range no real
  # network here uses, large enough for thousands of pods.
  # kwok plays 4 pod stages at a time by default: too few for thousands of pods on a busy API.
  cat >"$STATE_DIR/kwok.yaml" <<EOF
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 64
  nodePlayStageParallelism: 16
  nodeLeaseParallelism: 16
  podsOnNodeSyncParallelism: 4
EOF
  start kwok kwok --kubeconfig "$STATE_DIR/pki/kwok.kubeconfig" \
    --config "$BIN_DIR/kwok-stages.yaml" --config "$STATE_DIR/kwok.yaml" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --cidr 100.64.0.0/16 --node-ip "$HOST_IP" \
    --node-lease-duration-seconds 40
  for ((i = 0; i < n; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/role: agent
    node-role.kubernetes.io/agent: ""
spec:
  taints:
  - key: kwok.x-k8s.io/node
    value: fake
    effect: NoSchedule
EOF
  done | kubectl --kubeconfig "$KUBECONFIG" apply -f - >/dev/null
}

# kwok_nodes_ready N — true when N kwok nodes report Ready.
kwok_nodes_ready() {
  local ready
  ready=$(kubectl --kubeconfig "$KUBECONFIG" get nodes -l type=kwok \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  ((ready >= $1))
}
