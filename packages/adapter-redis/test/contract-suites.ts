/**
 * @module Test support: core's contract suites, run against the Redis adapters over a
 * client a test file provides (standalone or Cluster), each test under a fresh key prefix that
 * is deleted afterwards.
 */
import {
  runApiKeyStoreContract,
  runIdempotencyStoreContract,
  runRateLimitStoreContract,
  runStorageContract,
} from '@parley/core/testing';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { RedisApiKeyStore } from '../src/redis-api-keys.js';
import { RedisIdempotencyStore } from '../src/redis-idempotency.js';
import { RedisRateLimitStore } from '../src/redis-rate-limits.js';
import { RedisStorage } from '../src/redis-storage.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

/** Registers the storage, API key, idempotency and rate-limit contracts; `client()` is called inside tests. */
export function runRedisContracts(client: () => RedisClient, label: string): void {
  runStorageContract({ describe, it, expect }, (options) => {
    const prefix = uniquePrefix(`${label}-storage`);
    const storage = new RedisStorage({ client: client(), prefix, ...options });
    return {
      storage,
      cleanup: async () => {
        // Closes only the outbox's blocking connection: the client is the test file's.
        await storage.close();
        await deletePrefix(client(), prefix);
      },
    };
  });

  runApiKeyStoreContract({ describe, it, expect }, () => {
    const prefix = uniquePrefix(`${label}-keys`);
    return {
      apiKeys: new RedisApiKeyStore({ client: client(), prefix }),
      cleanup: () => deletePrefix(client(), prefix),
    };
  });

  runIdempotencyStoreContract({ describe, it, expect }, () => {
    const prefix = uniquePrefix(`${label}-idem`);
    return {
      store: new RedisIdempotencyStore({ client: client(), prefix }),
      cleanup: () => deletePrefix(client(), prefix),
    };
  });

  // The rate-limit suite has no per-test cleanup: its keys live under one prefix for the file.
  const rateLimitPrefix = uniquePrefix(`${label}-rl`);
  runRateLimitStoreContract(
    { describe, it, expect, beforeEach },
    () => new RedisRateLimitStore({ client: client(), prefix: rateLimitPrefix }),
  );
  afterAll(async () => {
    await deletePrefix(client(), rateLimitPrefix);
  });
}
