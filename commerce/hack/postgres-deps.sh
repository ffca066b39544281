#!/usr/bin/env bash
# Installs Debian's PostgreSQL 15 server binaries when missing: the commerce tests run a real
# PostgreSQL as a host process (commerce/test/setup/postgres.ts). Idempotent: with the binaries
# present it runs no apt command at all.
set -euo pipefail

bin="${COMMERCE_PG_BIN:-/usr/lib/postgresql/15/bin}"
if [[ -x "$bin/postgres" && -x "$bin/initdb" ]]; then
  echo "postgres-deps.sh: $bin present"
  exit 0
fi
if [[ $EUID -ne 0 ]]; then
  echo "postgres-deps.sh: $bin/postgres missing; run as root (or: sudo apt-get install postgresql-15)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy postgresql-15 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  apt-get update -qq
fi
echo "postgres-deps.sh: installing postgresql-15"
# The package's own cluster is not wanted: the tests start their own server in a temp dir.
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/cronscale-no-main.conf
apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
echo "postgres-deps.sh: installed postgresql-15"
