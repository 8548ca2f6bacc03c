-- 0015_conversation_last_message_at: a message append moves its conversation's `lastMessageAt`
-- (and so its `updatedAt`) in a column of its own instead of rewriting the conversation's `data`
-- (docs/storage.md, "A conversation's last message time").
--
-- An append rewrote `data` (jsonb) to move the two timestamps forwards: decoding and encoding the
-- whole record once per conversation a batch touches. With a batch spread over many conversations
-- that was most of what the batch paid per conversation (bench/PERFORMANCE-NOTES.md, "What is left
-- of 100 conversations against one, statement by statement"). Now an append writes
-- `last_message_at`, the latest `createdAt` appended (ISO 8601 UTC, which sorts bytewise), and the
-- version; both are plain columns, so the new row version stays a heap-only (HOT) update. Readers
-- lay the column over `data` (storage/conversations.ts, `CONVERSATION_DATA`): `lastMessageAt` and
-- `updatedAt` are each the later of the record's own and the column's. A conversation written
-- before this migration has the column null, and its `data` answers as before.
ALTER TABLE conversations ADD COLUMN last_message_at text COLLATE "C";

-- The batch of 0013, the same in every other respect: only the conversation's UPDATE changes.
CREATE OR REPLACE FUNCTION append_messages(
  workspace_ids text[], conversation_ids text[], message_ids text[], created_ats text[], message_data text[],
  event_ids text[], event_types text[], event_data text[], trace_contexts text[]
)
RETURNS TABLE (appended boolean, conversation_found boolean)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  RETURN QUERY
    WITH given AS MATERIALIZED (
      SELECT * FROM unnest(workspace_ids, conversation_ids, message_ids, created_ats, message_data, event_ids, event_types, event_data, trace_contexts)
        WITH ORDINALITY AS g(ws, conv, id, created_at, data, event_id, event_type, event, trace, ord)
    ),
    lk AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(hashtext('conversations'), hashtext(ws || '/' || conv))
      FROM (SELECT DISTINCT ws, conv FROM given ORDER BY ws, conv) AS each_conversation
    ),
    per_conversation AS (
      SELECT ws, conv, max(created_at COLLATE "C") AS last, count(*)::int AS n FROM given GROUP BY ws, conv
    ),
    conv AS (
      UPDATE conversations AS c SET last_message_at = greatest(c.last_message_at, p.last), version = c.version + p.n
      FROM per_conversation AS p, (SELECT count(*) FROM lk) AS locked
      WHERE c.workspace_id = p.ws AND c.id = p.conv AND c.status = 'active'
      RETURNING c.workspace_id, c.id
    ),
    rec AS (
      INSERT INTO messages (workspace_id, conversation_id, id, data)
      SELECT g.ws, g.conv, g.id, g.data::json FROM given g JOIN conv ON conv.workspace_id = g.ws AND conv.id = g.conv
      ORDER BY g.ord RETURNING workspace_id, id
    ),
    logged AS (
      INSERT INTO events (workspace_id, id, type, event)
      SELECT g.ws, g.event_id, g.event_type, g.event::json FROM given g JOIN rec ON rec.workspace_id = g.ws AND rec.id = g.id
      ORDER BY g.ord RETURNING workspace_id, xid, seq, id
    ),
    queued AS (
      INSERT INTO outbox (workspace_id, xid, seq, trace_context)
      SELECT l.workspace_id, l.xid, l.seq, g.trace FROM logged l JOIN given g ON g.ws = l.workspace_id AND g.event_id = l.id
      RETURNING workspace_id
    ),
    leases AS (INSERT INTO outbox_leases (workspace_id) SELECT DISTINCT workspace_id FROM queued ON CONFLICT DO NOTHING)
    SELECT EXISTS (SELECT 1 FROM rec WHERE rec.workspace_id = g.ws AND rec.id = g.id),
           EXISTS (SELECT 1 FROM conversations c WHERE c.workspace_id = g.ws AND c.id = g.conv)
    FROM given g ORDER BY g.ord;
END
$$;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (15, 'conversation_last_message_at') ON CONFLICT (version) DO NOTHING;
