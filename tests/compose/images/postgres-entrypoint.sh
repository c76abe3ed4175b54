#!/bin/sh
# PostgreSQL from Debian's package, as compose.yaml expects of the official postgres image:
# on first start, initdb with POSTGRES_PASSWORD (scram over TCP, trust on the local socket) and
# create POSTGRES_DB; then postgres as PID 1, on PGHOST:PGPORT (the test's loopback port).
set -eu
: "${PGDATA:=/var/lib/postgresql/data}" "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" "${POSTGRES_DB:=postgres}"
bin=$(echo /usr/lib/postgresql/*/bin)
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA"
chown postgres:postgres "$PGDATA"
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres "$bin/initdb" -D "$PGDATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 --pwfile="$pwfile" >/dev/null
  rm -f "$pwfile"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\"" | as_postgres "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "postgres-entrypoint: initialised $PGDATA with database $POSTGRES_DB"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" \
  -c listen_addresses="$PGHOST" -c port="$PGPORT" -c unix_socket_directories=/tmp
