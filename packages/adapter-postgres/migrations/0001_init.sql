-- Parley 0001: the migrations table. Everything lives in one schema, chosen by the caller's
-- search_path (the runner sets it to PARLEY_SCHEMA, default "parley"); no name here is
-- schema-qualified. To run by hand:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -1 -c 'CREATE SCHEMA IF NOT EXISTS parley; SET search_path TO parley' -f 0001_init.sql
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO schema_migrations (version, name) VALUES (1, 'init') ON CONFLICT (version) DO NOTHING;
