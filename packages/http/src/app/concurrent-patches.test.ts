/**
 * @module Concurrent PATCHes of one record over HTTP, on Redis, on a private Redis Cluster, on
 * PostgreSQL (with the server's pool size and statement deadline) and on PGlite
 * (issue: 200 concurrent PATCHes of one agent answered 18 × 503 when a compare-and-set loop gave up):
 * every PATCH answers 200, and each one's change is merged into the record as the previous one
 * stored it, so no field is lost. Versions are read back from the ETags (`ifMatchVersions`).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters, type PostgresAdapters } from '@parley/adapter-postgres';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from '@parley/adapter-postgres/testing';
import { redisAdapters } from '@parley/adapter-redis';
import type { Adapters } from '@parley/core';
import { startCluster, type RedisClusterProcesses } from '@parley/adapter-redis/testing';
import { ifMatchVersions, type EventType } from '@parley/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../test-support/harness.js';
import { SERVER_DATABASE_TIMEOUT_MS } from '../server/backend.js';
import {
  REDIS_URL,
  deletePrefix,
  describeIfAvailable,
  probeRedis,
  probeRedisBinaries,
  uniquePrefix,
} from '../test-support/redis.js';

const CONCURRENT = 200;

type Patch = Record<string, unknown>;
const agentPatch = (i: number): Patch =>
  [
    { name: `name ${i}` },
    { description: `description ${i}` },
    { systemPrompt: `prompt ${i}` },
    { temperature: i / 1000 },
    { maxTokens: i + 1 },
    { configuration: { i, list: [], empty: {} } },
  ][i % 6]!;
// One completes the conversation midway; metadata changes keep applying after it.
const conversationPatch = (i: number): Patch =>
  i === CONCURRENT / 2 ? { status: 'completed' } : { metadata: { i, nested: { list: [i] } } };
const webhookPatch = (i: number): Patch =>
  [
    { url: `https://example.com/hooks/${i}` },
    { events: i % 4 === 0 ? ['agent.created'] : ['message.sent', 'agent.deleted'] },
    { enabled: i % 4 === 1 },
  ][i % 3]!;

/**
 * Sends the PATCHes at once and checks that all answer 200 and that, in commit order (the version
 * in each ETag), every response is the previous one with its own fields set (`updatedAt` aside).
 */
async function patchConcurrently(
  h: Harness,
  path: string,
  initial: Patch,
  patchOf: (i: number) => Patch,
): Promise<void> {
  const id = String(initial['id']);
  const responses = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => h.call('PATCH', path, { json: patchOf(i) })),
  );
  const answered = await Promise.all(
    responses.map(async (response, i) => ({
      i,
      status: response.status,
      body: (await json(response)) as Patch,
      // Only a 200 carries an ETag: any other answer is reported by the status check below.
      version: response.status === 200 ? ifMatchVersions(response.headers.get('ETag') ?? '', id)?.[0] : undefined,
    })),
  );
  expect(answered.filter(({ status }) => status !== 200)).toEqual([]);
  answered.sort((a, b) => a.version! - b.version!);
  expect(answered.map(({ version }) => version)).toEqual(Array.from({ length: CONCURRENT }, (_, i) => i + 2));
  const withoutTime = ({ updatedAt: _updatedAt, ...rest }: Patch) => rest;
  let previous = initial;
  for (const { i, body } of answered) {
    expect(withoutTime(body), `PATCH ${i}`).toEqual(withoutTime({ ...previous, ...patchOf(i) }));
    previous = body;
  }
  expect(await json(await h.call('GET', path))).toEqual(previous);
}

/** How many events of `type` workspace `ws1` recorded. */
async function eventCount(h: Harness, type: EventType): Promise<number> {
  let count = 0;
  let after: string | undefined;
  for (;;) {
    const page = (await h.adapters.storage.events.list({ workspaceId: 'ws1' }, { type, after, limit: 100 }))!;
    count += page.events.length;
    if (!page.hasMore) return count;
    after = page.events.at(-1)!.id;
  }
}

function concurrentPatchTests(open: () => Promise<Harness>): void {
  it(`${CONCURRENT} concurrent PATCHes of one agent all answer 200 and no field is lost`, async () => {
    const h = await open();
    const agent = (await json(await h.call('POST', '/api/agents', { json: agentInput }))) as Patch;
    await patchConcurrently(h, `/api/agents/${agent['id']}`, agent, agentPatch);
    expect(await eventCount(h, 'agent.updated')).toBe(CONCURRENT);
  }, 60_000);

  it(`${CONCURRENT} concurrent PATCHes of one conversation all answer 200, no field is lost, and it completes once`, async () => {
    const h = await open();
    const agent = (await json(await h.call('POST', '/api/agents', { json: agentInput }))) as Patch;
    const conversation = (await json(
      await h.call('POST', '/api/conversations', { json: { agentId: agent['id'], userId: 'u1' } }),
    )) as Patch;
    await patchConcurrently(h, `/api/conversations/${conversation['id']}`, conversation, conversationPatch);
    expect(await eventCount(h, 'conversation.completed')).toBe(1);
  }, 60_000);

  it(`${CONCURRENT} concurrent PATCHes of one webhook endpoint all answer 200 and no field is lost`, async () => {
    const h = await open();
    const { secret: _secret, ...endpoint } = (await json(
      await h.call('POST', '/api/webhooks', { json: { url: 'https://example.com/hooks', events: ['agent.created'] } }),
    )) as Patch;
    await patchConcurrently(h, `/api/webhooks/${endpoint['id']}`, endpoint, webhookPatch);
  }, 60_000);
}

/** A harness whose records live in `redis` (keys, rate limits and queues in memory: not the point here). */
const onRedis = (redis: Adapters) => harness({}, { ...memoryAdapters(), storage: redis.storage });

describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis())('concurrent PATCHes on Redis', () => {
  let client: Redis | undefined;
  const prefixes: string[] = [];
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client!, prefix);
    await client?.quit();
  });
  concurrentPatchTests(() => {
    const prefix = uniquePrefix('patches');
    prefixes.push(prefix);
    return onRedis(redisAdapters({ client: client!, prefix }));
  });
});

describeIfAvailable('A private Redis Cluster (redis-server, redis-cli)', await probeRedisBinaries())(
  'concurrent PATCHes on Redis Cluster',
  () => {
    let cluster: RedisClusterProcesses | undefined;
    let adapters: Adapters | undefined;
    beforeAll(async () => {
      cluster = await startCluster();
      adapters = redisAdapters({ clusterNodes: cluster.nodes, prefix: 'parley-patches:' });
      await adapters.storage.ping();
    }, 60_000);
    afterAll(async () => {
      await adapters?.close();
      await cluster?.stop();
    }, 30_000);
    // The cluster is private and torn down afterwards: one prefix for all tests.
    concurrentPatchTests(() => onRedis(adapters!));
  },
);

describe('concurrent PATCHes in memory', () => {
  concurrentPatchTests(() => harness());
});

describeIfPostgres({ describe, it }, await probePostgres())('concurrent PATCHes on PostgreSQL', () => {
  let database: TestDatabase;
  let adapters: PostgresAdapters;
  beforeAll(async () => {
    database = await createTestDatabase();
    // As `parley serve` opens it (default pool of 10, its statement deadline), but waiting up to
    // 10 s rather than 1 s for a pooled connection: on a PostgreSQL busy with other test files the
    // 200 updates of one row have taken seconds, and a 503 from that wait is the server's answer
    // to overload, not the lost or refused update this file is about.
    adapters = postgresAdapters({
      connectionString: database.url,
      connectionTimeoutMs: 10_000,
      queryTimeoutMs: SERVER_DATABASE_TIMEOUT_MS,
      sweepIntervalMs: 0,
    });
    await adapters.ready();
  }, 60_000);
  afterAll(async () => {
    await adapters?.close();
    await database?.drop();
  });
  concurrentPatchTests(() => onRedis(adapters));
});

describe('concurrent PATCHes on PGlite', () => {
  let pglite: TestPglite;
  let adapters: PostgresAdapters;
  beforeAll(async () => {
    pglite = await createTestPglite();
    adapters = postgresAdapters({ pglite: pglite.db, sweepIntervalMs: 0 });
    await adapters.ready(60_000);
  }, 120_000);
  afterAll(async () => {
    await adapters?.close();
    await pglite?.close();
  });
  concurrentPatchTests(() => onRedis(adapters));
});
