# shellcheck shell=bash
# shell: bash, coreutils and a few everyday tools (procps, grep, sed, findutils...) from
# Debian's packages, a non-root user (nonroot, 65532) and /tmp. Used by tests for one-off pods.

# Parts of Debian's essential set that a container never runs: the package manager, perl,
# init integration, and the awks a base-files dependency would drag in besides mawk.
SHELL_DEB_EXCLUDES="dpkg perl perl-base perl-modules-5.36 libperl5.36 usrmerge usr-is-merged init-system-helpers install-info gawk original-awk libelogind0 debconf cdebconf"
SHELL_DEBS=(bash coreutils procps grep sed findutils gzip tar mawk netbase)

recipe_inputs() { apt_inputs "$SHELL_DEB_EXCLUDES" "${SHELL_DEBS[@]}"; }

recipe_build() {
  local work="$1" root="$1/root"
  rootfs_init "$root"
  recipe_inputs >"$work/debs"
  deb_fetch <"$work/debs"
  deb_verify <"$work/debs"
  rootfs_debs "$root" <"$work/debs"
  rootfs_users "$root"
  cat >"$work/config.json" <<'JSON'
{
  "User": "65532:65532",
  "Env": ["PATH=/usr/local/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8"],
  "Entrypoint": ["/bin/bash"],
  "WorkingDir": "/tmp"
}
JSON
  LAYERS=("$root")
}
