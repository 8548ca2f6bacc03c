/**
 * @module An agent's `configuration` is the caller's and Parley's own settings are top-level agent
 * fields (docs/api.md#resources), on memory, Redis, PostgreSQL and PGlite (issue: a configuration
 * `{"tools": ["search"], "depth": 2}` was refused as tool definitions on every backend).
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
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../test-support/harness.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';

const searchTool = { name: 'search', description: 'Searches docs.', parameters: { type: 'object' }, kind: 'client' };
const lookupTool = { ...searchTool, name: 'lookup', description: 'Looks an order up.', requiresApproval: true };

function agentSettingsTests(open: () => Promise<Harness>): void {
  it('PATCH stores any JSON object as configuration and returns it unchanged, keys named as settings too', async () => {
    const h = await open();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const configuration = { tools: ['search'], depth: 2, maxSteps: 'many', autoReply: { when: 'always' } };
    const patched = await h.call('PATCH', `/api/agents/${agent.id}`, { json: { configuration } });
    expect(patched.status).toBe(200);
    const body = await json(patched);
    expect(body.configuration).toEqual(configuration);
    // Parley reads none of it: its own settings keep their defaults.
    expect(body).toMatchObject({ tools: [], maxSteps: 8, autoReply: true });
    expect(await json(await h.call('GET', `/api/agents/${agent.id}`))).toEqual(body);
  });

  it('tools, maxSteps and autoReply are top-level: defaults, set on create and PATCH, lists replaced', async () => {
    const h = await open();
    const plain = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    expect(plain).toMatchObject({ configuration: {}, tools: [], maxSteps: 8, autoReply: true });

    const settings = { tools: [searchTool, lookupTool], maxSteps: 3, autoReply: false, configuration: { depth: 2 } };
    const created = await h.call('POST', '/api/agents', { json: { ...agentInput, ...settings } });
    expect(created.status).toBe(201);
    const agent = await json(created);
    expect(agent).toMatchObject(settings);

    const patch = { tools: [lookupTool], autoReply: true };
    const patched = await json(await h.call('PATCH', `/api/agents/${agent.id}`, { json: patch }));
    expect(patched).toMatchObject({ ...settings, ...patch });
    const { agents } = await json(await h.call('GET', '/api/agents'));
    expect(agents.find((each: { id: string }) => each.id === agent.id)).toEqual(patched);
  });

  it('an invalid tool is 400 at its top-level path and changes nothing', async () => {
    const h = await open();
    const agent = await json(await h.call('POST', '/api/agents', { json: { ...agentInput, tools: [searchTool] } }));
    const refused = await h.call('PATCH', `/api/agents/${agent.id}`, { json: { tools: ['search'], maxSteps: 33 } });
    expect(refused.status).toBe(400);
    const { error } = await json(refused);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['maxSteps', 'tools.0']);
    expect(await json(await h.call('GET', `/api/agents/${agent.id}`))).toEqual(agent);
  });
}

/** A harness whose records live in `adapters` (keys, rate limits and queues in memory: not the point here). */
const on = (adapters: Adapters) => harness({}, { ...memoryAdapters(), storage: adapters.storage });

describe('agent settings in memory', () => {
  agentSettingsTests(() => harness());
});

describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis())('agent settings on Redis', () => {
  let client: Redis | undefined;
  const prefixes: string[] = [];
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client!, prefix);
    await client?.quit();
  });
  agentSettingsTests(() => {
    const prefix = uniquePrefix('settings');
    prefixes.push(prefix);
    return on(redisAdapters({ client: client!, prefix }));
  });
});

describeIfPostgres({ describe, it }, await probePostgres())('agent settings on PostgreSQL', () => {
  let database: TestDatabase;
  let adapters: PostgresAdapters;
  beforeAll(async () => {
    database = await createTestDatabase();
    adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    await adapters.ready();
  }, 60_000);
  afterAll(async () => {
    await adapters?.close();
    await database?.drop();
  });
  agentSettingsTests(() => on(adapters));
});

describe('agent settings on PGlite', () => {
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
  agentSettingsTests(() => on(adapters));
});
