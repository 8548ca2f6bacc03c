-- 0007_reply_routes: reply jobs are leased only by workers that have their agent's model
-- (docs/replies-and-streams.md, docs/postgres-queues.md).
--
-- `model` is the job's agent model ('' for the jobs queued before this migration, which any worker
-- leases). `head` marks each conversation's oldest row, the only one that can be leased, so a
-- claim reads the heads of the models it claims in request order from a partial index and never
-- walks the rows queued behind them or those of other models. Two triggers keep `head` right for
-- every writer: a new row is its conversation's head when the conversation has no other row (an
-- enqueue holds the conversation's advisory lock, and a trigger's query sees what committed
-- before it took the lock), and deleting a head makes the conversation's next row the head.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley"); SET search_path FROM CURRENT keeps that schema
-- for the functions' bodies whatever the caller's search_path is.
ALTER TABLE reply_jobs ADD COLUMN model text NOT NULL DEFAULT '';
ALTER TABLE reply_jobs ADD COLUMN head boolean NOT NULL DEFAULT false;

UPDATE reply_jobs SET head = true
WHERE seq IN (SELECT min(seq) FROM reply_jobs GROUP BY workspace_id, conversation_id);

CREATE FUNCTION reply_jobs_mark_head() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  NEW.head := NOT EXISTS (
    SELECT 1 FROM reply_jobs WHERE workspace_id = NEW.workspace_id AND conversation_id = NEW.conversation_id
  );
  RETURN NEW;
END;
$$;

CREATE FUNCTION reply_jobs_next_head() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  UPDATE reply_jobs SET head = true
  WHERE seq = (
    SELECT min(seq) FROM reply_jobs WHERE workspace_id = OLD.workspace_id AND conversation_id = OLD.conversation_id
  );
  RETURN NULL;
END;
$$;

CREATE TRIGGER reply_jobs_mark_head BEFORE INSERT ON reply_jobs
FOR EACH ROW EXECUTE FUNCTION reply_jobs_mark_head();

CREATE TRIGGER reply_jobs_next_head AFTER DELETE ON reply_jobs
FOR EACH ROW WHEN (OLD.head) EXECUTE FUNCTION reply_jobs_next_head();

-- The claim of each model: that model's heads, oldest request first.
CREATE INDEX reply_jobs_ready ON reply_jobs (model, requested_at, seq) WHERE head;
-- The claim of requests waiting past the give-up time, whatever their model: heads, oldest first.
-- Keyed on requested_at as float8 (exact for ms timestamps) so that only that claim can use it: the
-- planner could otherwise walk it for a model's claim too, filtering out every other model's heads.
CREATE INDEX reply_jobs_overdue ON reply_jobs ((requested_at::float8), seq) WHERE head;
DROP INDEX reply_jobs_requested;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (7, 'reply_routes') ON CONFLICT (version) DO NOTHING;
