-- 0002_queues: the delivery queue, the reply queue and the conversation feed's polling table.
--
-- Every table here holds work in flight only: a job row is deleted when a worker acknowledges it
-- (or replaces it with its next attempt), and feed rows are deleted in bounded batches after a
-- minute. So these tables stay as small as the backlog, and autovacuum (tuned per table below,
-- because the rows churn) keeps up. Workers never hold a transaction open while they work: a job
-- is claimed by one short UPDATE that sets `leased_until`, so no long transaction pins the xmin
-- horizon and bloats the tables (the classic SKIP LOCKED queue failure).
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").

-- Webhook delivery jobs (docs/postgres-queues.md). One row per attempt waiting or in flight.
--   lane 'first': attempts to make now (first attempts, manual retries, recovery);
--   lane 'retry': scheduled retries, ready once ready_at has passed.
-- A job is ready when ready_at <= now() and it holds no live lease (leased_until null or past).
-- Each lane has its own partial index, so leasing the first lane never reads a retry row.
-- leased_until is in no index: taking and renewing a lease is a HOT update (fillfactor 80).
CREATE TABLE delivery_jobs (
  seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  lane         text        NOT NULL CHECK (lane IN ('first', 'retry')),
  -- When the job becomes ready: when it was enqueued (first lane) or its due time (retry lane).
  ready_at     timestamptz NOT NULL,
  -- End of the current lease; null while waiting. A past value is a dead worker's lease.
  leased_until timestamptz,
  -- The DeliveryJob as JSON text (kept byte for byte: json/jsonb would reject a lone surrogate).
  job          text        NOT NULL
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02);

CREATE INDEX delivery_jobs_first_ready ON delivery_jobs (ready_at, seq) WHERE lane = 'first';
CREATE INDEX delivery_jobs_retry_ready ON delivery_jobs (ready_at, seq) WHERE lane = 'retry';

-- Agent reply requests: a FIFO per conversation (docs/postgres-queues.md). Only a conversation's
-- head (its lowest seq) can be leased, and only while it holds no live lease. Enqueues of one
-- conversation are serialized by a transaction-scoped advisory lock taken before seq is drawn, so
-- seq order within a conversation is commit order and a later request never becomes visible
-- ahead of an earlier one.
CREATE TABLE reply_jobs (
  seq             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id    text        NOT NULL,
  conversation_id text        NOT NULL,
  -- ReplyJob.requestedAt, ms since the epoch: conversations are served oldest request first.
  requested_at    bigint      NOT NULL,
  leased_until    timestamptz,
  -- The current lease's token (part of the receipt); null while waiting.
  lease_token     uuid,
  -- The ReplyJob as JSON text.
  job             text        NOT NULL
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02);

CREATE INDEX reply_jobs_conversation ON reply_jobs (workspace_id, conversation_id, seq);
CREATE INDEX reply_jobs_requested ON reply_jobs (requested_at, seq);

-- Conversation feed signals, for processes that cannot LISTEN (behind a transaction-mode pooler
-- without DATABASE_LISTEN_URL): they poll this table instead. Unlogged (a signal is a hint and may
-- be lost in a crash); rows older than a minute are deleted in bounded batches.
CREATE UNLOGGED TABLE feed_signals (
  seq        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The conversation's channel name (see conversation-feed.ts).
  channel    text        NOT NULL,
  signal     text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02);

CREATE INDEX feed_signals_channel ON feed_signals (channel, seq);

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (2, 'queues') ON CONFLICT (version) DO NOTHING;
