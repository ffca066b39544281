# shellcheck shell=bash
# pause: the pod sandbox image of the local node. One static Go binary (hack/images/pause),
# nothing else; runs as 65535 like the upstream pause image.

recipe_inputs() {
  go_env
  (cd "$IMAGES_DIR/pause" && cat go.mod ./*.go && go version)
}

recipe_build() {
  local work="$1"
  mkdir -p "$work/root"
  (cd "$IMAGES_DIR/pause" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w -buildid=' -o "$work/root/pause" .) \
    || die "cannot build pause"
  cat >"$work/config.json" <<'JSON'
{"User": "65535:65535", "Entrypoint": ["/pause"], "WorkingDir": "/"}
JSON
  LAYERS=("$work/root")
}
