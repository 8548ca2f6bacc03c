/**
 * @module No secret or content in any log line: every route runs with a planted webhook secret,
 * system prompt, message text and more, at `LOG_LEVEL=debug`, on memory and on a private Redis
 * that then refuses writes (`OOM` under `maxmemory`, `NOPERM` through an ACL user), hangs
 * (SIGSTOP) and dies (SIGKILL). Clients get 503 for the Redis faults, and no captured log line
 * contains a planted string or the API key.
 */
import { MemoryDeliveryQueue, memoryAdapters } from '@parley/adapter-memory';
import { redisAdapters } from '@parley/adapter-redis';
import type { Adapters } from '@parley/core';
import { StaticHostResolver } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { SERVER_REDIS_TIMEOUT_MS } from './backend.js';
import { createServerCore } from './start.js';
import { captureLogs } from '../test-support/harness.js';
import {
  describeIfAvailable,
  freeRedisPort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '../test-support/redis.js';

/** Strings that must never reach a log line. Each is unique enough not to occur by chance. */
const PLANTED = {
  secret: 'planted-webhook-secret-5f1c9a7e2b',
  systemPrompt: 'planted system prompt 8d3e1f6a0c',
  description: 'planted description 7a2b9c4d1e',
  message: 'planted message text 3c8f2a9e6d',
  metadata: 'planted-metadata-value-1b7d4e9f2a',
  plant: 'planted plant name 6e0a3d8c5b',
  userId: 'planted-user-2f9c6b1a8e',
  toolsSecret: 'planted-tools-secret-9a4c2e7f1b',
  toolDescription: 'planted tool description 4e1b8d2c7a',
} as const;

/**
 * An app at debug level over `adapters` and every log line it writes, calling with `given` or a
 * newly issued key of workspace `acme`.
 */
async function logged(adapters: Adapters, given?: string) {
  const { lines, logger } = captureLogs('debug');
  const core = createServerCore(
    adapters,
    { rateLimitFailure: 'open', webhookAllowPrivateUrls: false },
    logger,
    undefined,
    { hostResolver: new StaticHostResolver() },
  );
  const key =
    given ?? (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'enterprise', limitPerHour: 100_000 })).key;
  const app = createApp(core, { logger });
  const call = async (method: string, path: string, json?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    // Every create also goes through the idempotency store, which keeps the response (secrets included).
    if (method === 'POST') headers['Idempotency-Key'] = randomUUID();
    const response = await app.request(path, {
      method,
      headers,
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as any };
  };
  return { call, lines, key };
}

type Call = Awaited<ReturnType<typeof logged>>['call'];

const agentBody = {
  name: 'Ada',
  description: PLANTED.description,
  model: 'modelA-4',
  systemPrompt: PLANTED.systemPrompt,
  toolsSecret: PLANTED.toolsSecret,
  tools: [
    {
      name: 'lookup',
      description: PLANTED.toolDescription,
      kind: 'webhook',
      url: 'https://tools.example.com/',
      parameters: { type: 'object' },
    },
  ],
};
const webhookBody = { url: 'https://example.com/hook', events: ['message.sent'], secret: PLANTED.secret };

/** Creates one of everything with planted content; ids of what was created. */
async function seed(call: Call) {
  const agent = await call('POST', '/api/agents', agentBody);
  expect(agent.status).toBe(201);
  const conversation = await call('POST', '/api/conversations', {
    agentId: agent.body.id,
    userId: PLANTED.userId,
    metadata: { note: PLANTED.metadata },
  });
  expect(conversation.status).toBe(201);
  const webhook = await call('POST', '/api/webhooks', webhookBody);
  expect(webhook.status).toBe(201);
  return {
    agent: agent.body.id as string,
    conversation: conversation.body.id as string,
    webhook: webhook.body.id as string,
  };
}

/** Every route, writes with planted content; the statuses, in order. */
async function everyRoute(
  call: Call,
  ids: { agent: string; conversation: string; webhook: string },
): Promise<number[]> {
  const results = [
    await call('POST', '/api/agents', agentBody),
    await call('GET', '/api/agents'),
    await call('GET', `/api/agents/${ids.agent}`),
    await call('PATCH', `/api/agents/${ids.agent}`, {
      systemPrompt: PLANTED.systemPrompt,
      description: PLANTED.description,
      toolsSecret: PLANTED.toolsSecret,
    }),
    await call('POST', '/api/conversations', {
      agentId: ids.agent,
      userId: PLANTED.userId,
      metadata: { note: PLANTED.metadata },
    }),
    await call('GET', '/api/conversations'),
    await call('GET', `/api/conversations/${ids.conversation}`),
    await call('PATCH', `/api/conversations/${ids.conversation}`, { metadata: { note: PLANTED.metadata } }),
    await call('POST', `/api/conversations/${ids.conversation}/messages`, { role: 'user', content: PLANTED.message }),
    await call('POST', `/api/conversations/${ids.conversation}/messages`, {
      role: 'system',
      content: PLANTED.message,
      metadata: { note: PLANTED.metadata },
    }),
    await call('GET', `/api/conversations/${ids.conversation}/messages`),
    await call('POST', '/api/webhooks', webhookBody),
    await call('GET', '/api/webhooks'),
    await call('GET', `/api/webhooks/${ids.webhook}`),
    await call('PATCH', `/api/webhooks/${ids.webhook}`, { secret: PLANTED.secret }),
    await call('POST', '/sandbox/plants', { id: 4242, name: PLANTED.plant, tag: PLANTED.metadata }),
    await call('GET', '/sandbox/plants'),
    await call('DELETE', `/api/webhooks/${ids.webhook}`),
    await call('DELETE', `/api/agents/${ids.agent}`),
    await call('GET', '/api/usage'),
  ];
  return results.map((result) => result.status);
}

/** Fails naming the line and the planted string when any log line contains one. */
function expectNothingPlanted(lines: Array<Record<string, unknown>>, apiKey?: string): void {
  const secrets = { ...PLANTED, ...(apiKey ? { apiKey } : {}) };
  for (const line of lines) {
    const text = JSON.stringify(line);
    for (const [what, planted] of Object.entries(secrets))
      expect(text, `a log line contains the planted ${what}`).not.toContain(planted);
  }
}

describe('no secret or content in any log: memory storage at LOG_LEVEL=debug', () => {
  it('runs every route, writes and reads, and logs none of the planted strings', async () => {
    const { call, lines, key } = await logged(memoryAdapters());
    const statuses = await everyRoute(call, await seed(call));
    expect(statuses.every((status) => status < 300)).toBe(true);
    expect(lines.filter((line) => line.msg === 'request').length).toBeGreaterThanOrEqual(statuses.length);
    expectNothingPlanted(lines, key);
  });
});

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

describeServer('no secret or content in any log: Redis faults at LOG_LEVEL=debug', () => {
  let redis: RedisProcess;
  let admin: Redis;
  const directory = tempDir('log-secrets');
  const opened: Adapters[] = [];

  beforeAll(async () => {
    redis = await startRedisServer(await freeRedisPort(), directory.dir);
    admin = new Redis(redis.url);
    admin.on('error', () => {});
    // Reads and scripts allowed, every write command refused: a script's HSET answers NOPERM.
    await admin.call('ACL', 'SETUSER', 'reader', 'on', '>reader-password', '~*', '+@all', '-@write');
  });
  afterAll(async () => {
    await Promise.all(opened.map((adapters) => adapters.close()));
    admin.disconnect();
    await redis.kill();
    directory.remove();
  });

  function adapters(url: string): Adapters {
    const created = redisAdapters({ url, prefix: 'parley-log-secrets:', timeoutMs: SERVER_REDIS_TIMEOUT_MS });
    opened.push(created);
    return { ...created, deliveryQueue: new MemoryDeliveryQueue() };
  }

  /** The statuses of the create and update routes among {@link everyRoute}'s, by index. */
  const WRITES = [0, 3, 4, 7, 8, 9, 11, 14, 15];

  it('OOM (maxmemory reached under noeviction): writes answer 503, and the log holds the reply but no planted string', async () => {
    const { call, lines, key } = await logged(adapters(redis.url));
    const ids = await seed(call);
    // Healthy first: every route answers, at debug, without logging what it stored.
    expect((await everyRoute(call, await seed(call))).every((status) => status < 300)).toBe(true);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    try {
      const statuses = await everyRoute(call, ids);
      for (const index of WRITES) expect(statuses[index], `route #${index}`).toBe(503);
      expect(statuses.every((status) => status !== 500)).toBe(true);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    const failures = lines.filter((line) => line.msg === 'request failed');
    expect(failures.length).toBeGreaterThanOrEqual(WRITES.length);
    expect(JSON.stringify(failures)).toContain('OOM command not allowed');
    expectNothingPlanted(lines, key);
  });

  it('NOPERM (an ACL user without write commands): writes answer 503, and no planted string is logged', async () => {
    const writer = await logged(adapters(redis.url));
    const ids = await seed(writer.call);
    // Same key prefix, so the reader finds the writer's key (a read) but may not write anything.
    const reader = adapters(redis.url.replace('redis://', 'redis://reader:reader-password@'));
    const { call, lines, key } = await logged(reader, writer.key);
    const statuses = await everyRoute(call, ids);
    for (const index of WRITES) expect(statuses[index], `route #${index}`).toBe(503);
    expect(statuses.every((status) => status !== 500)).toBe(true);
    expect(statuses[1]).toBe(200);
    const failures = lines.filter((line) => line.msg === 'request failed');
    expect(failures.length).toBeGreaterThanOrEqual(WRITES.length);
    expect(JSON.stringify(failures)).toMatch(/NOPERM|can't run this command/);
    expectNothingPlanted(lines, key);
  });

  it('a hung Redis (SIGSTOP) and a dropped connection (SIGKILL): 503 within the deadline, nothing planted logged', async () => {
    const { call, lines, key } = await logged(adapters(redis.url));
    const ids = await seed(call);
    redis.pause();
    let paused: number[];
    try {
      paused = [
        await call('POST', '/api/agents', agentBody),
        await call('PATCH', `/api/webhooks/${ids.webhook}`, { secret: PLANTED.secret }),
      ].map((result) => result.status);
    } finally {
      redis.resume();
    }
    expect(paused).toEqual([503, 503]);
    await redis.kill();
    const dropped = [
      await call('POST', `/api/conversations/${ids.conversation}/messages`, { role: 'user', content: PLANTED.message }),
    ].map((result) => result.status);
    expect(dropped).toEqual([503]);
    expect(lines.filter((line) => line.msg === 'request failed').length).toBeGreaterThanOrEqual(3);
    expectNothingPlanted(lines, key);
  });
});
