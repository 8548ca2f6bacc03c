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

-- The next rows of a workspace's outbox above its mark, oldest first: what a take hands out.
-- Planned with bitmap scans and sorts off, so it is always one ordered range scan of the primary
-- key that stops after `n` rows. Left to itself the planner, which rarely has statistics for a
-- queue table that is nearly empty most of the time, expects a handful of rows, reads the whole
-- backlog through a bitmap and sorts it: a take then costs more the further the relay is behind
-- (a take and its ack: 30 ms with 10⁵ events waiting, 7.7 ms with 10³), which is when it must be
-- fastest; with it, 8.1 and 3.7 ms.
-- `below`: the stable bound (only positions of transactions below it); `since`: the retention's
-- start (older rows are skipped). Names are unqualified, the search_path kept from this file's
-- (PARLEY_SCHEMA), as for rate_limit_hits in 0005.
CREATE FUNCTION outbox_page(ws text, after_xid xid8, after_seq bigint, below xid8, since timestamptz, n integer)
RETURNS TABLE (xid xid8, seq bigint, trace_context text)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT
SET enable_bitmapscan = off
SET enable_sort = off
AS $$
BEGIN
  RETURN QUERY
    SELECT o.xid, o.seq, o.trace_context FROM outbox o
    WHERE o.workspace_id = ws AND (o.xid, o.seq) > (after_xid, after_seq) AND o.xid < below AND o.recorded_at >= since
    ORDER BY o.xid, o.seq
    LIMIT n;
END
$$;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (12, 'outbox_mark') ON CONFLICT (version) DO NOTHING;
