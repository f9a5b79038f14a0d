#!/bin/sh
# The postgres:18 image's start, in short: initialise $PGDATA on first
# start with POSTGRES_USER / POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE)
# / POSTGRES_DB, then run the server as the postgres user, listening on
# every interface.
set -eu
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown -R postgres:postgres /var/lib/postgresql
  chmod 700 "$PGDATA"
  mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
  fi
  printf '%s\n' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE}" > "$pwfile"
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres \
      -c "CREATE DATABASE \"$db\"" >/dev/null
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "initialised $PGDATA for $user/$db"
fi
exec "$@" -D "$PGDATA" -c listen_addresses='*'
