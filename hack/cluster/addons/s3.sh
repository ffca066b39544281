#!/usr/bin/env bash
# s3 add-on: an S3-compatible object store for backups — versitygw (go/versitygw) with its posix
# backend (buckets are directories, objects are files under $STATE_DIR/s3), served over HTTPS
# with a certificate signed by the cluster's CA ($STATE_DIR/pki/ca.crt, the `ca.crt` of every
# namespace's ConfigMap kube-root-ca.crt), so pods trust it without extra configuration.
#
# It listens on HOST_IP (reachable from pods and from the host), with a selector-less Service
# kube-system/s3 in front (https://s3.kube-system.svc:443 from pods, with the dns add-on). The
# root credentials are made here, once per cluster; the bucket `cronscale-backups` exists from
# the start. Everything a client needs is in $STATE_DIR/s3.env:
#   S3_URL (https://HOST_IP:port, for the host), S3_HOST/S3_PORT, S3_SERVICE_HOST (the Service's
#   DNS name), S3_REGION, S3_BUCKET, S3_ACCESS_KEY, S3_SECRET_KEY, S3_CA_FILE, S3_DATA_DIR
#
#   s3.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S3_REGION=us-east-1
S3_BUCKET=cronscale-backups
S3_SERVICE_HOST=s3.kube-system.svc

# server_cert DIR — the serving certificate, signed by the cluster CA (made once per cluster).
server_cert() {
  local dir="$1" ext
  [[ -f "$dir/tls.crt" ]] && return
  mkdir -p "$dir"
  ext="$(mktemp)"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=DNS:$S3_SERVICE_HOST,DNS:$S3_SERVICE_HOST.cluster.local,DNS:s3.kube-system,DNS:localhost,IP:$HOST_IP,IP:127.0.0.1" >"$ext"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/tls.key" 2>/dev/null
  openssl req -new -key "$dir/tls.key" -subj "/CN=$S3_SERVICE_HOST" 2>/dev/null |
    openssl x509 -req -CA "$STATE_DIR/pki/ca.crt" -CAkey "$STATE_DIR/pki/ca.key" -CAcreateserial \
      -days 3650 -extfile "$ext" -out "$dir/tls.crt" 2>/dev/null
  rm -f "$ext"
}

# s3_curl ARGS... — a signed (SigV4) request with the root credentials, CA-verified, for requests
# without a body (versitygw requires x-amz-content-sha256, which curl does not add by itself).
s3_curl() {
  curl -fsS --cacert "$STATE_DIR/pki/ca.crt" --aws-sigv4 "aws:amz:$S3_REGION:s3" \
    --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

up() {
  local bin dir port
  bin="$(addon_bin versitygw)"
  dir="$STATE_DIR/addons.d/s3"
  mkdir -p "$dir" "$STATE_DIR/s3"
  chmod 0700 "$dir"
  server_cert "$dir/pki"
  if [[ ! -f "$dir/credentials" ]]; then
    (umask 077 && printf 'S3_ACCESS_KEY=%s\nS3_SECRET_KEY=%s\n' "$(openssl rand -hex 10)" "$(openssl rand -hex 20)" >"$dir/credentials")
  fi
  # shellcheck source=/dev/null
  source "$dir/credentials"
  port="$(free_port)"
  # Credentials through the environment (not argv: /proc/<pid>/cmdline is world-readable).
  ROOT_ACCESS_KEY="$S3_ACCESS_KEY" ROOT_SECRET_KEY="$S3_SECRET_KEY" VGW_REGION="$S3_REGION" \
    start_proc s3 "$bin" --port "$HOST_IP:$port" --cert "$dir/pki/tls.crt" --key "$dir/pki/tls.key" \
    --quiet posix "$STATE_DIR/s3"
  export S3_ACCESS_KEY S3_SECRET_KEY
  wait_for "versitygw on https://$HOST_IP:$port" 60 s3_curl -o /dev/null "https://$HOST_IP:$port/"
  if ! s3_curl -o /dev/null -I "https://$HOST_IP:$port/$S3_BUCKET" 2>/dev/null; then
    s3_curl -o /dev/null -X PUT "https://$HOST_IP:$port/$S3_BUCKET" || adie "cannot create bucket $S3_BUCKET"
  fi
  host_service kube-system s3 "$port"
  (
    umask 077
    cat >"$STATE_DIR/s3.env" <<ENV
S3_URL=https://$HOST_IP:$port
S3_HOST=$HOST_IP
S3_PORT=$port
S3_SERVICE_HOST=$S3_SERVICE_HOST
S3_REGION=$S3_REGION
S3_BUCKET=$S3_BUCKET
S3_ACCESS_KEY=$S3_ACCESS_KEY
S3_SECRET_KEY=$S3_SECRET_KEY
S3_CA_FILE=$STATE_DIR/pki/ca.crt
S3_DATA_DIR=$STATE_DIR/s3
ENV
  )
  alog "S3 (versitygw, posix) on https://$HOST_IP:$port and https://$S3_SERVICE_HOST; bucket $S3_BUCKET; $STATE_DIR/s3.env"
}

down() {
  kc delete service s3 -n kube-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kc delete endpointslice s3-host -n kube-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
  stop_proc s3
  rm -f "$STATE_DIR/s3.env"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
