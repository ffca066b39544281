# shellcheck shell=bash
# Shared functions of hack/images/build.sh and the recipes in hack/images/recipes/.
# Sourced, not run. Everything expensive is cached under $IMAGES_CACHE.

CACHE="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}"
IMAGES_CACHE="$CACHE/images"
IMAGES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$IMAGES_DIR/../.." && pwd)"
# Every local image lives under this repository name; no registry serves it.
IMAGE_REPO_PREFIX="cronscale.local"

log() { echo "images: $*" >&2; }
die() { echo "images: error: $*" >&2; exit 1; }

# sha_of FILE... — one sha256 over the named files' contents (order as given).
sha_of() { cat "$@" | sha256sum | cut -c1-64; }

# go_env — Go must build with a writable cache even when HOME is odd; reuse the user's caches.
go_env() {
  command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"
  command -v go >/dev/null 2>&1 || die "go is needed to build images (Go 1.26 at /usr/local/go)"
}

# builder_bin — prints the path of the image builder, building it when its source changed.
builder_bin() {
  go_env
  local src="$IMAGES_DIR/builder" key bin
  key=$( (cd "$src" && cat go.mod $(ls ./*.go | grep -v _test.go); go version) | sha256sum | cut -c1-16)
  bin="$IMAGES_CACHE/bin/builder-$key"
  if [ ! -x "$bin" ]; then
    mkdir -p "$IMAGES_CACHE/bin"
    # A per-process temp name: several builds may start at once (rename is atomic).
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$bin.tmp.$$" .) || die "cannot build the image builder"
    mv "$bin.tmp.$$" "$bin"
  fi
  echo "$bin"
}

# Dependencies followed when closing over Debian packages: what the package needs to run, not
# what it recommends, and only the first of each group of alternatives (what apt would pick).
APT_DEP_FLAGS=(--no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances)

# deb_closure EXCLUDES PKG... — prints the dependency closure of PKG..., one name a line,
# sorted. EXCLUDES is a space-separated list of packages not to take (nor follow): parts of the
# essential set that a container never uses (dpkg, perl, init helpers...). Of each group of
# alternatives (a | b, or the providers of a virtual package) the first candidate not excluded
# is taken, unless one of them is already in the closure.
deb_closure() {
  local excludes=" $1 " p line
  shift
  local -A seen=()
  local frontier=() next=()
  for p in "$@"; do seen[$p]=1; frontier+=("$p"); done
  while [ "${#frontier[@]}" -gt 0 ]; do
    next=()
    while read -r line; do
      local pick="" satisfied=""
      for p in $line; do
        p="${p%:any}"
        if [ -n "${seen[$p]:-}" ]; then satisfied=1; break; fi
        case "$excludes" in *" $p "*) continue ;; esac
        [ -z "$pick" ] && pick="$p"
      done
      [ -n "$satisfied" ] || [ -z "$pick" ] && continue
      seen[$pick]=1
      next+=("$pick")
    done < <(apt-cache depends "${APT_DEP_FLAGS[@]}" "${frontier[@]}" | awk '
      # One output line per dependency group: its alternatives, virtual ones replaced by
      # their providers, in apt order.
      function flush() { if (group != "") print group; group = "" }
      /^[^ ]/ { flush(); ingroup = 0; next }
      /^ [ |](Pre)?Depends:/ {
        if (!ingroup) flush()
        ingroup = (substr($0, 2, 1) == "|")
        if ($2 !~ /^</) group = group " " $2
        next
      }
      /^    / { group = group " " $1; next }
      END { flush() }')
    frontier=("${next[@]}")
  done
  printf '%s\n' "${!seen[@]}" | sort
}

# deb_resolve PKG... — prints "FILENAME SHA256" for the candidate version of each package
# (apt's own answer, no download), sorted. The filenames carry name and version, so they are
# the content key of a rootfs made of them.
deb_resolve() {
  apt-get download --print-uris "$@" 2>/dev/null | awk '{ sub(/^SHA256:/, "", $4); print $2, $4 }' | sort
}

# deb_fetch "FILENAME SHA256"... (stdin) — makes sure each .deb is in the cache, verified.
deb_fetch() {
  local dir="$IMAGES_CACHE/debs" file sum pkg missing=()
  mkdir -p "$dir"
  while read -r file sum; do
    if [ ! -f "$dir/$file" ]; then missing+=("$file"); fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    local tmp; tmp=$(mktemp -d "$dir/.dl.XXXXXX")
    local specs=()
    for file in "${missing[@]}"; do
      # name_version_arch.deb with the epoch ':' escaped as %3a
      pkg="${file%%_*}"
      local ver="${file#*_}"; ver="${ver%_*}"; ver="${ver//%3a/:}"
      specs+=("$pkg=$ver")
    done
    log "downloading ${#specs[@]} Debian packages"
    (cd "$tmp" && apt-get download "${specs[@]}" >/dev/null 2>"$tmp/.err") \
      || { cat "$tmp/.err" >&2; rm -rf "$tmp"; log "apt-get download failed (stale package lists?)"; exit "$APT_STALE"; }
    mv "$tmp"/*.deb "$dir/" && rm -rf "$tmp"
  fi
}

# deb_verify "FILENAME SHA256"... (stdin) — fails unless every cached .deb has its sha256.
deb_verify() {
  local dir="$IMAGES_CACHE/debs"
  (cd "$dir" && awk '{ print $2 "  " $1 }' | sha256sum --quiet -c -) || die "a cached .deb does not match its sha256"
}

# Parts of packages that a container never reads: documentation, manuals, translations.
DEB_SKIP_PATHS=(./usr/share/doc ./usr/share/man ./usr/share/info ./usr/share/locale ./usr/share/lintian ./usr/share/bug ./usr/share/doc-base)

# rootfs_init DIR — an empty merged-/usr root (as Debian 12 systems have it), with /tmp.
rootfs_init() {
  local root="$1"
  mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,tmp,var/tmp,root,home,proc,sys,dev,run}
  ln -s usr/bin "$root/bin"
  ln -s usr/sbin "$root/sbin"
  ln -s usr/lib "$root/lib"
  ln -s usr/lib64 "$root/lib64"
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 0700 "$root/root"
}

# rootfs_debs DIR < "FILENAME SHA256" lines — unpacks the .debs into DIR, keeping the merged
# /usr symlinks (dpkg-deb's data tar, extracted with --keep-directory-symlink).
rootfs_debs() {
  local root="$1" file _sum p excl=()
  for p in "${DEB_SKIP_PATHS[@]}"; do excl+=(--exclude="$p"); done
  while read -r file _sum; do
    dpkg-deb --fsys-tarfile "$IMAGES_CACHE/debs/$file" \
      | tar -x --keep-directory-symlink --same-owner -C "$root" "${excl[@]}" \
      || die "cannot unpack $file"
  done
  # Maintainer scripts never run here. No ld.so.cache either: Debian's dynamic linker searches
  # /usr/lib/x86_64-linux-gnu by default, and a cache in one layer would go stale in the next.
}

# rootfs_users DIR [EXTRA_PASSWD_LINE...] — /etc/passwd and /etc/group with root and the
# non-root user nonroot (65532), plus any extra lines ("name:uid:gid:home").
rootfs_users() {
  local root="$1"
  shift
  mkdir -p "$root/etc" "$root/home/nonroot"
  {
    echo "root:x:0:0:root:/root:/bin/sh"
    echo "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"
    echo "nonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh"
    local e
    for e in "$@"; do IFS=: read -r n u g h <<<"$e"; echo "$n:x:$u:$g:$n:$h:/bin/sh"; done
  } >"$root/etc/passwd"
  {
    echo "root:x:0:"
    echo "nogroup:x:65534:"
    echo "nonroot:x:65532:"
    for e in "$@"; do IFS=: read -r n u g h <<<"$e"; echo "$n:x:$g:"; done
  } >"$root/etc/group"
  chown 65532:65532 "$root/home/nonroot"
}

# Exit status of a build whose .deb download failed: build.sh then refreshes the package lists
# (once) and starts over, since the resolved versions may no longer be on the mirror.
APT_STALE=75

# apt_ready — apt must know candidates before anything can be resolved: a fresh machine may
# have no package lists yet.
apt_ready() {
  local policy
  # Not a pipe into grep -q: under pipefail, apt-cache's SIGPIPE would read as "no candidate".
  policy=$(apt-cache policy bash 2>/dev/null || true)
  grep -q 'Candidate: [0-9]' <<<"$policy" && return 0
  [ "$(id -u)" = 0 ] || die "apt has no package lists; run apt-get update (as root) first"
  log "apt has no package lists yet: apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
}

# apt_inputs EXCLUDES PKG... — the resolved .deb list of a Debian-based recipe, as the lines
# "FILENAME SHA256" (also what rootfs_debs wants). apt-cache takes about a second a call, so
# the answer is cached until the package lists change (apt-get update) or the question does.
apt_inputs() {
  local key file
  apt_ready
  key=$( { printf '%s\n' "$@"; ls -l --time-style=+%s /var/lib/apt/lists/ 2>/dev/null; declare -f deb_closure deb_resolve; } \
    | sha256sum | cut -c1-32)
  file="$IMAGES_CACHE/resolve/$key"
  if [ ! -s "$file" ]; then
    mkdir -p "$IMAGES_CACHE/resolve"
    local closure
    closure=$(deb_closure "$@") || die "cannot resolve Debian packages: $*"
    deb_resolve $closure >"$file.tmp.$$"
    [ "$(wc -l <"$file.tmp.$$")" -eq "$(wc -w <<<"$closure")" ] \
      || { rm -f "$file.tmp.$$"; die "apt-get has no candidate for some of: $closure (run apt-get update?)"; }
    mv "$file.tmp.$$" "$file"
  fi
  cat "$file"
}

# The base layer every Debian-based image shares (same bytes, same digest, stored once by
# containerd): bash as /bin/sh, coreutils and everyday tools, users, /tmp, and tini (a minimal
# init: as PID 1 it forwards SIGTERM to the script, which a shell as PID 1 would ignore).
# Excluded: parts of Debian's essential set a container never runs (the package manager, perl,
# init integration, debconf) and the awks a base-files dependency would take besides mawk.
BASE_DEB_EXCLUDES="dpkg perl perl-base perl-modules-5.36 libperl5.36 usrmerge usr-is-merged init-system-helpers install-info gawk original-awk libelogind0 debconf cdebconf adduser ucf lsb-base sysvinit-utils"
BASE_DEBS=(bash coreutils procps grep sed findutils gzip tar mawk netbase tzdata libc-bin tini)

# base_inputs — the resolved .debs of the base layer.
base_inputs() { apt_inputs "$BASE_DEB_EXCLUDES" "${BASE_DEBS[@]}"; }

# base_layer DIR — builds the base layer's root in DIR.
base_layer() {
  local root="$1"
  rootfs_init "$root"
  base_inputs >"$root.debs"
  debs_into "$root" <"$root.debs"
  rm -f "$root.debs"
  rootfs_users "$root"
  # Debian's /bin/sh is dash; bash serves here (scripts and `docker build` RUN steps need sh).
  ln -s bash "$root/usr/bin/sh"
}

# extra_deb_inputs EXCLUDES PKG... — the .debs PKG... need beyond the base layer.
extra_deb_inputs() {
  local excl="$1"
  shift
  comm -13 <(base_inputs) <(apt_inputs "$BASE_DEB_EXCLUDES $excl" "${BASE_DEBS[@]}" "$@")
}

# debs_layer DIR < "FILENAME SHA256" lines — a layer holding just those packages.
debs_layer() {
  rootfs_init "$1"
  debs_into "$1"
}

# debs_into DIR < lines — fetch, verify, unpack.
debs_into() {
  local list
  list=$(cat)
  deb_fetch <<<"$list"
  deb_verify <<<"$list"
  rootfs_debs "$1" <<<"$list"
}

# npm_tarball PKG VERSION — prints the path of the package's tarball, fetched once into the
# cache with `npm pack` (which checks the registry's integrity hash).
npm_tarball() {
  local pkg="$1" ver="$2" dir="$IMAGES_CACHE/npm" file
  file="$dir/$(echo "$pkg" | tr -d @ | tr / -)-$ver.tgz"
  if [ ! -f "$file" ]; then
    mkdir -p "$dir"
    local tmp nodebin
    tmp=$(mktemp -d "$dir/.pack.XXXXXX")
    nodebin=$("$REPO_ROOT/hack/node.sh") || die "no Node 24 (hack/node.sh) for npm"
    log "fetching $pkg@$ver from the npm registry"
    (cd "$tmp" && PATH="$nodebin:$PATH" npm pack --silent "$pkg@$ver" >/dev/null) || { rm -rf "$tmp"; die "npm pack $pkg@$ver failed"; }
    mv "$tmp"/*.tgz "$file" && rm -rf "$tmp"
  fi
  echo "$file"
}
