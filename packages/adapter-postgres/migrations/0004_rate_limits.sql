-- 0004_rate_limits: rate-limit state written without WAL, and each key's own clock
-- (docs/storage.md, "Rate limits").
--
-- Every admitted or refused request updates its workspace's row, and the requests of one
-- workspace queue on that row's lock until the one before them commits. A logged table makes each
-- of those commits wait for a WAL flush, so one workspace's burst was admitted at the disk's flush
-- rate, and under load the rate limiter's 250 ms deadline ran out (it then fails open). Unlogged,
-- a commit waits for no flush. What is given up: after a crash of the server (not a clean
-- restart) the table comes back empty, and standbys do not have it — every workspace then starts
-- a fresh window, which is what a Redis without persistence does too. Nothing else reads it.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
ALTER TABLE rate_limits SET UNLOGGED;

-- The latest time (ms since the epoch) a key was hit at. A hit is decided at the later of its
-- caller's time and this one: hits of one key queue on its row lock, so one whose time was read a
-- moment earlier may be decided after a later one, and must not be decided in the past.
ALTER TABLE rate_limits ADD COLUMN now_ms bigint NOT NULL DEFAULT 0;

INSERT INTO schema_migrations (version, name) VALUES (4, 'rate_limits') ON CONFLICT (version) DO NOTHING;
