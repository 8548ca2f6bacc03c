/**
 * @module Hand-written peers: what a team would write instead of Parley, measured in the same run.
 *
 * `PEER=bare`: Hono returning a JSON object (GET /json) and validating a body with valibot into a
 * Map (POST /json) — the floor of any Hono route. `PEER=map`: Hono over Maps with a bearer check
 * (SHA-256 of the key looked up in a Map) and a per-workspace request counter, for the same routes
 * as Parley; `PEER=map-fields`: that peer, whose GET agent also sends the header fields Parley's
 * sends (`X-Request-Id`, `RateLimit-Policy`, `RateLimit`, `ETag`); `PEER=map-turn-end`: the Map
 * peer with its responses written at the end of each turn of the event loop, as Parley's server
 * writes them (packages/http/src/server/serve.ts), to show what that alone is worth. `PEER=ioredis`: the same over
 * Redis, each route one pipeline (one round trip). `PEER=pg`: the same over PostgreSQL
 * (`DATABASE_URL`) with node-postgres, each route one statement (see {@link startPgPeer}). Prints one
 * JSON line `{port, key, agentId, conversationId, conversationIds}` once listening
 * (`conversationIds`: 100 conversations of the workspace, the first being `conversationId`).
 */
import { serve } from '@hono/node-server';
import { createHash, randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { Redis } from 'ioredis';
import pg from 'pg';
import * as v from 'valibot';

const peer = process.env.PEER ?? 'bare';
const KEY = 'bench-peer-key-0123456789abcdef';
const WORKSPACE = 'bench';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const MessageSchema = v.strictObject({
  role: v.picklist(['user', 'assistant', 'system']),
  content: v.pipe(v.string(), v.minLength(1), v.maxLength(100_000)),
  metadata: v.optional(v.record(v.string(), v.unknown())),
});

interface Message {
  id: string;
  conversationId: string;
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: string;
}

const app = new Hono();
/** Run before exit on SIGTERM (the Redis peer deletes its keys). */
const cleanups: Array<() => Promise<unknown>> = [];
const seeded: { agentId: string; conversationId: string; conversationIds?: string[] } = {
  agentId: `agt_${randomUUID()}`,
  conversationId: `conv_${randomUUID()}`,
};
const agent = {
  id: seeded.agentId,
  name: 'Bench',
  description: 'A benchmark agent',
  model: 'modelA-4',
  systemPrompt: null,
  temperature: null,
  maxTokens: null,
  configuration: {},
  tools: [],
  maxSteps: 8,
  autoReply: true,
  status: 'active',
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
};
const newMessage = (conversationId: string, body: v.InferOutput<typeof MessageSchema>): Message => ({
  id: `msg_${Date.now().toString(36)}${randomUUID()}`,
  conversationId,
  role: body.role,
  content: body.content,
  metadata: body.metadata ?? {},
  createdAt: new Date().toISOString(),
});

if (peer === 'bare') {
  const store = new Map<string, unknown>();
  app.get('/json', (c) => c.json(agent));
  app.post('/json', async (c) => {
    const result = v.safeParse(MessageSchema, await c.req.json());
    if (!result.success) return c.json({ error: 'invalid' }, 400);
    const message = newMessage('c', result.output);
    store.set(message.id, message);
    return c.json(message, 201);
  });
} else if (peer === 'map' || peer === 'map-fields' || peer === 'map-turn-end') {
  const keys = new Map([[sha256(KEY), WORKSPACE]]);
  const counters = new Map<string, number>();
  const agents = new Map([[agent.id, agent]]);
  for (let i = 0; i < 30; i += 1) agents.set(`agt_${i}`, { ...agent, id: `agt_${i}` });
  const histories = new Map<string, Message[]>([[seeded.conversationId, []]]);
  for (let i = 0; i < 100; i += 1)
    histories
      .get(seeded.conversationId)!
      .push(newMessage(seeded.conversationId, { role: 'user', content: `message ${i}` }));
  const auth = (c: Context): string | null => {
    const header = c.req.header('authorization');
    const workspace = header?.startsWith('Bearer ') ? keys.get(sha256(header.slice(7))) : undefined;
    if (!workspace) return null;
    counters.set(workspace, (counters.get(workspace) ?? 0) + 1);
    return workspace;
  };
  // PEER=map-fields: GET agent answers with the header fields Parley's does (a request id, the
  // rate-limit policy and state, an entity tag), built as Parley builds them: one plain record
  // handed to the Response. The rate-limit state is read off the counter, not decided by a GCRA.
  const entityTags = new Map(
    [...agents.values()].map((record) => [
      record.id,
      `"${createHash('sha256').update(`${record.id}:1`).digest('base64url').slice(0, 22)}"`,
    ]),
  );
  const POLICY = '"enterprise";q=3600000;w=3600';
  app.get('/api/agents/:id', (c) => {
    const workspace = auth(c);
    if (!workspace) return c.json({ error: 'unauthorized' }, 401);
    const found = agents.get(c.req.param('id'));
    if (!found) return c.json({ error: 'not_found' }, 404);
    if (peer !== 'map-fields') return c.json(found);
    const used = counters.get(workspace)!;
    const headers = {
      'x-request-id': randomUUID(),
      'ratelimit-policy': POLICY,
      ratelimit: `"enterprise";r=${3_600_000 - (used % 3_600_000)};t=${Math.ceil((used % 3_600_000) / 1000)}`,
      etag: entityTags.get(found.id)!,
      'content-type': 'application/json',
    };
    return new Response(JSON.stringify(found), { status: 200, headers });
  });
  app.get('/api/agents', (c) => {
    if (!auth(c)) return c.json({ error: 'unauthorized' }, 401);
    const limit = Number(c.req.query('limit') ?? 20);
    const all = [...agents.values()];
    return c.json({ agents: all.slice(0, limit), total: all.length, page: 1, limit });
  });
  app.post('/api/conversations/:id/messages', async (c) => {
    if (!auth(c)) return c.json({ error: 'unauthorized' }, 401);
    const history = histories.get(c.req.param('id'));
    if (!history) return c.json({ error: 'not_found' }, 404);
    const result = v.safeParse(MessageSchema, await c.req.json());
    if (!result.success) return c.json({ error: 'invalid' }, 400);
    const message = newMessage(c.req.param('id'), result.output);
    history.push(message);
    return c.json(message, 201);
  });
  app.get('/api/conversations/:id/messages', (c) => {
    if (!auth(c)) return c.json({ error: 'unauthorized' }, 401);
    const history = histories.get(c.req.param('id'));
    if (!history) return c.json({ error: 'not_found' }, 404);
    const limit = Number(c.req.query('limit') ?? 50);
    return c.json({ messages: history.slice(-limit), hasMore: history.length > limit });
  });
} else if (peer === 'ioredis') {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // A page is one script (ZRANGE + HMGET) so the route stays one round trip, like Parley's.
  redis.defineCommand('page', {
    numberOfKeys: 2,
    lua: `local ids = redis.call('ZRANGE', KEYS[1], '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, ARGV[1])
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(ids))`,
  });
  const page = (pipeline: ReturnType<Redis['pipeline']>, key: string, hash: string, limit: number) =>
    (pipeline as unknown as { page(k1: string, k2: string, limit: number): typeof pipeline }).page(key, hash, limit);
  const prefix = `bench-peer:${randomUUID().slice(0, 8)}:`;
  await redis.hset(`${prefix}keys`, sha256(KEY), WORKSPACE);
  await redis.hset(`${prefix}agents`, agent.id, JSON.stringify(agent));
  const history = `${prefix}msgs:${seeded.conversationId}`;
  const pipeline = redis.pipeline();
  for (let i = 0; i < 100; i += 1) {
    const message = newMessage(seeded.conversationId, { role: 'user', content: `message ${i}` });
    pipeline.zadd(history, 0, message.id).hset(`${prefix}msg`, message.id, JSON.stringify(message));
  }
  await pipeline.exec();
  const bearer = (c: Context) => {
    const header = c.req.header('authorization');
    return header?.startsWith('Bearer ') ? sha256(header.slice(7)) : '';
  };
  app.get('/api/agents/:id', async (c) => {
    // One pipeline: key lookup, counter, record.
    const replies = await redis
      .pipeline()
      .hget(`${prefix}keys`, bearer(c))
      .incr(`${prefix}count`)
      .hget(`${prefix}agents`, c.req.param('id'))
      .exec();
    if (!replies?.[0]?.[1]) return c.json({ error: 'unauthorized' }, 401);
    const raw = replies[2]?.[1] as string | null;
    return raw ? c.body(raw, 200, { 'content-type': 'application/json' }) : c.json({ error: 'not_found' }, 404);
  });
  app.post('/api/conversations/:id/messages', async (c) => {
    const result = v.safeParse(MessageSchema, await c.req.json());
    if (!result.success) return c.json({ error: 'invalid' }, 400);
    const message = newMessage(c.req.param('id'), result.output);
    const json = JSON.stringify(message);
    const replies = await redis
      .pipeline()
      .hget(`${prefix}keys`, bearer(c))
      .incr(`${prefix}count`)
      .zadd(history, 0, message.id)
      .hset(`${prefix}msg`, message.id, json)
      .exec();
    if (!replies?.[0]?.[1]) return c.json({ error: 'unauthorized' }, 401);
    return c.body(json, 201, { 'content-type': 'application/json' });
  });
  app.get('/api/conversations/:id/messages', async (c) => {
    const limit = Number(c.req.query('limit') ?? 50);
    const replies = await page(
      redis.pipeline().hget(`${prefix}keys`, bearer(c)).incr(`${prefix}count`),
      history,
      `${prefix}msg`,
      limit,
    ).exec();
    if (!replies?.[0]?.[1]) return c.json({ error: 'unauthorized' }, 401);
    const rows = replies[2]?.[1] as string[];
    return c.body(`{"messages":[${rows.reverse().join(',')}],"hasMore":false}`, 200, {
      'content-type': 'application/json',
    });
  });
  cleanups.push(() =>
    redis
      .del(`${prefix}keys`, `${prefix}agents`, history, `${prefix}msg`, `${prefix}count`)
      .finally(() => redis.disconnect()),
  );
} else if (peer === 'pg') {
  await startPgPeer(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
}

/**
 * `PEER=pg`: what a team would write over PostgreSQL with node-postgres — a pool of 10 connections,
 * as Parley's own (`poolSize`, default 10, in @parley/adapter-postgres), and tables shaped like
 * Parley's (docs/storage.md): records kept whole as JSON beside the columns queries use, ids
 * compared bytewise, messages keyed by workspace, conversation and id, with the same foreign key.
 * Each route is ONE statement, the bearer key's SHA-256 looked up inside it:
 *
 * - `GET /api/agents/:id`: one SELECT (401 without a known key, 404 without the agent);
 * - `POST /api/conversations/:id/messages`: one INSERT whose CTE finds the key and the conversation,
 *   active and of the key's workspace; 201 with the message (`{id, conversationId, content, role,
 *   metadata, createdAt}`, as Parley's, docs/api.md), 404 when either is missing. No events, no
 *   outbox, no conversation `lastMessageAt`, no rate limit.
 *
 * The tables are created when missing and seeded once with fixed ids (an agent, 100 conversations
 * of one workspace, 100 messages in the first): a restart reuses them, as Parley's targets reuse
 * their store, and the appended messages stay.
 */
async function startPgPeer(connectionString: string): Promise<void> {
  const pool = new pg.Pool({ connectionString, max: 10, application_name: 'bench-pg-peer' });
  pool.on('error', () => {}); // an idle connection dropped: the next query reconnects
  await pool.query(`
    CREATE TABLE IF NOT EXISTS peer_api_keys (
      hash         text COLLATE "C" PRIMARY KEY,
      workspace_id text COLLATE "C" NOT NULL
    );
    CREATE TABLE IF NOT EXISTS peer_agents (
      workspace_id text COLLATE "C" NOT NULL,
      id           text COLLATE "C" NOT NULL,
      data         jsonb NOT NULL,
      PRIMARY KEY (workspace_id, id)
    );
    CREATE TABLE IF NOT EXISTS peer_conversations (
      workspace_id text COLLATE "C" NOT NULL,
      id           text COLLATE "C" NOT NULL,
      agent_id     text COLLATE "C" NOT NULL,
      status       text NOT NULL,
      data         jsonb NOT NULL,
      PRIMARY KEY (workspace_id, id),
      FOREIGN KEY (workspace_id, agent_id) REFERENCES peer_agents (workspace_id, id) ON DELETE CASCADE
    );
    CREATE TABLE IF NOT EXISTS peer_messages (
      workspace_id    text COLLATE "C" NOT NULL,
      conversation_id text COLLATE "C" NOT NULL,
      id              text COLLATE "C" NOT NULL,
      data            json NOT NULL,
      PRIMARY KEY (workspace_id, conversation_id, id),
      FOREIGN KEY (workspace_id, conversation_id) REFERENCES peer_conversations (workspace_id, id) ON DELETE CASCADE
    );`);
  seeded.agentId = 'agt_pgpeer';
  seeded.conversationIds = Array.from({ length: 100 }, (_, i) => `conv_pgpeer_${String(i).padStart(3, '0')}`);
  seeded.conversationId = seeded.conversationIds[0]!;
  const seededBefore = await pool.query('SELECT 1 FROM peer_api_keys WHERE hash = $1', [sha256(KEY)]);
  if (seededBefore.rowCount === 0) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO peer_agents (workspace_id, id, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [WORKSPACE, seeded.agentId, { ...agent, id: seeded.agentId }],
      );
      const now = new Date().toISOString();
      for (const id of seeded.conversationIds)
        await client.query(
          `INSERT INTO peer_conversations (workspace_id, id, agent_id, status, data) VALUES ($1, $2, $3, 'active', $4) ON CONFLICT DO NOTHING`,
          [
            WORKSPACE,
            id,
            seeded.agentId,
            {
              id,
              agentId: seeded.agentId,
              userId: null,
              metadata: {},
              status: 'active',
              createdAt: now,
              updatedAt: now,
            },
          ],
        );
      for (let i = 0; i < 100; i += 1) {
        const message = newMessage(seeded.conversationId, { role: 'user', content: `message ${i}` });
        await client.query(
          'INSERT INTO peer_messages (workspace_id, conversation_id, id, data) VALUES ($1, $2, $3, $4)',
          [WORKSPACE, seeded.conversationId, message.id, JSON.stringify(message)],
        );
      }
      // The key last: its row says the seeding is complete.
      await client.query('INSERT INTO peer_api_keys (hash, workspace_id) VALUES ($1, $2)', [sha256(KEY), WORKSPACE]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
  const bearer = (c: Context) => {
    const header = c.req.header('authorization');
    return header?.startsWith('Bearer ') ? sha256(header.slice(7)) : '';
  };
  app.get('/api/agents/:id', async (c) => {
    // One SELECT: the key (no row: unknown) and the agent of its workspace (null: not found).
    const { rows } = await pool.query<{ data: string | null }>(
      `SELECT a.data::text AS data FROM peer_api_keys k
         LEFT JOIN peer_agents a ON a.workspace_id = k.workspace_id AND a.id = $2
        WHERE k.hash = $1`,
      [bearer(c), c.req.param('id')],
    );
    if (rows.length === 0) return c.json({ error: 'unauthorized' }, 401);
    const raw = rows[0]!.data;
    return raw ? c.body(raw, 200, { 'content-type': 'application/json' }) : c.json({ error: 'not_found' }, 404);
  });
  app.post('/api/conversations/:id/messages', async (c) => {
    const result = v.safeParse(MessageSchema, await c.req.json());
    if (!result.success) return c.json({ error: 'invalid' }, 400);
    const id = c.req.param('id');
    const message = newMessage(id, result.output);
    const json = JSON.stringify({
      id: message.id,
      conversationId: message.conversationId,
      content: message.content,
      role: message.role,
      metadata: message.metadata,
      createdAt: message.createdAt,
    });
    // One INSERT: its CTE finds the key's workspace and the conversation, active, in it; no row, no insert.
    const { rowCount } = await pool.query(
      `WITH target AS (
         SELECT c.workspace_id, c.id FROM peer_api_keys k
           JOIN peer_conversations c ON c.workspace_id = k.workspace_id AND c.id = $2 AND c.status = 'active'
          WHERE k.hash = $1
       )
       INSERT INTO peer_messages (workspace_id, conversation_id, id, data)
       SELECT workspace_id, id, $3, $4::json FROM target`,
      [bearer(c), id, message.id, json],
    );
    if (rowCount === 0) return c.json({ error: 'not_found' }, 404);
    return c.body(json, 201, { 'content-type': 'application/json' });
  });
  cleanups.push(() => pool.end());
}

/** `fetch`, whose responses are handed over at the end of the turn they became ready in, together (serve.ts's `atTurnEnd`). */
function writingAtTurnEnd(fetch: typeof app.fetch): typeof app.fetch {
  let pending: Array<() => void> = [];
  const writePending = () => {
    const writes = pending;
    pending = [];
    for (const write of writes) write();
  };
  return (...args) =>
    Promise.resolve(fetch(...args)).then(
      (response) =>
        new Promise<Response>((resolve) => {
          if (pending.push(() => resolve(response)) === 1) setImmediate(writePending);
        }),
    );
}

const server = serve(
  { fetch: peer === 'map-turn-end' ? writingAtTurnEnd(app.fetch) : app.fetch, port: 0, hostname: '127.0.0.1' },
  (info) => {
    process.stdout.write(`${JSON.stringify({ port: info.port, key: KEY, ...seeded })}\n`);
  },
);
process.on('SIGTERM', () => {
  server.close();
  void Promise.allSettled(cleanups.map((cleanup) => cleanup())).then(() => process.exit(0));
});
