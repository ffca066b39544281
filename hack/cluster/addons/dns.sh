#!/usr/bin/env bash
# dns add-on: CoreDNS serving cluster.local for the local cluster.
#
# CoreDNS runs as a host process inside the node's network namespace, bound to NODE_IP:53, with
# the kubernetes plugin reading Services/EndpointSlices through the admin kubeconfig. The kubelet
# already points pods at CLUSTER_DNS_IP; a selector-less Service `kube-dns` with that ClusterIP
# and an EndpointSlice to NODE_IP:53 makes kube-proxy (also in the node netns) forward pod DNS
# traffic to it. There is no upstream resolver on purpose: nothing outside the project's network
# namespaces may be queried, so names outside cluster.local get REFUSED.
#
#   dns.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

up() {
  local bin dir health ready ctx
  bin="$(addon_bin coredns)"
  dir="$STATE_DIR/addons.d/dns"
  mkdir -p "$dir"
  # Health/ready listen on the netns loopback: only nsenter'd probes reach them.
  health="$(free_port)"
  ready="$(free_port)"
  ctx="$(kc config current-context)"
  cat >"$dir/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:$health
    ready 127.0.0.1:$ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG $ctx
        pods insecure
        ttl 5
    }
    cache 5
    loadbalance
}
EOF
  echo "DNS_READY_PORT=$ready" >"$dir/ports.env"
  start_proc dns --netns "$bin" -conf "$dir/Corefile"
  wait_for "CoreDNS ready" 60 nsenter --net="/var/run/netns/$NODE_NETNS" -- \
    curl -fsS "http://127.0.0.1:$ready/ready"

  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS, app.kubernetes.io/part-of: cronscale-addons}
spec:
  clusterIP: $CLUSTER_DNS_IP
  ports:
  - {name: dns, port: 53, targetPort: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 53, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels:
    kubernetes.io/service-name: kube-dns
    endpointslice.kubernetes.io/managed-by: addons.cronscale.io
    app.kubernetes.io/part-of: cronscale-addons
addressType: IPv4
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
endpoints:
- addresses: ["$NODE_IP"]
  conditions: {ready: true}
  nodeName: $NODE_NAME
EOF
  alog "CoreDNS on $NODE_IP:53 (Service kube-dns at $CLUSTER_DNS_IP)"
}

down() {
  kc delete service kube-dns -n kube-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kc delete endpointslice kube-dns-node -n kube-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
  stop_proc dns
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
