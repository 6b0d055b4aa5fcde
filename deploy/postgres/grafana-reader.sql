-- A login role that may read what Sluice stores and nothing else, for Grafana's "Sluice data"
-- dashboard. Run once by the PostgreSQL image on a new data directory (docker-compose.yml mounts
-- deploy/postgres/initdb/), with psql variables:
--   reader    role name (grafana_reader)
--   password  its password (SLUICE_GRAFANA_DB_PASSWORD)
--   owner     the role the collectors connect as, which creates the tables (sluice)
-- The collectors create their tables and daily partitions later, as `owner`: default privileges
-- make every one of them readable by `reader` as it appears.
CREATE ROLE :"reader" LOGIN PASSWORD :'password';
GRANT CONNECT ON DATABASE :"dbname" TO :"reader";
GRANT USAGE ON SCHEMA public TO :"reader";
GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"reader";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";
-- Dashboards must not hold the database: a runaway query ends after 30 s.
ALTER ROLE :"reader" SET statement_timeout = '30s';
ALTER ROLE :"reader" SET default_transaction_read_only = on;
