# shellcheck shell=bash
# webapp: the HTTP application of the platform tests (hack/images/webapp): one static Go
# binary, nothing else. Listens on $PORT (8080); /healthz checks $DATABASE_URL's PostgreSQL
# with pgx; /burn?ms=N burns CPU; /metrics, /set?value=V for a custom metric. Non-root (65532).

recipe_inputs() {
  go_env
  (cd "$IMAGES_DIR/webapp" && cat go.mod go.sum ./*.go && go version)
}

recipe_build() {
  local work="$1"
  mkdir -p "$work/root"
  (cd "$IMAGES_DIR/webapp" && CGO_ENABLED=0 nice go build -trimpath -ldflags='-s -w -buildid=' -o "$work/root/webapp" .) \
    || die "cannot build webapp"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PORT=8080"],
  "Entrypoint": ["/webapp"],
  "WorkingDir": "/",
  "ExposedPorts": {"8080/tcp": {}}
}
JSON
  LAYERS=("$work/root")
}
