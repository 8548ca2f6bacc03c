/** @module One call that builds every Redis adapter over one shared client. */
import { closeClient, connect, type RedisAdapterOptions, type RedisClient } from './connection.js';
import { RedisApiKeyStore } from './redis-api-keys.js';
import { RedisIdempotencyStore } from './redis-idempotency.js';
import { RedisRateLimitStore } from './redis-rate-limits.js';
import { RedisStorage } from './redis-storage.js';

/** What {@link createRedisAdapters} returns. */
export interface RedisAdapters {
  storage: RedisStorage;
  apiKeys: RedisApiKeyStore;
  rateLimits: RedisRateLimitStore;
  /** `Idempotency-Key`s, atomic across instances. */
  idempotency: RedisIdempotencyStore;
  /** The one ioredis client they share. */
  client: RedisClient;
  /** Closes the client if it was created here (from `url` or `clusterNodes`); idempotent. */
  close(): Promise<void>;
}

/**
 * Storage, API keys, rate limits and idempotency keys on one Redis connection (standalone or Cluster), for wiring
 * a server in one call:
 *
 * ```ts
 * const redis = createRedisAdapters({ url: process.env.REDIS_URL! });
 * const core = createCore({ storage: redis.storage, apiKeys: redis.apiKeys, rateLimits: redis.rateLimits, … });
 * process.on('SIGTERM', () => void redis.close());
 * ```
 *
 * `options` is `{ url }`, `{ clusterNodes }` or `{ client }`, with optional `prefix` (default
 * `parley:`) and `timeoutMs` (deadline of each call, default 1 000 ms). Creating does not wait
 * for the connection; a call made while Redis is unreachable rejects with ParleyError
 * `service_unavailable` within `timeoutMs`.
 * @throws TypeError for a prefix containing `{` or `}`.
 */
export function createRedisAdapters(options: RedisAdapterOptions): RedisAdapters {
  const { client, owned, prefix, timeoutMs } = connect(options);
  const shared = { client, prefix, timeoutMs };
  return {
    storage: new RedisStorage(shared),
    apiKeys: new RedisApiKeyStore(shared),
    rateLimits: new RedisRateLimitStore(shared),
    idempotency: new RedisIdempotencyStore(shared),
    client,
    close: () => closeClient(client, owned),
  };
}
