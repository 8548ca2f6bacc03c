/**
 * @module The adapters the ready-made server runs on: memory, or Redis (standalone or Cluster)
 * for storage (the event log and outbox included), the delivery queue, rate limits and API keys.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createRedisAdapters, RedisConversationFeed, RedisDeliveryQueue, RedisReplyQueue, type RedisAdapters } from '@parley/adapter-redis';
import type { ApiKeyStore, CoreOptions, RateLimitStore, Storage } from '@parley/core';
import type { KeyStorage } from './api-key-setup.js';
import type { Logger } from './logger.js';
import { describeRedis, type RedisConfig } from './redis-config.js';

/**
 * Deadline of one Redis round trip made by the server, in ms. Half the adapters' 1 000 ms default
 * so that a request whose Redis call hangs still answers 503 within a second with room to spare
 * for HTTP and a busy event loop; healthy Redis answers in about a millisecond.
 */
export const SERVER_REDIS_TIMEOUT_MS = 500;

/** The adapters of a running server, and what they need at start-up and shutdown. */
export interface Backend {
  adapters: Pick<CoreOptions, 'deliveryQueue' | 'idempotency' | 'replyQueue' | 'conversationFeed'> & { storage: Storage; apiKeys: ApiKeyStore; rateLimits: RateLimitStore };
  /** Where API keys live, as start-up needs to know it (whether a development key is made). */
  keyStorage: KeyStorage;
  /** For the banner and logs, e.g. `memory storage: data is lost when the server stops`. */
  description: string;
  /**
   * Resolves once storage answers; rejects with a clear `Error` after `waitMs`. Lets a server
   * start alongside its Redis (containers starting together) yet fail rather than wait forever.
   */
  waitUntilReachable(waitMs: number): Promise<void>;
  /**
   * Calls `listener` each time the Redis connection is ready again after it was lost (not on the
   * first connection); never on memory. Redis may have come back empty (restarted without its data).
   */
  onReconnect(listener: () => void): void;
  /** Closes the Redis client (after the server drained); a no-op on memory. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openBackend}. */
export interface BackendOptions {
  /** Where Redis connection changes are logged. */
  logger?: Logger;
  /** Deadline of one Redis call in ms; default {@link SERVER_REDIS_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** How long events and the deliveries log are kept, in days (`EVENT_RETENTION_DAYS`); default the adapters' 14. */
  eventRetentionDays?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Longest wait for the delivery queue to close before the client is closed under it, in ms. */
const QUEUE_CLOSE_WAIT_MS = 500;

/** Memory adapters when `redis` is `undefined`, else Redis adapters over one new client. */
export function openBackend(redis: RedisConfig | undefined, options: BackendOptions = {}): Backend {
  if (redis === undefined) {
    return {
      adapters: memoryAdapters(options.eventRetentionDays === undefined ? {} : { storage: { eventRetentionMs: options.eventRetentionDays * DAY_MS } }),
      keyStorage: { name: 'memory', persistent: false },
      description: 'memory storage: data is lost when the server stops',
      waitUntilReachable: async () => {},
      onReconnect: () => {},
      close: async () => {},
    };
  }
  const timeoutMs = options.timeoutMs ?? SERVER_REDIS_TIMEOUT_MS;
  const adapters = openRedisAdapters(redis, timeoutMs, options.eventRetentionDays);
  // Shares the client; its blocking reads use connections of their own (see RedisDeliveryQueue).
  const deliveryQueue = new RedisDeliveryQueue({ client: adapters.client, prefix: redis.prefix, timeoutMs });
  let lastError: string | undefined;
  adapters.client.on('error', (error: Error) => (lastError = error.message));
  if (options.logger) logConnectionChanges(adapters, describeRedis(redis), options.logger);
  // Reply requests and live stream signals are shared by every instance through Redis too.
  const shared = { client: adapters.client, prefix: redis.prefix, timeoutMs };
  const replyQueue = new RedisReplyQueue(shared);
  const conversationFeed = new RedisConversationFeed(shared);
  const reconnectListeners: Array<() => void> = [];
  let connectedBefore = false;
  adapters.client.on('ready', () => {
    if (connectedBefore) for (const listener of reconnectListeners) listener();
    connectedBefore = true;
  });
  return {
    adapters: { storage: adapters.storage, apiKeys: adapters.apiKeys, rateLimits: adapters.rateLimits, idempotency: adapters.idempotency, deliveryQueue, replyQueue, conversationFeed },
    keyStorage: { name: 'Redis', persistent: true },
    description: `${describeRedis(redis)}, key prefix "${redis.prefix}"`,
    waitUntilReachable: (waitMs) => waitForStorage(adapters.storage, describeRedis(redis), waitMs, () => lastError),
    onReconnect: (listener) => void reconnectListeners.push(listener),
    // The delivery queue's close forgets this process's consumer in Redis: a courtesy (dead consumers
    // are swept later anyway), so an unreachable Redis may not hold the exit up for a whole deadline.
    close: async () => {
      const deliveryClosed = Promise.race([deliveryQueue.close().catch(() => {}), new Promise<void>((resolve) => setTimeout(resolve, QUEUE_CLOSE_WAIT_MS).unref())]);
      await Promise.allSettled([deliveryClosed, replyQueue.close(), conversationFeed.close()]);
      await adapters.close();
    },
  };
}

/** Redis adapters for `redis` over a client they own. */
function openRedisAdapters(redis: RedisConfig, timeoutMs: number, eventRetentionDays: number | undefined): RedisAdapters {
  const target = 'url' in redis ? { url: redis.url } : { clusterNodes: redis.clusterNodes };
  return createRedisAdapters({
    ...target,
    prefix: redis.prefix,
    timeoutMs,
    ...(eventRetentionDays !== undefined && { eventRetentionMs: eventRetentionDays * DAY_MS }),
  });
}

/**
 * Logs losing and regaining the connection once each, rather than every failed request or
 * reconnect attempt: the adapters already fail calls fast and ioredis keeps reconnecting.
 */
function logConnectionChanges(adapters: RedisAdapters, name: string, logger: Logger): void {
  let state: 'connecting' | 'up' | 'down' = 'connecting';
  adapters.client.on('ready', () => {
    if (state === 'down') logger.info({ redis: name }, 'redis connection restored');
    else logger.debug({ redis: name }, 'redis connected');
    state = 'up';
  });
  adapters.client.on('close', () => {
    if (state === 'up') logger.warn({ redis: name }, 'redis connection lost: requests answer 503 until it is back');
    if (state !== 'connecting') state = 'down';
  });
}

/** How often {@link Backend.waitUntilReachable} pings while waiting. */
const WAIT_INTERVAL_MS = 200;

/**
 * Resolves once `storage.ping()` succeeds; after `waitMs` rejects with an `Error` naming `what`
 * and the last connection error (`lastError()`), e.g. `connect ECONNREFUSED 127.0.0.1:6379`.
 */
async function waitForStorage(storage: Pick<Storage, 'ping'>, what: string, waitMs: number, lastError: () => string | undefined): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await storage.ping();
      return;
    } catch (error) {
      if (Date.now() + WAIT_INTERVAL_MS > deadline) {
        const why = lastError() ?? (error instanceof Error ? error.message : String(error));
        throw new Error(`${what} did not answer within ${Math.round(waitMs / 1000)} s (${why}).`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, WAIT_INTERVAL_MS));
    }
  }
}
