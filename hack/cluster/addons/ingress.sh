#!/usr/bin/env bash
# ingress add-on: Traefik (kubernetesIngress provider) serving networking.k8s.io/v1 Ingress.
#
# Traefik runs as a host process with the admin kubeconfig and listens on loopback only:
#   INGRESS_HTTP_PORT   plain HTTP entry point
#   INGRESS_HTTPS_PORT  TLS entry point; certificates come from the Secrets named in each
#                       Ingress's spec.tls (e.g. made by cert-manager), chosen by SNI
# (written to $STATE_DIR/ingress.env). It proxies to pod IPs from EndpointSlices; the host reaches
# them through its route to the pod CIDR via the node's veth. IngressClass `traefik` is the
# cluster's default class, so an Ingress without ingressClassName is served too. Version checks
# and usage reports are off: Traefik must not talk to anything outside the cluster.
#
#   ingress.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

up() {
  local bin dir http https ping
  bin="$(addon_bin traefik)"
  dir="$STATE_DIR/addons.d/ingress"
  mkdir -p "$dir"
  http="$(free_port)"
  https="$(free_port)"
  ping="$(free_port)"
  cat >"$dir/traefik.yaml" <<EOF
global: {checkNewVersion: false, sendAnonymousUsage: false}
entryPoints:
  web: {address: "127.0.0.1:$http"}
  websecure:
    address: "127.0.0.1:$https"
    http: {tls: {}}
  ping: {address: "127.0.0.1:$ping"}
ping: {entryPoint: ping}
providers:
  kubernetesIngress:
    throttleDuration: 0s
    # Publish the loopback listener as every served Ingress's status.loadBalancer address, as a
    # cloud load balancer would publish its IP: controllers (ours) read "load balancer set up"
    # from it.
    ingressEndpoint: {ip: "127.0.0.1"}
log: {level: INFO}
accessLog: {}
EOF
  # Traefik's Kubernetes client reads KUBECONFIG when it is not in a pod.
  KUBECONFIG="$KUBECONFIG" start_proc ingress "$bin" --configFile="$dir/traefik.yaml"

  kc apply -f - >/dev/null <<EOF
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: traefik
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
  labels: {app.kubernetes.io/part-of: cronscale-addons}
spec: {controller: traefik.io/ingress-controller}
EOF
  wait_for "Traefik ping" 60 curl -fsS "http://127.0.0.1:$ping/ping"
  cat >"$STATE_DIR/ingress.env" <<EOF
INGRESS_HTTP_PORT=$http
INGRESS_HTTPS_PORT=$https
INGRESS_CLASS=traefik
EOF
  alog "Traefik on http://127.0.0.1:$http and https://127.0.0.1:$https (IngressClass traefik, default)"
}

down() {
  stop_proc ingress
  rm -f "$STATE_DIR/ingress.env"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
