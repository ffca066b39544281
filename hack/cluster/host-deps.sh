#!/usr/bin/env bash
# Installs the Debian packages the local cluster's real node needs, only those missing:
# containerd, runc, the CNI plugins, iptables (kube-proxy), iproute2 (netns/veth), util-linux
# (nsenter, mount), openssl (certs), conntrack (kube-proxy's stale-flow cleanup), procps, and
# chromium (the dashboard's browser tests drive Debian's Chromium with playwright-core), tzdata
# (src/cron reads the TZif zone files, as the cluster's scheduler does).
# Idempotent: with everything present it runs no apt command at all.
set -euo pipefail

# package => a file that proves it is installed (checked instead of dpkg so a manual install counts).
declare -A probe=(
  [containerd]=/usr/bin/containerd
  [runc]=/usr/sbin/runc
  [containernetworking-plugins]=/usr/lib/cni/bridge
  [iptables]=/usr/sbin/iptables
  [iproute2]=/usr/sbin/ip
  [util-linux]=/usr/bin/nsenter
  [openssl]=/usr/bin/openssl
  [conntrack]=/usr/sbin/conntrack
  [procps]=/usr/bin/pgrep
  [postgresql-15]=/usr/lib/postgresql/15/bin/postgres
  [chromium]=/usr/bin/chromium
  [tzdata]=/usr/share/zoneinfo/Europe/Berlin
)

missing=()
for pkg in "${!probe[@]}"; do
  [[ -e "${probe[$pkg]}" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "host-deps.sh: all present"
  exit 0
fi
if [[ $EUID -ne 0 ]]; then
  echo "host-deps.sh: missing ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when they are absent or apt cannot find a candidate.
for pkg in "${missing[@]}"; do
  if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -qq
    break
  fi
done
echo "host-deps.sh: installing ${missing[*]}"
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "host-deps.sh: installed ${missing[*]}"
