# shellcheck shell=bash
# kubeprobe: one static Go binary (hack/images/kubeprobe) that reads /version and a
# SelfSubjectReview through the `kubernetes` Service with the pod's service-account token.
# Used by the local cluster's tests (test/integration/cluster).

recipe_inputs() {
  go_env
  (cd "$IMAGES_DIR/kubeprobe" && cat go.mod ./*.go && go version)
}

recipe_build() {
  local work="$1"
  mkdir -p "$work/root"
  (cd "$IMAGES_DIR/kubeprobe" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w -buildid=' -o "$work/root/kubeprobe" .) \
    || die "cannot build kubeprobe"
  cat >"$work/config.json" <<'JSON'
{"User": "65532:65532", "Entrypoint": ["/kubeprobe"], "WorkingDir": "/"}
JSON
  LAYERS=("$work/root")
}
