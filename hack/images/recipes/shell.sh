# shellcheck shell=bash
# shell: the base layer alone — bash (also as /bin/sh), coreutils, procps, grep, sed, findutils,
# gzip, tar, mawk from Debian's packages, the non-root user nonroot (65532) and /tmp. Used by
# tests for one-off pods.

recipe_inputs() { base_inputs; }

recipe_build() {
  local work="$1"
  base_layer "$work/base"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8"],
  "Cmd": ["/bin/bash"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$work/base")
}
