-- 0012_conversation_head: a message append no longer rewrites its conversation's row; a
-- conversation's `lastMessageAt`, `updatedAt` and version are read from its row and its newest
-- message (docs/storage.md, "Conversations as read").
--
-- Before: every append updated the conversation (`lastMessageAt`, `updatedAt`, version + 1), a new
-- row version per message once a workspace's messages spread over many conversations — the one
-- cost that made 100 conversations slower than one (bench/PERFORMANCE-NOTES.md). Now the append
-- stores the conversation's running figures on the message that becomes its newest:
--
--   appends          how many messages were appended to the conversation since this migration,
--                    up to and including this message's batch;
--   last_message_at  the latest `createdAt` among them (ISO 8601 UTC text: sorts bytewise).
--
-- A conversation as read is its row with `lastMessageAt` and `updatedAt` moved forwards to its
-- newest message's `last_message_at`, and version + `appends`: one primary-key probe. An append
-- whose messages are all older than the conversation's newest (a late arrival) cannot move the
-- newest message, so it updates the conversation's row as before. Messages stored before this
-- migration have neither figure (null): their effect is already in the conversation's row.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley"); the functions keep that search_path.

-- Nullable columns without a default: instant on a table of any size.
ALTER TABLE messages ADD COLUMN appends integer, ADD COLUMN last_message_at text COLLATE "C";

-- The newest message's figures, read in a new snapshot (the function is VOLATILE): a statement
-- that waited for the conversation's row lock calls it after the wait, and sees the append it
-- waited for, which the statement's own snapshot, taken before the wait, would not.
CREATE FUNCTION newest_message(ws text, conv text, OUT id text, OUT appends integer, OUT last_message_at text)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
BEGIN
  SELECT m.id, m.appends, m.last_message_at INTO id, appends, last_message_at
  FROM messages m WHERE m.workspace_id = ws AND m.conversation_id = conv
  ORDER BY m.id DESC LIMIT 1;
END $$;

-- Waits for the conversation's append lock (transaction-scoped; appends to one conversation take
-- it one after another), then reads its newest message as above. Taken before the append has a
-- transaction id, so the later of two appends to one conversation gets the later id and a
-- conversation's message events are listed in the order they committed (0011_event_order.sql).
CREATE FUNCTION lock_for_append(ws text, conv text, OUT id text, OUT appends integer, OUT last_message_at text)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('conversations'), hashtext(ws || '/' || conv));
  SELECT n.id, n.appends, n.last_message_at INTO id, appends, last_message_at FROM newest_message(ws, conv) n;
END $$;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (12, 'conversation_head') ON CONFLICT (version) DO NOTHING;
