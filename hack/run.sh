#!/usr/bin/env bash
# `make run`: the operator against a cluster, with the samples applied.
#  - KUBECONFIG (or --kubeconfig PATH) pointing at a reachable cluster: use it, start nothing local.
#  - otherwise: start the local cluster "$CLUSTER_NAME" (hack/cluster/up.sh) with the ADDONS a
#    ScalePlatform needs (default "platform": DNS, Traefik, cert-manager, metrics, custom metrics,
#    storage; `ADDONS= make run` for tasks only), load the task runtime, PostgreSQL and commerce
#    images into its node, start the execution archive's PostgreSQL (the chart's, in
#    cronscale-system), and stop it all again on Ctrl-C.
# The operator runs as a host process (node src/main.ts) for a fast edit loop; its log goes to
# the terminal. Ctrl-C stops the operator, then the local cluster if this script started it.
set -euo pipefail
cd "$(dirname "$0")/.."

kubeconfig="${KUBECONFIG:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --kubeconfig) kubeconfig="$2"; shift 2 ;;
    --kubeconfig=*) kubeconfig="${1#*=}"; shift ;;
    *) echo "hack/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

BIN_DIR=$(hack/cluster/build.sh)
kubectl() { "$BIN_DIR/kubectl" "$@"; }
started_cluster=""
operator_pid=""
dashboard_pid=""

cleanup() {
  trap - EXIT INT TERM
  if [ -n "$dashboard_pid" ] && kill -0 "$dashboard_pid" 2>/dev/null; then
    kill -TERM "$dashboard_pid" 2>/dev/null || true
    wait "$dashboard_pid" 2>/dev/null || true
  fi
  if [ -n "$operator_pid" ] && kill -0 "$operator_pid" 2>/dev/null; then
    echo "stopping the operator"
    kill -TERM "$operator_pid" 2>/dev/null || true
    wait "$operator_pid" 2>/dev/null || true
  fi
  if [ -n "$started_cluster" ]; then
    echo "stopping local cluster $started_cluster"
    CLUSTER_NAME="$started_cluster" hack/cluster/down.sh || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

operator_env=()
if [ -n "$kubeconfig" ]; then
  if ! KUBECONFIG="$kubeconfig" kubectl version --request-timeout=10s >/dev/null 2>&1; then
    echo "hack/run.sh: the cluster of $kubeconfig does not answer" >&2
    exit 1
  fi
  echo "using the cluster of $kubeconfig ($(KUBECONFIG="$kubeconfig" kubectl config current-context))"
  echo "task pods use the default public images of the operator configuration"
else
  hack/cluster/host-deps.sh
  CLUSTER_NAME="${CLUSTER_NAME:-cronscale}" ADDONS="${ADDONS-platform}" hack/cluster/up.sh
  started_cluster="${CLUSTER_NAME:-cronscale}"
  # shellcheck disable=SC1090
  source "/var/tmp/cronscale/clusters/$started_cluster/cluster.env"
  kubeconfig="$KUBECONFIG"
  # No registry here: the task runtimes are built locally and imported into the node.
  for lang in bash python go bun; do
    ref=$(CONTAINERD_ADDRESS="$CONTAINERD_ADDRESS" hack/images/load.sh "$lang" | tail -n 1)
    key=$(echo "$lang" | tr '[:lower:]' '[:upper:]')
    operator_env+=("CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGES__$key=$ref")
  done
  operator_env+=("CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGE_PULL_POLICY=Never")
  # Platforms: the commerce service and PostgreSQL, built locally; the operator runs on the host,
  # which routes to pod IPs but not to ClusterIPs, so its health checks go to a ready pod. Webhook
  # receivers on the host (the node link's network) are allowed as destinations.
  platform_ref=$(CONTAINERD_ADDRESS="$CONTAINERD_ADDRESS" hack/images/load.sh commerce | tail -n 1)
  database_ref=$(CONTAINERD_ADDRESS="$CONTAINERD_ADDRESS" hack/images/load.sh postgres | tail -n 1)
  operator_env+=(
    "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGES__PLATFORM=$platform_ref"
    "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGES__DATABASE=$database_ref"
    "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGE_PULL_POLICY=Never"
    "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__HEALTH_CHECK__TARGET=pod"
    "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__WEBHOOK_ALLOWED_CIDRS=${HOST_IP%.*}.$(( ${HOST_IP##*.} & ~3 ))/30"
  )
  # The execution archive: the chart's PostgreSQL (project image, emptyDir: the cluster is
  # throwaway), reached at its pod IP like the platforms' health checks.
  archive_ns=cronscale-system
  if ! KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" get statefulset cronscale-archive >/dev/null 2>&1; then
    echo "starting the execution archive's PostgreSQL"
    KUBECONFIG="$kubeconfig" kubectl create namespace "$archive_ns" --dry-run=client -o yaml |
      KUBECONFIG="$kubeconfig" kubectl apply -f - >/dev/null
    # In a cluster the operator makes this Secret at start; here it runs on the host and needs the
    # password first.
    if ! KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" get secret cronscale-archive >/dev/null 2>&1; then
      KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" create secret generic cronscale-archive \
        --from-literal=password="$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')" >/dev/null
    fi
    "$(hack/cluster/build.sh helm)/helm" template cronscale charts/cronscale --namespace "$archive_ns" \
      --show-only templates/archive-postgres.yaml --set archive.postgres.image="$database_ref" \
      --set archive.postgres.imagePullPolicy=Never --set archive.postgres.persistence.enabled=false |
      KUBECONFIG="$kubeconfig" kubectl apply -f - >/dev/null
  fi
  KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" rollout status statefulset/cronscale-archive --timeout=180s >/dev/null
  archive_ip=$(KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" get pod cronscale-archive-0 -o jsonpath='{.status.podIP}')
  archive_password=$(KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" get secret cronscale-archive -o jsonpath='{.data.password}' | base64 -d)
  operator_env+=("CRONSCALE_ARCHIVE__DSN=postgres://cronscale:$archive_password@$archive_ip:5432/cronscale")
  # Backups on by default: the s3 add-on (versitygw over TLS with a certificate of the cluster's
  # CA, so kube-root-ca.crt verifies it) is the operator's default repository; its key pair goes
  # into a Secret of cronscale-system, which the operator copies into each platform's namespace.
  s3_env="$STATE_DIR/s3.env"
  if [ -f "$s3_env" ]; then
    # shellcheck disable=SC1090
    source "$s3_env"
    KUBECONFIG="$kubeconfig" kubectl -n "$archive_ns" create secret generic cronscale-backup-s3 \
      --from-literal=accessKeyId="$S3_ACCESS_KEY" --from-literal=secretAccessKey="$S3_SECRET_KEY" \
      --dry-run=client -o yaml | KUBECONFIG="$kubeconfig" kubectl apply -f - >/dev/null
    runner_ref=$(CONTAINERD_ADDRESS="$CONTAINERD_ADDRESS" hack/images/load.sh node | tail -n 1)
    operator_env+=(
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGES__BACKUP_RUNNER=$runner_ref"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__ENDPOINT=$S3_SERVICE_HOST:443"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__BUCKET=$S3_BUCKET"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__REGION=$S3_REGION"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__CREDENTIALS_SECRET__NAMESPACE=$archive_ns"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__CREDENTIALS_SECRET__NAME=cronscale-backup-s3"
      "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DEFAULT_BACKUP__S3__CA_CONFIG_MAP_NAME=kube-root-ca.crt"
    )
  fi
  # The history endpoint through the API server (APIService history.cronscale.io, as the chart
  # installs it), so `cronscale history` works with this kubeconfig: the operator serves it over
  # HTTPS on HOST_IP (the API server dials it there: a selector-less Service, aggregator routing)
  # with a CA made here, and keeps the APIService's caBundle equal to that CA.
  history_tls="/var/tmp/cronscale/clusters/$started_cluster/history-tls"
  history_port="${CRONSCALE_HISTORY_PORT:-8081}"
  if [ ! -f "$history_tls/tls.crt" ]; then
    mkdir -p "$history_tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/CN=cronscale history CA" -keyout "$history_tls/ca.key" -out "$history_tls/ca.crt" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=cronscale-history" \
      -keyout "$history_tls/tls.key" -out "$history_tls/tls.csr" 2>/dev/null
    openssl x509 -req -in "$history_tls/tls.csr" -CA "$history_tls/ca.crt" -CAkey "$history_tls/ca.key" \
      -CAcreateserial -days 3650 -out "$history_tls/tls.crt" -extfile <(printf '%s\n' \
        "subjectAltName=DNS:cronscale-history.$archive_ns.svc,IP:$HOST_IP,IP:127.0.0.1" \
        "extendedKeyUsage=serverAuth") 2>/dev/null
  fi
  KUBECONFIG="$kubeconfig" kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: cronscale-history, namespace: $archive_ns}
spec:
  ports: [{name: history, port: $history_port, targetPort: $history_port, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: cronscale-history-host
  namespace: $archive_ns
  labels: {kubernetes.io/service-name: cronscale-history, endpointslice.kubernetes.io/managed-by: run.cronscale.io}
addressType: IPv4
ports: [{name: history, port: $history_port, protocol: TCP}]
endpoints: [{addresses: ["$HOST_IP"], conditions: {ready: true}}]
YAML
  "$(hack/cluster/build.sh helm)/helm" template cronscale charts/cronscale --namespace "$archive_ns" \
    --show-only templates/history-apiservice.yaml --set archive.httpPort="$history_port" |
    KUBECONFIG="$kubeconfig" kubectl apply -f - >/dev/null
  operator_env+=(
    "CRONSCALE_ARCHIVE__HTTP_HOST=$HOST_IP"
    "CRONSCALE_ARCHIVE__HTTP_PORT=$history_port"
    "CRONSCALE_ARCHIVE__TLS__CERT_FILE=$history_tls/tls.crt"
    "CRONSCALE_ARCHIVE__TLS__KEY_FILE=$history_tls/tls.key"
    "CRONSCALE_ARCHIVE__TLS__CA_FILE=$history_tls/ca.crt"
    "CRONSCALE_ARCHIVE__API_SERVICE=v1alpha1.history.cronscale.io"
  )
fi
export KUBECONFIG="$kubeconfig"

echo "installing the CRDs"
kubectl apply --server-side --force-conflicts -f crds/ >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f crds/ >/dev/null

echo "starting the operator (log below)"
env "${operator_env[@]}" CRONSCALE_HTTP_HOST=127.0.0.1 CRONSCALE_HTTP_PORT="${CRONSCALE_HTTP_PORT:-18080}" \
  node src/main.ts &
operator_pid=$!

echo "applying the samples"
kubectl apply -f manifests/samples/ >/dev/null

# The dashboard, and two ServiceAccounts to sign in with (an editor and a read-only viewer).
kubectl apply -f manifests/dashboard/demo-users.yaml >/dev/null
dashboard_port="${CRONSCALE_DASHBOARD_PORT:-8090}"
node src/dashboard/main.ts --listen "127.0.0.1:$dashboard_port" --kubeconfig "$KUBECONFIG" &
dashboard_pid=$!

cat <<MSG

  cronscale is running.  In another terminal:

    export KUBECONFIG=$KUBECONFIG PATH=$BIN_DIR:\$PATH
    kubectl get stask,splat
    kubectl get texec -l cronscale.io/task=hello-bash      # one record per run, every minute
    kubectl describe texec -l cronscale.io/task=hello-bash  # console output of each run
    kubectl get stask hello-bash -o jsonpath='{.status.usage}'  # this month's runs, billed seconds, cost
    curl -s localhost:${CRONSCALE_HTTP_PORT:-18080}/metrics | grep controller_runtime

  The CLI as this kubeconfig's user (also \`kubectl cronscale\` after \`npm install -g .\`):
    npx cronscale run hello-bash --wait   # run it now and print its output
    npx cronscale next-runs hello-bash    # its next start times${started_cluster:+
    npx cronscale history hello-bash      # every run, from the execution archive
    npx cronscale logs hello-bash         # the newest run's console output}

  The dashboard: http://localhost:$dashboard_port/dashboard/compute/serverless/tasks
  Sign in with a token (every action runs as that identity):
    $BIN_DIR/kubectl --kubeconfig $KUBECONFIG create token dashboard-editor -n default   # tasks in "default"
    $BIN_DIR/kubectl --kubeconfig $KUBECONFIG create token dashboard-reader -n default   # read-only

MSG
if [ -n "$started_cluster" ] && [ -f "/var/tmp/cronscale/clusters/$started_cluster/ingress.env" ]; then
  state="/var/tmp/cronscale/clusters/$started_cluster"
  # shellcheck disable=SC1091
  source "$state/ingress.env"
  cat <<MSG
  The sample platform "shop" runs the commerce service (a few minutes to Running;
  kubectl get splat shop -w). Its API endpoint, through the Ingress controller on loopback with
  its cert-manager certificate, and its API key (the platform's credentials Secret):
    API_KEY=\$($BIN_DIR/kubectl --kubeconfig $KUBECONFIG get secret shop-credentials -o jsonpath='{.data.api-key}' | base64 -d)
    curl --cacert $state/addons.d/cert-manager/ca.crt -H "Authorization: Bearer \$API_KEY" \\
      --resolve api.shop.example.test:$INGRESS_HTTPS_PORT:127.0.0.1 https://api.shop.example.test:$INGRESS_HTTPS_PORT/api/v1/products
  (the OpenAPI document: https://api.shop.example.test:$INGRESS_HTTPS_PORT/api/v1/openapi.json)
  It is backed up to the operator's default repository (the s3 add-on): column Backups of
  kubectl get splat shows BackupsCurrent once the first full backup is done.

MSG
fi
echo "  Ctrl-C stops the operator${started_cluster:+ and the local cluster}."
wait "$operator_pid"
