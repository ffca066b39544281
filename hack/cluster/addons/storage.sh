#!/usr/bin/env bash
# storage add-on: local-path-provisioner with the default StorageClass `local-path`.
#
# The provisioner runs as a host process with the admin kubeconfig; a PVC of class local-path
# (WaitForFirstConsumer) becomes a hostPath PV under $STATE_DIR/local-path on the real node, so
# down.sh removes the data with the cluster. Its helper pods (mkdir/rm of a volume dir) use the
# project's local `shell` image (bash as /bin/sh, coreutils) as root, in namespace
# local-path-storage. (Upstream reads helper-pod logs through in-cluster config only; out of
# cluster it logs that it cannot, which is harmless.)
#
#   storage.sh up|down      (run by up.sh/down.sh with cluster.env exported)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NS=local-path-storage

up() {
  local bin dir data shell_ref
  bin="$(addon_bin local-path-provisioner)"
  dir="$STATE_DIR/addons.d/storage"
  data="$STATE_DIR/local-path"
  mkdir -p "$dir" "$data"
  shell_ref="$(CONTAINERD_ADDRESS="$CONTAINERD_ADDRESS" "$REPO_ROOT/hack/images/load.sh" shell 2>>"$dir/images.log" | tail -n1)"
  [[ -n "$shell_ref" ]] || adie "no shell image (see $dir/images.log)"

  cat >"$dir/config.json" <<EOF
{"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$data"]}]}
EOF
  cat >"$dir/helperPod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: helper-pod}
spec:
  containers:
  - name: helper-pod
    image: $shell_ref
    imagePullPolicy: Never
    securityContext: {runAsUser: 0, runAsGroup: 0}
EOF
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $NS, labels: {app.kubernetes.io/part-of: cronscale-addons}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner, namespace: $NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: $NS}
data:
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
  labels: {app.kubernetes.io/part-of: cronscale-addons}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
EOF
  start_proc storage "$bin" start --kubeconfig "$KUBECONFIG" --config "$dir/config.json" \
    --namespace "$NS" --service-account-name local-path-provisioner \
    --provisioner-name rancher.io/local-path --configmap-name local-path-config \
    --helper-image "$shell_ref" --helper-pod-file "$dir/helperPod.yaml"
  sleep 2
  proc_alive storage || {
    tail -n 20 "$STATE_DIR/logs/storage.log" >&2
    adie "local-path-provisioner exited"
  }
  alog "local-path-provisioner running; default StorageClass local-path (data under $data)"
}

down() {
  stop_proc storage
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) adie "usage: $0 up|down" ;;
esac
