/** @module The Redis adapters against core's storage, API key and rate-limit contracts (standalone Redis). */
import { randomUUID } from 'node:crypto';
import type { Adapters } from '@parley/core/adapter';
import { runAdaptersContract } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAdapters } from './redis-adapters.js';
import { RedisStorage } from './redis-storage.js';
import { runRedisContracts } from '../test/contract-suites.js';
import { runEventLogTests } from '../test/event-log-suite.js';
import { runRedisDeliveryQueueTests } from '../test/delivery-queue-suite.js';
import { runRedisSpecificTests } from '../test/redis-specific-suite.js';
import { runApiKeyCacheTests } from '../test/api-key-cache-suite.js';
import { runAdmissionTests } from '../test/admission-suite.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test/redis-available.js';

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
  runEventLogTests(() => client);
  runRedisDeliveryQueueTests(() => client, 'standalone');
  runApiKeyCacheTests(() => client);
  runAdmissionTests(() => client);

  // Each bundle on a client of its own (the bundle leaves it open), so killing it hits only that bundle.
  const clients = new WeakMap<Adapters, Redis>();
  runAdaptersContract(
    { describe, it, expect },
    () => {
      const own = new Redis(REDIS_URL);
      own.on('error', () => {});
      const prefix = uniquePrefix('standalone-bundle');
      const adapters = redisAdapters({ client: own, prefix });
      clients.set(adapters, own);
      return {
        adapters,
        cleanup: async () => {
          await deletePrefix(client, prefix);
          own.disconnect();
        },
      };
    },
    {
      dropConnection: async (adapters) => {
        const id = await clients.get(adapters)!.client('ID');
        await client.client('KILL', 'ID', String(id));
      },
      unreachable: () => redisAdapters({ url: 'redis://:contract-secret@127.0.0.1:1', timeoutMs: 200 }),
    },
  );

  it('opens no connection when it refuses a key prefix', async () => {
    const connectionName = `parley-refused-${randomUUID().slice(0, 8)}`;
    const options = { url: REDIS_URL, prefix: 'bad{prefix}:', options: { connectionName } };
    expect(() => new RedisStorage(options)).toThrow(TypeError);
    expect(() => redisAdapters(options)).toThrow(TypeError);
    // A client created before the check would have connected (and kept reconnecting) by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await client.client('LIST')).not.toContain(connectionName);
  });
});
