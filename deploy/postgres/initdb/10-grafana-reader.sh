#!/bin/sh
# PostgreSQL image init script (runs once, on a new data directory): the read-only role Grafana
# uses for the "Sluice data" dashboard. See deploy/postgres/grafana-reader.sql.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v reader=grafana_reader \
  -v password="${SLUICE_GRAFANA_DB_PASSWORD:-grafana}" \
  -v owner="$POSTGRES_USER" \
  -v dbname="$POSTGRES_DB" \
  -f /sluice/grafana-reader.sql
