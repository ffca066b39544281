#!/usr/bin/env bash
# metrics add-on: metrics-server scraping the real kubelet, registered as APIService
# v1beta1.metrics.k8s.io, so `kubectl top` and CPU/memory HPAs work.
#
# metrics-server runs as a host process bound to HOST_IP (the host end of the node's veth): the
# kubelet at NODE_IP:10250 is reachable from there, and so is it from kube-apiserver, which runs
# with --enable-aggregator-routing and the --requestheader-*/--proxy-client-* flags (up.sh) and
# so dials the endpoint of the selector-less Service kube-system/metrics-server directly. The
# APIService trusts a CA made here (caBundle), not insecureSkipTLSVerify. The kubelet serves a
# self-signed certificate, hence --kubelet-insecure-tls. Resolution 10 s (production: 15 s) so
# HPA tests see load sooner.
#
#   metrics.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

up() {
  local bin dir port
  bin="$(addon_bin metrics-server)"
  dir="$STATE_DIR/addons.d/metrics"
  port="$(free_port)"
  serving_cert "$dir/pki" metrics-server.kube-system.svc \
    "DNS:metrics-server.kube-system.svc,DNS:metrics-server.kube-system.svc.cluster.local,IP:$HOST_IP"
  start_proc metrics "$bin" --kubeconfig "$KUBECONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
    --bind-address "$HOST_IP" --secure-port "$port" \
    --tls-cert-file "$dir/pki/tls.crt" --tls-private-key-file "$dir/pki/tls.key" \
    --kubelet-insecure-tls --kubelet-preferred-address-types InternalIP \
    --metric-resolution 10s --kubelet-request-timeout 5s
  wait_for "metrics-server /livez" 60 curl -fsSk "https://$HOST_IP:$port/livez"

  host_service kube-system metrics-server "$port"
  kc apply -f - >/dev/null <<EOF
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
  labels: {app.kubernetes.io/part-of: cronscale-addons}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: metrics-server, namespace: kube-system, port: 443}
  caBundle: $(base64 -w0 <"$dir/pki/ca.crt")
EOF
  wait_for "APIService v1beta1.metrics.k8s.io Available" 90 apiservice_available v1beta1.metrics.k8s.io
  alog "metrics-server on https://$HOST_IP:$port (APIService v1beta1.metrics.k8s.io Available)"
}

down() {
  kc delete apiservice v1beta1.metrics.k8s.io --ignore-not-found --wait=false >/dev/null 2>&1 || true
  stop_proc metrics
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
