#!/bin/bash
# Entry point of the local PostgreSQL 15 image. On the first start (no PG_VERSION in PGDATA) it
# creates the cluster with POSTGRES_USER as superuser, POSTGRES_PASSWORD as its password and
# the database POSTGRES_DB, and allows connections from anywhere with a password only
# (scram-sha-256, also on the local socket). Then it runs the server in the foreground on
# 0.0.0.0:5432. On every later start it first sets the user's password from POSTGRES_PASSWORD.
# Runs as the image's user postgres (999): initdb wants its user in /etc/passwd.
set -euo pipefail

if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "postgres: POSTGRES_PASSWORD is not set; this image requires password authentication" >&2
  exit 1
fi
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
# A subdirectory of the volume: a freshly mounted volume's root belongs to root and may hold
# lost+found, while initdb wants an empty directory of its own.
export PGDATA="${PGDATA:-/var/lib/postgresql/data/pgdata}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  chmod 0700 "$PGDATA"
  pwfile=$(mktemp)
  trap 'rm -f "$pwfile"' EXIT
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 --no-instructions
  rm -f "$pwfile"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    # Single-user mode: no server, no socket, no password needed yet.
    printf 'CREATE DATABASE "%s";\n' "${POSTGRES_DB//\"/\"\"}" \
      | postgres --single -D "$PGDATA" -c jit=off postgres >/dev/null
  fi
  cat >"$PGDATA/pg_hba.conf" <<'HBA'
# TYPE  DATABASE  USER  ADDRESS    METHOD
local   all       all              scram-sha-256
host    all       all   0.0.0.0/0  scram-sha-256
host    all       all   ::/0       scram-sha-256
HBA
  echo "postgres: initialised $PGDATA (database $POSTGRES_DB, user $POSTGRES_USER)" >&2

# Every later start: the user's password is set from POSTGRES_PASSWORD (the current Secret), so a
# volume kept from an earlier platform of the same name, or restored from a backup taken under
# another password, comes up with a working one. Single-user mode: no server, no socket, no
# password needed. Skipped while a recovery is pending (single-user mode does not run one).
elif [ ! -e "$PGDATA/recovery.signal" ] && [ ! -e "$PGDATA/standby.signal" ]; then
  if [ -O "$PGDATA" ]; then chmod 0700 "$PGDATA"; fi
  printf 'ALTER ROLE "%s" PASSWORD '"'"'%s'"'"';\n' "${POSTGRES_USER//\"/\"\"}" "${POSTGRES_PASSWORD//\'/\'\'}" \
    | postgres --single -D "$PGDATA" -c jit=off -c password_encryption=scram-sha-256 "$@" postgres >/dev/null
  echo "postgres: password of $POSTGRES_USER set from POSTGRES_PASSWORD" >&2
fi

# postgres refuses a data directory that group or others may write; a pod's fsGroup makes the
# kubelet add group rw (and setgid) to the volume's files on every mount, so put it back.
if [ -O "$PGDATA" ]; then chmod 0700 "$PGDATA"; fi

# The socket goes to /tmp (the root file system may be read-only); PGHOST=/tmp in the image
# points psql there. JIT is off: LLVM is left out of the image.
exec postgres -D "$PGDATA" -c listen_addresses='*' -c port=5432 -c unix_socket_directories=/tmp \
  -c jit=off -c password_encryption=scram-sha-256 "$@"
