/** @module The Redis adapters against core's storage, API key and rate-limit contracts (standalone Redis). */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { runRedisContracts } from '../test/contract-suites.js';
import { runRedisSpecificTests } from '../test/redis-specific-suite.js';
import { REDIS_URL, describeIfAvailable, probeRedis } from '../test/redis-available.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('Redis adapters on standalone Redis', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  // Registered before the suites' own hooks, so it runs after them (after-hooks run as a stack).
  afterAll(async () => {
    await client.quit();
  });
  runRedisContracts(() => client, 'standalone');
  runRedisSpecificTests(() => client);
});
