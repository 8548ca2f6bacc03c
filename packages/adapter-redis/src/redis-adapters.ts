/** @module `redisAdapters()`: every port Parley needs on one Redis (standalone or Cluster), as one bundle. */
import type { Adapters, WorkerLogger } from '@parley/core/adapter';
import { closeClient, connect, RedisRunner, type RedisClient } from './connection.js';
import { RedisDeliveryQueue } from './delivery-queue/redis-delivery-queue.js';
import { RedisApiKeyStore } from './redis-api-keys.js';
import { workspaceKeys } from './keys.js';
import { RedisIdempotencyStore } from './redis-idempotency.js';
import { RedisRateLimitStore } from './redis-rate-limits.js';
import { eventLogSettings, RedisStorage, type RedisStorageOptions } from './redis-storage.js';
import { RedisConversationFeed } from './replies/redis-conversation-feed.js';
import { RedisReplyQueue } from './replies/redis-reply-queue.js';
import { durabilityWarnings, refusalOf } from './server-checks.js';

/** Options of {@link redisAdapters}: where Redis is, the key prefix, deadlines and the event log's settings. */
export type RedisAdaptersOptions = RedisStorageOptions & {
  /** Where losing and regaining the connection is logged, once each (default nowhere). */
  logger?: Pick<WorkerLogger, 'debug' | 'info' | 'warn'>;
};

/**
 * The bundle's Redis, for a host's own keys beside Parley's (`@parley/http`'s sandbox keeps its
 * records here). Calls keep the bundle's deadline and fault policy.
 */
export interface RedisConnection {
  /**
   * What every key of the workspace starts with: the prefix and the workspace's hash tag, e.g.
   * `parley:{ws_1}:`. A host's keys that start with it share the workspace's Cluster slot, so one
   * script may touch them all; their names after it must not be Parley's.
   */
  workspaceTag(workspaceId: string): string;
  /**
   * Runs `lua` (EVAL) with `keys` as KEYS and `args` as ARGV; resolves with its reply.
   * @throws ParleyError `service_unavailable` when Redis cannot serve within the bundle's deadline
   */
  eval(lua: string, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
}

/** The bundle, plus its Redis for a host's own keys. */
export interface RedisAdapters extends Adapters {
  redis: RedisConnection;
}

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
 * does not wait for the connection (`ready()` does, then upgrades records an earlier Parley
 * stored: `RedisStorage.upgrade`); a call made while Redis is unreachable rejects with ParleyError
 * `service_unavailable` within `timeoutMs`. `ready()` rejects at once, with the server's own
 * message, when the server refused the connection (a database that does not exist, a wrong
 * password), and warns through `logger` when the server may evict Parley's records
 * (`maxmemory-policy` other than `noeviction`) or keeps none on disk (neither AOF nor RDB). Data is
 * as durable as the Redis server's persistence settings (RDB/AOF) make it.
 * @throws TypeError for a prefix containing `{` or `}`; RangeError for a retention or lease that
 *   is not a positive number of ms (before any connection is opened).
 */
export function redisAdapters(options: RedisAdaptersOptions): RedisAdapters {
  eventLogSettings(options);
  const { client, owned, prefix, timeoutMs } = connect(options);
  const shared = { client, prefix, timeoutMs };
  const rateLimits = new RedisRateLimitStore(shared);
  const storage = new RedisStorage({ ...options, ...shared, rateLimits });
  const deliveryQueue = new RedisDeliveryQueue(shared);
  const replyQueue = new RedisReplyQueue(shared);
  const conversationFeed = new RedisConversationFeed(shared);
  const where = describe(options, client);
  const description = `${where}, key prefix "${prefix}"`;
  let lastError: string | undefined;
  // An error the server answered while setting up the connection: no retry fixes it.
  let refused: string | undefined;
  const note = (error: Error) => {
    lastError = error.message;
    refused ??= refusalOf(error);
  };
  client.on('error', note);
  client.on('node error', note);
  const reconnectListeners: Array<() => void> = [];
  watchConnection(client, where, options.logger, () => reconnectListeners.forEach((listener) => listener()));
  let closing: Promise<void> | undefined;
  const runner = new RedisRunner(client, timeoutMs, prefix);
  return {
    storage,
    apiKeys: new RedisApiKeyStore(shared),
    rateLimits,
    idempotency: new RedisIdempotencyStore(shared),
    deliveryQueue,
    replyQueue,
    conversationFeed,
    info: { name: 'Redis', description, durable: true },
    redis: {
      workspaceTag: (workspaceId) => workspaceKeys(prefix, workspaceId).tag,
      eval: (lua, keys, args) => runner.run((redis) => redis.eval(lua, keys.length, ...keys, ...args)),
    },
    // Records an earlier Parley stored are brought to this version's shape before anything serves them.
    ready: async (waitMs = 10_000) => {
      await waitUntilReachable(
        () => storage.ping(),
        where,
        waitMs,
        () => lastError,
        () => refused,
      );
      await warnAboutDurability(client, where, timeoutMs, options.logger);
      await storage.upgrade();
    },
    onReconnect: (listener) => void reconnectListeners.push(listener),
    // Queues and the feed (connections of their own) first, then the storage's, then the shared
    // client. Forgetting the delivery consumer is a courtesy (dead consumers are swept later), so an
    // unreachable Redis may not hold the exit up for a whole deadline.
    close: () =>
      (closing ??= (async () => {
        const deliveryClosed = Promise.race([
          deliveryQueue.close().catch(() => {}),
          new Promise<void>((resolve) => setTimeout(resolve, QUEUE_CLOSE_WAIT_MS).unref()),
        ]);
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
function watchConnection(
  client: RedisClient,
  name: string,
  logger: RedisAdaptersOptions['logger'],
  reconnected: () => void,
): void {
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
 * connection error, e.g. `connect ECONNREFUSED 127.0.0.1:6379`. Rejects at once, with the server's
 * message, once `refused()` names one (e.g. `ERR DB index is out of range`, after which ioredis
 * would go on with database 0).
 */
async function waitUntilReachable(
  ping: () => Promise<void>,
  what: string,
  waitMs: number,
  lastError: () => string | undefined,
  refused: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await ping();
      const refusal = refused();
      if (refusal !== undefined) throw new RefusedError(`${what} refused the connection: ${refusal}`);
      return;
    } catch (error) {
      if (error instanceof RefusedError) throw error;
      const refusal = refused();
      if (refusal !== undefined) throw new RefusedError(`${what} refused the connection: ${refusal}`, { cause: error });
      if (Date.now() + READY_INTERVAL_MS > deadline) {
        const why = lastError() ?? (error instanceof Error ? error.message : String(error));
        throw new Error(`${what} did not answer within ${Math.round(waitMs / 1000)} s (${why}).`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, READY_INTERVAL_MS));
    }
  }
}

/** The server refused the connection: a setting is wrong, so `ready()` does not wait on. */
class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

/** Logs {@link durabilityWarnings}; a server that does not answer them within `timeoutMs` is left unchecked. */
async function warnAboutDurability(
  client: RedisClient,
  where: string,
  timeoutMs: number,
  logger: RedisAdaptersOptions['logger'],
): Promise<void> {
  if (!logger) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer')), Math.max(timeoutMs, 1_000));
  });
  try {
    const warnings = await Promise.race([durabilityWarnings(client), late]);
    for (const warning of warnings) logger.warn({ redis: where }, warning);
  } catch (error) {
    logger.debug({ redis: where, err: error }, 'redis persistence and eviction settings not checked');
  } finally {
    clearTimeout(timer);
  }
}
