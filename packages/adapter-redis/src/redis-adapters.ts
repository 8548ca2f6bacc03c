/** @module `redisAdapters()`: every port Parley needs on one Redis (standalone or Cluster), as one bundle. */
import type { Adapters, WorkerLogger } from '@parley/core';
import { closeClient, connect, type RedisClient } from './connection.js';
import { RedisDeliveryQueue } from './delivery-queue/redis-delivery-queue.js';
import { RedisApiKeyStore } from './redis-api-keys.js';
import { RedisIdempotencyStore } from './redis-idempotency.js';
import { RedisRateLimitStore } from './redis-rate-limits.js';
import { eventLogSettings, RedisStorage, type RedisStorageOptions } from './redis-storage.js';
import { RedisConversationFeed } from './replies/redis-conversation-feed.js';
import { RedisReplyQueue } from './replies/redis-reply-queue.js';

/** Options of {@link redisAdapters}: where Redis is, the key prefix, deadlines and the event log's settings. */
export type RedisAdaptersOptions = RedisStorageOptions & {
  /** Where losing and regaining the connection is logged, once each (default nowhere). */
  logger?: Pick<WorkerLogger, 'debug' | 'info' | 'warn'>;
};

/** Longest wait for the delivery queue to forget this process's consumer before the client is closed under it, in ms. */
const QUEUE_CLOSE_WAIT_MS = 500;
/** How often {@link Adapters.ready} pings while waiting, in ms. */
const READY_INTERVAL_MS = 200;

/**
 * Every port on one Redis connection (standalone or Cluster; the queues' blocking reads and the
 * feed's subscriptions open connections of their own), for `createCore(redisAdapters({ url }))`.
 *
 * `options` is `{ url }`, `{ clusterNodes }` or `{ client }` (a client you own: `close()` leaves it
 * open), with optional `prefix` (default `parley:`), `timeoutMs` (deadline of each call, default
 * 1 000 ms), `eventRetentionMs`, `outboxLeaseMs` and `clock` (see `RedisStorageOptions`). Creating
 * does not wait for the connection (`ready()` does); a call made while Redis is unreachable
 * rejects with ParleyError `service_unavailable` within `timeoutMs`. Data is as durable as the
 * Redis server's persistence settings (RDB/AOF) make it.
 * @throws TypeError for a prefix containing `{` or `}`; RangeError for a retention or lease that
 *   is not a positive number of ms (before any connection is opened).
 */
export function redisAdapters(options: RedisAdaptersOptions): Adapters {
  eventLogSettings(options);
  const { client, owned, prefix, timeoutMs } = connect(options);
  const shared = { client, prefix, timeoutMs };
  const storage = new RedisStorage({ ...options, ...shared });
  const deliveryQueue = new RedisDeliveryQueue(shared);
  const replyQueue = new RedisReplyQueue(shared);
  const conversationFeed = new RedisConversationFeed(shared);
  const where = describe(options, client);
  const description = `${where}, key prefix "${prefix}"`;
  let lastError: string | undefined;
  client.on('error', (error: Error) => (lastError = error.message));
  const reconnectListeners: Array<() => void> = [];
  watchConnection(client, where, options.logger, () => reconnectListeners.forEach((listener) => listener()));
  let closing: Promise<void> | undefined;
  return {
    storage,
    apiKeys: new RedisApiKeyStore(shared),
    rateLimits: new RedisRateLimitStore(shared),
    idempotency: new RedisIdempotencyStore(shared),
    deliveryQueue,
    replyQueue,
    conversationFeed,
    info: { name: 'Redis', description, durable: true },
    ready: (waitMs = 10_000) => waitUntilReachable(() => storage.ping(), where, waitMs, () => lastError),
    onReconnect: (listener) => void reconnectListeners.push(listener),
    // Queues and the feed (connections of their own) first, then the storage's, then the shared
    // client. Forgetting the delivery consumer is a courtesy (dead consumers are swept later), so an
    // unreachable Redis may not hold the exit up for a whole deadline.
    close: () =>
      (closing ??= (async () => {
        const deliveryClosed = Promise.race([deliveryQueue.close().catch(() => {}), new Promise<void>((resolve) => setTimeout(resolve, QUEUE_CLOSE_WAIT_MS).unref())]);
        await Promise.allSettled([deliveryClosed, replyQueue.close(), conversationFeed.close()]);
        await storage.close();
        await closeClient(client, owned);
      })()),
  };
}

/** The backend as banners and logs name it: the URL with any password masked, or the Cluster's seed nodes. */
function describe(options: RedisAdaptersOptions, client: RedisClient): string {
  if ('url' in options) {
    const url = new URL(options.url);
    if (url.password !== '') url.password = '***';
    return `Redis ${url.toString()}`;
  }
  if ('clusterNodes' in options) {
    return `Redis Cluster ${options.clusterNodes.map((node) => (typeof node === 'object' ? `${node.host?.includes(':') ? `[${node.host}]` : node.host}:${node.port}` : String(node))).join(',')}`;
  }
  return client.constructor.name === 'Cluster' ? 'Redis Cluster (a client passed in)' : 'Redis (a client passed in)';
}

/**
 * Logs losing and regaining the connection once each, rather than every failed request or
 * reconnect attempt (calls already fail fast and ioredis keeps reconnecting), and calls
 * `reconnected` each time the connection is ready again after it was lost.
 */
function watchConnection(client: RedisClient, name: string, logger: RedisAdaptersOptions['logger'], reconnected: () => void): void {
  let state: 'connecting' | 'up' | 'down' = 'connecting';
  client.on('ready', () => {
    if (state === 'down') {
      logger?.info({ redis: name }, 'redis connection restored');
      reconnected();
    } else logger?.debug({ redis: name }, 'redis connected');
    state = 'up';
  });
  client.on('close', () => {
    if (state === 'up') logger?.warn({ redis: name }, 'redis connection lost: requests answer 503 until it is back');
    if (state !== 'connecting') state = 'down';
  });
}

/**
 * Resolves once `ping` succeeds; after `waitMs` rejects with an `Error` naming `what` and the last
 * connection error, e.g. `connect ECONNREFUSED 127.0.0.1:6379`.
 */
async function waitUntilReachable(ping: () => Promise<void>, what: string, waitMs: number, lastError: () => string | undefined): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await ping();
      return;
    } catch (error) {
      if (Date.now() + READY_INTERVAL_MS > deadline) {
        const why = lastError() ?? (error instanceof Error ? error.message : String(error));
        throw new Error(`${what} did not answer within ${Math.round(waitMs / 1000)} s (${why}).`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, READY_INTERVAL_MS));
    }
  }
}
