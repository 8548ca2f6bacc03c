/**
 * @module HTTP conformance on Redis: the route, auth, scope, probe and sandbox test files run
 * again, unchanged, with every harness on `redisAdapters` (the real Redis, a fresh key
 * prefix per harness, deleted afterwards) instead of memory. Same assertions, other storage.
 */
import { MemoryDeliveryQueue } from '@parley/adapter-memory';
import { redisAdapters } from '@parley/adapter-redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useAdapters } from '../test-support/harness.js';
import {
  REDIS_URL,
  countPrefix,
  deletePrefix,
  describeIfAvailable,
  probeRedis,
  uniquePrefix,
} from '../test-support/redis.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('HTTP routes over Redis storage', async () => {
  let client: Redis | undefined;
  const prefixes: string[] = [];

  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client!, prefix);
    await client?.quit();
  });

  useAdapters(() => {
    const prefix = uniquePrefix('routes');
    prefixes.push(prefix);
    // The routes' storage on Redis; the delivery queue stays in memory (no worker runs here).
    return { ...redisAdapters({ client: client!, prefix }), deliveryQueue: new MemoryDeliveryQueue() };
  });

  // Importing a test file registers its suites here, where harness() now builds on Redis.
  await import('./routes/agents.test.js');
  await import('./routes/conversations.test.js');
  await import('./routes/messages.test.js');
  await import('./routes/webhooks.test.js');
  await import('./routes/entity-tags.test.js');
  await import('./routes/health.test.js');
  await import('../sandbox/sandbox-app.test.js');
  await import('./middleware/bearer-auth.test.js');
  await import('./middleware/require-scope.test.js');
  await import('./app.test.js');

  // Registered last, so it runs after the imported suites: they really did write to Redis.
  it('ran those suites on Redis, one key prefix per harness', async () => {
    expect(prefixes.length).toBeGreaterThan(50);
    let keys = 0;
    for (const prefix of prefixes) keys += await countPrefix(client!, prefix);
    expect(keys).toBeGreaterThan(prefixes.length * 2);
  });
});
