#!/usr/bin/env bash
# ingress add-on: Traefik (kubernetesIngress provider) serving networking.k8s.io/v1 Ingress, and
# its kubernetesCRD provider with Traefik's CRDs (from the pinned Traefik module) so an Ingress can
# use traefik.io Middlewares (the operator's per-platform edge limits) through the
# traefik.ingress.kubernetes.io/router.middlewares annotation.
#
# Header and idle timeouts are entry point settings, global to every Ingress (not per platform):
# readTimeout 30s bounds reading a request's headers and body (a slow-headers client is cut off),
# idleTimeout 60s closes idle keep-alive connections; writeTimeout stays 0 (long responses stream).
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

# Traefik's CRD definitions of the same module version as the binary (go.mod of the wrapper).
crd_file() {
  local d
  d="$(cd "$ADDONS_DIR/go/traefik" && GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
    go list -m -f '{{.Dir}}' github.com/traefik/traefik/v3)"
  d="$d/docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml"
  [[ -f "$d" ]] || adie "no Traefik CRD definitions at $d"
  echo "$d"
}

up() {
  local bin dir http https ping
  bin="$(addon_bin traefik)"
  kc apply --server-side --force-conflicts -f "$(crd_file)" >/dev/null
  kc wait --for=condition=Established --timeout=60s crd middlewares.traefik.io >/dev/null
  dir="$STATE_DIR/addons.d/ingress"
  mkdir -p "$dir"
  http="$(free_port)"
  https="$(free_port)"
  ping="$(free_port)"
  cat >"$dir/traefik.yaml" <<EOF
global: {checkNewVersion: false, sendAnonymousUsage: false}
entryPoints:
  web:
    address: "127.0.0.1:$http"
    transport: {respondingTimeouts: {readTimeout: 30s, idleTimeout: 60s}}
  websecure:
    address: "127.0.0.1:$https"
    http: {tls: {}}
    transport: {respondingTimeouts: {readTimeout: 30s, idleTimeout: 60s}}
  ping: {address: "127.0.0.1:$ping"}
ping: {entryPoint: ping}
providers:
  kubernetesIngress:
    throttleDuration: 0s
    # Publish the loopback listener as every served Ingress's status.loadBalancer address, as a
    # cloud load balancer would publish its IP: controllers (ours) read "load balancer set up"
    # from it.
    ingressEndpoint: {ip: "127.0.0.1"}
  kubernetesCRD:
    throttleDuration: 0s
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
