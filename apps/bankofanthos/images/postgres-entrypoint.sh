#!/bin/bash
# Stands in for the postgres image's entrypoint over Debian's PostgreSQL, by that image's documented
# contract: POSTGRES_PASSWORD (required), POSTGRES_USER (default postgres), POSTGRES_DB (default the
# user), PGDATA; on an empty PGDATA, initdb, then /docker-entrypoint-initdb.d in name order (*.sql
# with psql, *.sh run when executable, else sourced), then the server on every address.
set -Eeuo pipefail
if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  # setpriv execs in place (no parent left waiting, as su and runuser leave): the server is PID 1 and
  # gets the container's SIGTERM itself, as upstream's gosu gives it
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  export POSTGRES_USER="${POSTGRES_USER:-postgres}"
  export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
  pwfile="$(mktemp)"
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}" > "$pwfile"
  initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  export PGUSER="$POSTGRES_USER" PGHOST=/var/run/postgresql
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
      *.sql) psql -v ON_ERROR_STOP=1 -d "$POSTGRES_DB" -f "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  unset PGHOST PGUSER
fi
exec "$@"
