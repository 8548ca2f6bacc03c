-- 0008_reply_cancel: stopping a reply (docs/replies-and-streams.md#stopping-a-reply).
--
-- `cancelled` marks a conversation's head job whose reply was cancelled while a worker held its
-- lease: the row stays until that worker acks it (so a reply asked for afterwards still waits
-- for the stopped one to be stored), and a worker that leases it after the lease ended acks it
-- without making it. The cancel that sets it deletes the conversation's other rows in the same
-- statement.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
ALTER TABLE reply_jobs ADD COLUMN cancelled boolean NOT NULL DEFAULT false;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (8, 'reply_cancel') ON CONFLICT (version) DO NOTHING;
