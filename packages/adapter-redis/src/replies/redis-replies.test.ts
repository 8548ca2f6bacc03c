/** @module The reply queue contract and the conversation feed on standalone Redis. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { REDIS_URL, describeIfAvailable, probeRedis } from '../../test/redis-available.js';
import { runRedisReplyTests } from '../../test/replies-suite.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('Reply queue and conversation feed on standalone Redis', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await client.quit();
  });
  runRedisReplyTests(() => client, 'standalone');
});
