-- 0013_append_messages: a batch of message appends (group commit) is one call of a function, so
-- PostgreSQL plans the statement once per connection instead of once per batch (docs/storage.md,
-- "Group commit of appends").
--
-- The statement is the one the adapter sent as text before (storage/messages.ts): planning its
-- data-modifying CTEs took ~0.4 ms of server CPU per batch, 15–17 µs per message, a seventh of
-- what PostgreSQL spent on a POST message. PL/pgSQL keeps the plan of the statement below for the
-- session, so each call plans only the trivial `SELECT * FROM append_messages(…)` around it; a
-- pooler in transaction mode is no obstacle, as nothing is prepared by name on the connection.
--
-- Arguments are parallel arrays, one element per append, in the order made: the workspace and
-- conversation ids, the message's id, `createdAt` (ISO 8601 UTC, which sorts bytewise) and JSON,
-- the event's id, type and JSON, and the W3C trace context the append was made in (null for none).
-- One row per append, in the order given: whether it was appended, and, if not, whether its
-- conversation exists (so it was completed). Each append is decided as if alone: its conversation
-- active, the conversation's `lastMessageAt`/`updatedAt` moved only forwards and its version
-- raised by the conversation's appends. Conversations are locked in (workspace, id) order, after
-- their advisory record locks (storage/context.ts, `recordLock`), so two batches never wait for
-- each other in a cycle; the event of each appended message is logged and queued as
-- storage/context.ts's `recordEvent` does.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley"), and SET search_path FROM CURRENT keeps it for
-- the body, as for rate_limit_hits in 0005.
CREATE FUNCTION append_messages(
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
      UPDATE conversations AS c SET data = c.data
          || jsonb_build_object('lastMessageAt', CASE
               WHEN c.data->'lastMessageAt' IS NULL OR c.data->'lastMessageAt' = 'null'::jsonb
                 OR (c.data->'lastMessageAt' #>> '{}') COLLATE "C" < p.last THEN to_jsonb(p.last)
               ELSE c.data->'lastMessageAt' END)
          || jsonb_build_object('updatedAt', CASE
               WHEN c.data->'updatedAt' IS NULL OR c.data->'updatedAt' = 'null'::jsonb
                 OR (c.data->'updatedAt' #>> '{}') COLLATE "C" < p.last THEN to_jsonb(p.last)
               ELSE c.data->'updatedAt' END),
        version = c.version + p.n
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
INSERT INTO schema_migrations (version, name) VALUES (13, 'append_messages') ON CONFLICT (version) DO NOTHING;
