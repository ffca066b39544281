#!/usr/bin/env bash
# custom-metrics add-on: the test custom-metrics API server (go/custom-metrics, built on
# sigs.k8s.io/custom-metrics-apiserver), registered as APIServices v1beta2 and v1beta1 of
# custom.metrics.k8s.io. It serves whatever value a test last set through its loopback control
# endpoint, written to $STATE_DIR/custom-metrics.env as CUSTOM_METRICS_URL:
#   curl -X PUT --data 30 "$CUSTOM_METRICS_URL/values/<ns>/services/queue_length/<name>"
# Wiring as in metrics.sh: a host process on HOST_IP, a selector-less Service, aggregator routing.
#
#   custom-metrics.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

up() {
  local bin dir port v
  bin="$(addon_bin custom-metrics)"
  dir="$STATE_DIR/addons.d/custom-metrics"
  port="$(free_port)"
  serving_cert "$dir/pki" custom-metrics.kube-system.svc \
    "DNS:custom-metrics.kube-system.svc,DNS:custom-metrics.kube-system.svc.cluster.local,IP:$HOST_IP"
  rm -f "$dir/control-address"
  start_proc custom-metrics "$bin" --lister-kubeconfig "$KUBECONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
    --bind-address "$HOST_IP" --secure-port "$port" \
    --tls-cert-file "$dir/pki/tls.crt" --tls-private-key-file "$dir/pki/tls.key" \
    --control-address 127.0.0.1:0 --control-address-file "$dir/control-address"
  wait_for "custom-metrics control endpoint" 60 test -s "$dir/control-address"
  wait_for "custom-metrics /livez" 60 curl -fsSk "https://$HOST_IP:$port/livez"

  host_service kube-system custom-metrics "$port"
  for v in v1beta2 v1beta1; do
    kc apply -f - >/dev/null <<EOF
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: $v.custom.metrics.k8s.io
  labels: {app.kubernetes.io/part-of: cronscale-addons}
spec:
  group: custom.metrics.k8s.io
  version: $v
  groupPriorityMinimum: 100
  versionPriority: $([[ $v == v1beta2 ]] && echo 200 || echo 100)
  service: {name: custom-metrics, namespace: kube-system, port: 443}
  caBundle: $(base64 -w0 <"$dir/pki/ca.crt")
EOF
  done
  wait_for "APIService v1beta2.custom.metrics.k8s.io Available" 90 apiservice_available v1beta2.custom.metrics.k8s.io
  echo "CUSTOM_METRICS_URL=http://$(cat "$dir/control-address")" >"$STATE_DIR/custom-metrics.env"
  alog "custom metrics served on https://$HOST_IP:$port; values set at $(cat "$STATE_DIR/custom-metrics.env")"
}

down() {
  kc delete apiservice v1beta2.custom.metrics.k8s.io v1beta1.custom.metrics.k8s.io \
    --ignore-not-found --wait=false >/dev/null 2>&1 || true
  stop_proc custom-metrics
  rm -f "$STATE_DIR/custom-metrics.env"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
