-- 0011_event_order: the event log is ordered by transaction, not by a per-workspace counter, so
-- the writes of one workspace no longer wait for each other's commits (docs/storage.md, "Order of
-- events").
--
-- Before: each write took the next number from its workspace's row in event_counters and held
-- that row locked until it committed, so every write of a workspace queued behind the one before
-- it. Now an event's position is (xid, seq): the id of the transaction that recorded it
-- (pg_current_xact_id(), taken without a lock) and a number from one sequence (seq, unique and
-- increasing within a transaction). Readers — GET /api/events and the outbox's relay — read only
-- events whose transaction is below the oldest one still running (pg_snapshot_xmin of their
-- snapshot): every transaction below it has ended, so no event can appear later before a position
-- a reader has passed. A reader never skips nor repeats an event; an event becomes readable once
-- the transactions that began before its own have ended (usually within milliseconds).
--
-- Events stored before keep their order: they get xid 0, below every real transaction id, and
-- their old seq; the sequence starts above the highest seq stored, so seq stays unique within a
-- workspace (the outbox's rows point to their event by (workspace_id, xid, seq)).
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").

-- A column added with a constant default gives every stored row that value without rewriting the
-- table; the default set after it applies to rows inserted from now on.
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE SEQUENCE events_seq AS bigint OWNED BY events.seq;
SELECT setval('events_seq', coalesce(max(seq), 0) + 1, false) FROM events;
ALTER TABLE events ALTER COLUMN seq SET DEFAULT nextval('events_seq');

-- The log's order in each workspace, for GET /api/events (with and without `type`).
ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (workspace_id, xid, seq);
DROP INDEX events_by_type;
CREATE INDEX events_by_type ON events (workspace_id, type, xid, seq);

-- The outbox's rows name their event's position; rows queued from now on are given it.
ALTER TABLE outbox ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE outbox ALTER COLUMN xid DROP DEFAULT;
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD PRIMARY KEY (workspace_id, xid, seq);

DROP TABLE event_counters;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (11, 'event_order') ON CONFLICT (version) DO NOTHING;
