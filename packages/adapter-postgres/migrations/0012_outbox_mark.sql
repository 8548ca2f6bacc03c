-- 0012_outbox_mark: each workspace's outbox lease row keeps the position up to which the outbox
-- has been acknowledged (docs/storage.md, "The outbox's mark").
--
-- The outbox is a queue: every row is inserted by a write and deleted by the relay's ack, and a
-- deleted row's index entry stays in the primary key until VACUUM removes it. The relay's take
-- and ack used to scan a workspace's rows from its first index entry, so they stepped over every
-- row deleted since the last VACUUM: under steady writes a take read more pages each second
-- (with autovacuum off, its database time per message grew fourfold within a minute). They now
-- start their scan just past the mark: rows at or below it were all handed on (a batch is the
-- workspace's oldest stable rows, and no row can appear below a stable position later), so what
-- a take reads is the batch it hands out, however many deleted rows lie behind it.
--
-- Rows queued before this migration lie above the mark's start ('0', 0) and are handed on as
-- before. Names are unqualified: the migration runner applies this file with search_path set to
-- the Parley schema (PARLEY_SCHEMA, default "parley").
ALTER TABLE outbox_leases
  ADD COLUMN acked_xid xid8 NOT NULL DEFAULT '0',
  ADD COLUMN acked_seq bigint NOT NULL DEFAULT 0;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (12, 'outbox_mark') ON CONFLICT (version) DO NOTHING;
