# shellcheck shell=bash
# postgres: PostgreSQL 15 from Debian's packages (server and client binaries, no
# postgresql-common wrappers: they are perl), on the base layer. Runs as postgres (uid/gid
# 999, as the official image does), data in PGDATA (default /var/lib/postgresql/data/pgdata:
# mount the volume at /var/lib/postgresql/data), initialised from POSTGRES_USER,
# POSTGRES_PASSWORD (required) and POSTGRES_DB by files/postgres/entrypoint.sh, listening on
# 0.0.0.0:5432 with scram-sha-256 password authentication only. Readiness:
# `pg_isready -h 127.0.0.1 -p 5432`. pgBackRest (Debian's 2.45) is in /usr/bin for backups and WAL
# archiving; it takes its options from PGBACKREST_* variables (the operator sets them).

# LLVM (JIT, 100 MB) and locales are left out: JIT is turned off, C.UTF-8 is built into glibc.
PG_EXCLUDES="postgresql-common postgresql-client-common ssl-cert libllvm14 locales locales-all"
PG_DEBS=(postgresql-15 postgresql-client-15 pgbackrest)

recipe_inputs() {
  base_inputs
  extra_deb_inputs "$PG_EXCLUDES" "${PG_DEBS[@]}"
  cat "$IMAGES_DIR/files/postgres/"*
}

recipe_build() {
  local work="$1" root="$1/postgres"
  base_layer "$work/base"
  extra_deb_inputs "$PG_EXCLUDES" "${PG_DEBS[@]}" | debs_layer "$root"
  # The base layer's passwd and group, plus postgres (999).
  cp "$work/base/etc/passwd" "$work/base/etc/group" "$root/etc/"
  echo "postgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh" >>"$root/etc/passwd"
  echo "postgres:x:999:" >>"$root/etc/group"
  mkdir -p "$root/var/lib/postgresql/data" "$root/usr/local/bin"
  chown -R 999:999 "$root/var/lib/postgresql"
  chmod 0700 "$root/var/lib/postgresql/data"
  install -m 0755 "$IMAGES_DIR/files/postgres/entrypoint.sh" "$root/usr/local/bin/postgres-entrypoint"
  cat >"$work/config.json" <<'JSON'
{
  "User": "999:999",
  "Env": ["PATH=/usr/local/bin:/usr/lib/postgresql/15/bin:/usr/bin:/usr/sbin", "HOME=/tmp", "LANG=C.UTF-8",
          "PGDATA=/var/lib/postgresql/data/pgdata", "PGHOST=/tmp"],
  "Entrypoint": ["/usr/local/bin/postgres-entrypoint"],
  "WorkingDir": "/tmp",
  "ExposedPorts": {"5432/tcp": {}},
  "StopSignal": "SIGINT"
}
JSON
  LAYERS=("$work/base" "$root")
}
