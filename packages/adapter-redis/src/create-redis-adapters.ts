/** @module One call that builds every Redis adapter over one shared client. */
import { closeClient, connect, type RedisClient } from './connection.js';
import { RedisApiKeyStore } from './redis-api-keys.js';
import { RedisRateLimitStore } from './redis-rate-limits.js';
import { eventLogSettings, RedisStorage, type RedisStorageOptions } from './redis-storage.js';

/** What {@link createRedisAdapters} returns. */
export interface RedisAdapters {
  storage: RedisStorage;
  apiKeys: RedisApiKeyStore;
  rateLimits: RedisRateLimitStore;
  /** The one ioredis client the three share. */
  client: RedisClient;
  /** Closes the client if it was created here (from `url` or `clusterNodes`); idempotent. */
  close(): Promise<void>;
}

/**
 * Storage, API keys and rate limits on one Redis connection (standalone or Cluster), for wiring
 * a server in one call:
 *
 * ```ts
 * const redis = createRedisAdapters({ url: process.env.REDIS_URL! });
 * const core = createCore({ storage: redis.storage, apiKeys: redis.apiKeys, rateLimits: redis.rateLimits, … });
 * process.on('SIGTERM', () => void redis.close());
 * ```
 *
 * `options` is `{ url }`, `{ clusterNodes }` or `{ client }`, with optional `prefix` (default
 * `parley:`), `timeoutMs` (deadline of each call, default 1 000 ms) and the storage's
 * `eventRetentionMs`, `outboxLeaseMs` and `clock` (see `RedisStorageOptions`). Creating does not wait
 * for the connection; a call made while Redis is unreachable rejects with ParleyError
 * `service_unavailable` within `timeoutMs`.
 * @throws TypeError for a prefix containing `{` or `}`; RangeError for a retention or lease that
 *   is not a positive number of ms.
 */
export function createRedisAdapters(options: RedisStorageOptions): RedisAdapters {
  // Refused settings throw before a connection is opened.
  eventLogSettings(options);
  const { client, owned, prefix, timeoutMs } = connect(options);
  const shared = { client, prefix, timeoutMs };
  const storage = new RedisStorage({ ...shared, ...storageOptions(options) });
  return {
    storage,
    apiKeys: new RedisApiKeyStore(shared),
    rateLimits: new RedisRateLimitStore(shared),
    client,
    // The storage's own connection (the outbox's blocking one) first, then the shared client.
    close: async () => {
      await storage.close();
      await closeClient(client, owned);
    },
  };
}

/** The event log settings among `options`. */
function storageOptions({ eventRetentionMs, outboxLeaseMs, clock }: RedisStorageOptions) {
  return {
    ...(eventRetentionMs === undefined ? {} : { eventRetentionMs }),
    ...(outboxLeaseMs === undefined ? {} : { outboxLeaseMs }),
    ...(clock === undefined ? {} : { clock }),
  };
}
