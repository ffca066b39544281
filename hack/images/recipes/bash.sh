# shellcheck shell=bash
# bash: the runtime of Bash tasks. The base layer plus the tools shell scripts commonly reach
# for (jq, bc, diffutils, less...). Non-root (65532); writes belong in /tmp.

BASH_EXTRA_DEBS=(jq bc diffutils)

recipe_inputs() { base_inputs; extra_deb_inputs "" "${BASH_EXTRA_DEBS[@]}"; }

recipe_build() {
  local work="$1"
  base_layer "$work/base"
  extra_deb_inputs "" "${BASH_EXTRA_DEBS[@]}" | debs_layer "$work/tools"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8"],
  "Cmd": ["/bin/bash"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$work/base" "$work/tools")
}
