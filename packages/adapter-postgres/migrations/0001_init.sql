-- Parley 0001: records, the event log and its outbox, the deliveries log, plants, API keys, rate
-- limits and idempotency records (docs/storage.md).
--
-- Everything lives in one schema, chosen by the caller's search_path: the runner sets it to
-- PARLEY_SCHEMA (default "parley"), so no name here is schema-qualified. To run by hand:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -1 \
--     -c 'CREATE SCHEMA IF NOT EXISTS parley; SET search_path TO parley' -f 0001_init.sql
--
-- Records are kept whole (`data`, the record as the API returns it); the columns beside it are
-- what queries filter, join and sort on. Agents, conversations and webhook endpoints carry a
-- `version` (1 on insert, +1 per write that changes what the API returns, a message append
-- included): If-Match is decided on it and entity tags are derived from it. Append-only records (messages, events, delivery attempts)
-- are `json`, kept as written (key order included, no re-encoding on insert); records changed in
-- place are `jsonb`. Ids are ULID-based text compared bytewise
-- (COLLATE "C"), so "newest first" is descending id order whatever the database's locale.

CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agents (
  workspace_id text COLLATE "C" NOT NULL,
  id           text COLLATE "C" NOT NULL,
  status       text NOT NULL,
  data         jsonb NOT NULL,
  version      integer NOT NULL DEFAULT 1,
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX agents_by_status ON agents (workspace_id, status, id);

CREATE TABLE conversations (
  workspace_id text COLLATE "C" NOT NULL,
  id           text COLLATE "C" NOT NULL,
  agent_id     text COLLATE "C" NOT NULL,
  user_id      text,
  status       text NOT NULL,
  data         jsonb NOT NULL,
  version      integer NOT NULL DEFAULT 1,
  PRIMARY KEY (workspace_id, id),
  -- Deleting an agent deletes its conversations (and, below, their messages).
  FOREIGN KEY (workspace_id, agent_id) REFERENCES agents (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX conversations_by_agent ON conversations (workspace_id, agent_id, id);
CREATE INDEX conversations_by_user ON conversations (workspace_id, user_id, id);
CREATE INDEX conversations_by_status ON conversations (workspace_id, status, id);

-- History pages are keyset reads of this primary key (WHERE … AND id < $cursor ORDER BY id DESC
-- LIMIT n): an index range scan whose cost does not grow with the conversation.
CREATE TABLE messages (
  workspace_id    text COLLATE "C" NOT NULL,
  conversation_id text COLLATE "C" NOT NULL,
  id              text COLLATE "C" NOT NULL,
  data            json NOT NULL,
  PRIMARY KEY (workspace_id, conversation_id, id),
  FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE webhook_endpoints (
  workspace_id text COLLATE "C" NOT NULL,
  id           text COLLATE "C" NOT NULL,
  data         jsonb NOT NULL,
  version      integer NOT NULL DEFAULT 1,
  PRIMARY KEY (workspace_id, id)
);

CREATE TABLE plants (
  workspace_id text COLLATE "C" NOT NULL,
  id           bigint NOT NULL,
  name         text NOT NULL,
  tag          text,
  PRIMARY KEY (workspace_id, id)
);
-- Workspaces whose plants were seeded once (later seeds do nothing, even after deletes).
CREATE TABLE plant_seeds (
  workspace_id text COLLATE "C" PRIMARY KEY
);

-- The event log. `seq` is the workspace's commit order: each write takes the next number from its
-- workspace's row in event_counters, and that row stays locked until the write commits, so a
-- later number always belongs to a later commit and a reader paging by seq never skips an event
-- that commits late (an id assigned earlier is no guide: ids are made before the write).
CREATE TABLE event_counters (
  workspace_id text COLLATE "C" PRIMARY KEY,
  last_seq     bigint NOT NULL
);
CREATE TABLE events (
  workspace_id text COLLATE "C" NOT NULL,
  seq          bigint NOT NULL,
  id           text COLLATE "C" NOT NULL,
  type         text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  event        json NOT NULL,
  PRIMARY KEY (workspace_id, seq)
);
CREATE UNIQUE INDEX events_by_id ON events (workspace_id, id);
CREATE INDEX events_by_type ON events (workspace_id, type, seq);
CREATE INDEX events_by_age ON events (recorded_at);

-- The outbox: events recorded and not yet handed on, deleted when acknowledged. One lease row per
-- workspace: a taker claims it with FOR UPDATE SKIP LOCKED and holds it until `lease_until`.
CREATE TABLE outbox (
  workspace_id text COLLATE "C" NOT NULL,
  seq          bigint NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, seq)
);
CREATE TABLE outbox_leases (
  workspace_id text COLLATE "C" PRIMARY KEY,
  receipt      text,
  lease_until  timestamptz,
  served_at    timestamptz
);

-- Each webhook endpoint's log of delivery attempts; removed with its endpoint.
CREATE TABLE deliveries (
  workspace_id text COLLATE "C" NOT NULL,
  endpoint_id  text COLLATE "C" NOT NULL,
  id           text COLLATE "C" NOT NULL,
  event_id     text COLLATE "C" NOT NULL,
  succeeded    boolean NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  data         json NOT NULL,
  PRIMARY KEY (workspace_id, endpoint_id, id),
  FOREIGN KEY (workspace_id, endpoint_id) REFERENCES webhook_endpoints (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_by_event ON deliveries (workspace_id, endpoint_id, event_id);
CREATE INDEX deliveries_by_age ON deliveries (recorded_at);

-- API keys: only the SHA-256 hash (hex) of each key is stored.
CREATE TABLE api_keys (
  hash         text COLLATE "C" PRIMARY KEY,
  key_id       text COLLATE "C" NOT NULL UNIQUE,
  workspace_id text COLLATE "C" NOT NULL,
  created_at   text COLLATE "C" NOT NULL,
  data         jsonb NOT NULL
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);

-- GCRA state: one theoretical arrival time (ms since the epoch) per key, and whether the last hit
-- was admitted. A TAT in the past means the same as no row; the sweep deletes such rows.
CREATE TABLE rate_limits (
  key     text COLLATE "C" PRIMARY KEY,
  tat     bigint NOT NULL,
  allowed boolean NOT NULL
);
CREATE INDEX rate_limits_by_tat ON rate_limits (tat);

-- Idempotency-Key claims and kept responses, until `expires_at`.
CREATE TABLE idempotency_keys (
  workspace_id text COLLATE "C" NOT NULL,
  key          text COLLATE "C" NOT NULL,
  fingerprint  text NOT NULL,
  token        text NOT NULL,
  response     jsonb,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

INSERT INTO schema_migrations (version, name) VALUES (1, 'init') ON CONFLICT (version) DO NOTHING;
