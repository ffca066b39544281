#!/usr/bin/env bash
# cert-manager add-on: cert-manager's CRDs (deploy/crds of the pinned module version) and its
# controllers as one host process (go/cert-manager-controller: our main over the upstream
# controller registry; see its main.go for why), then two ClusterIssuers for tests:
#   cronscale-selfsigned  selfSigned
#   cronscale-ca          CA issuer whose CA (Certificate cronscale-ca, Secret cert-manager/cronscale-ca)
#                         is itself issued by cronscale-selfsigned
# The CA certificate is written to $STATE_DIR/addons.d/cert-manager/ca.crt for tests that verify a
# chain. No webhook: the CRDs' own schemas validate; ClusterIssuers/Certificates are simple here.
#
#   cert-manager.sh up|down|uninstall   (up/down run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

crd_dir() {
  local d
  # Same module version as the controllers: go.mod of the wrapper pins it.
  d="$(cd "$ADDONS_DIR/go/cert-manager-controller" && GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
    go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)"
  [[ -d "$d/deploy/crds" ]] || adie "no deploy/crds in $d"
  echo "$d/deploy/crds"
}

issuer_ready() {
  [[ "$(kc get clusterissuer "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}

up() {
  local bin crds dir f
  bin="$(addon_bin cert-manager-controller)"
  crds="$(crd_dir)"
  dir="$STATE_DIR/addons.d/cert-manager"
  mkdir -p "$dir"
  for f in "$crds"/*.yaml; do
    kc apply --server-side --force-conflicts -f "$f" >/dev/null
  done
  kc wait --for=condition=Established --timeout=60s crd \
    certificates.cert-manager.io certificaterequests.cert-manager.io issuers.cert-manager.io \
    clusterissuers.cert-manager.io >/dev/null
  kc create namespace cert-manager --dry-run=client -o yaml | kc apply -f - >/dev/null

  start_proc cert-manager "$bin" --kubeconfig "$KUBECONFIG" --cluster-resource-namespace cert-manager \
    --default-issuer-name cronscale-ca
  sleep 1
  proc_alive cert-manager || {
    tail -n 20 "$STATE_DIR/logs/cert-manager.log" >&2
    adie "cert-manager controller exited"
  }

  kc apply -f - >/dev/null <<EOF
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: cronscale-selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: cronscale-ca, namespace: cert-manager}
spec:
  isCA: true
  commonName: cronscale local CA ($CLUSTER_NAME)
  secretName: cronscale-ca
  duration: 87600h
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: cronscale-selfsigned, kind: ClusterIssuer, group: cert-manager.io}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: cronscale-ca}
spec: {ca: {secretName: cronscale-ca}}
EOF
  wait_for "Certificate cert-manager/cronscale-ca Ready" 90 \
    kc wait --for=condition=Ready --timeout=2s certificate/cronscale-ca -n cert-manager
  wait_for "ClusterIssuer cronscale-ca Ready" 60 issuer_ready cronscale-ca
  wait_for "ClusterIssuer cronscale-selfsigned Ready" 60 issuer_ready cronscale-selfsigned
  kc get secret cronscale-ca -n cert-manager -o jsonpath='{.data.tls\.crt}' | base64 -d >"$dir/ca.crt"
  alog "controllers running; ClusterIssuers cronscale-selfsigned and cronscale-ca Ready (CA: $dir/ca.crt)"
}

down() {
  stop_proc cert-manager
}

# uninstall: down, then remove the CRDs (and with them every cert-manager object) and the
# namespace, leaving the cluster as if cert-manager had never been there. `up` installs it again.
# Tests use it to show the operator coping with a cluster that loses cert-manager.
uninstall() {
  local crds f
  down
  crds="$(crd_dir)"
  for f in "$crds"/*.yaml; do
    kc delete --ignore-not-found --wait=true -f "$f" >/dev/null
  done
  kc delete namespace cert-manager --ignore-not-found --wait=true --timeout=90s >/dev/null
  rm -rf "$STATE_DIR/addons.d/cert-manager"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  uninstall) uninstall ;;
  *) adie "usage: $0 up|down|uninstall" ;;
esac
