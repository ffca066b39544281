# shellcheck shell=bash
# python: the runtime of Python tasks. The base layer plus Debian's python3 (3.11, with its
# standard library). No bytecode is written (read-only root), output is unbuffered so stdout
# and stderr reach the logs in order.

PYTHON_DEBS=(python3)
# (tzdata, which zoneinfo reads, and the C.UTF-8 locale are in the base layer.)
PYTHON_EXCLUDES=""

recipe_inputs() { base_inputs; extra_deb_inputs "$PYTHON_EXCLUDES" "${PYTHON_DEBS[@]}"; }

recipe_build() {
  local work="$1"
  base_layer "$work/base"
  extra_deb_inputs "$PYTHON_EXCLUDES" "${PYTHON_DEBS[@]}" | debs_layer "$work/python"
  # Tests of the standard library are 30 MB nobody runs here.
  rm -rf "$work/python/usr/lib/python3.11/test"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8",
          "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"],
  "Cmd": ["python3"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$work/base" "$work/python")
}
