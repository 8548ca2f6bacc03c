-- 0003_usage: token usage totals of each workspace's stored replies (docs/replies-and-streams.md#usage).
--
-- One counter per (workspace, UTC day, field). A field names a group and what it counts, the same
-- naming every adapter uses (core's usage-counters.ts): '<group>|<key>|<i|o|n>' with group 'a'
-- (agent id), 'm' (model), 'u' (user id), 'x' (no user) or 'd' (the day itself), and i = input
-- tokens, o = output tokens, n = reply steps. A reply step's message append adds to its counters in
-- the same statement that stores the message, so `GET /api/usage` reads a few rows per day asked
-- for and never scans messages.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
CREATE TABLE usage_counters (
  workspace_id text   NOT NULL,
  day          date   NOT NULL,
  field        text   NOT NULL,
  value        bigint NOT NULL,
  PRIMARY KEY (workspace_id, day, field)
);

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (3, 'usage') ON CONFLICT (version) DO NOTHING;
