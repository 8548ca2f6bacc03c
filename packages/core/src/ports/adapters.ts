/**
 * @module The adapter bundle: every port Parley runs on, as one object that each adapter package
 * returns whole (`memoryAdapters()`, `redisAdapters(…)`, `postgresAdapters(…)`), docs/architecture.md.
 */
import type { ApiKeyStore } from './api-keys.js';
import type { ConversationFeed } from './conversation-feed.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { IdempotencyStore } from './idempotency.js';
import type { RateLimitStore } from './rate-limit.js';
import type { ReplyQueue } from './reply-queue.js';
import type { Storage } from './storage.js';

/** What a bundle's backend is, for banners, logs and start-up decisions. */
export interface BackendInfo {
  /** Short name, e.g. `memory`, `Redis`, `PostgreSQL`. */
  name: string;
  /** One line for the banner, e.g. `Redis at 127.0.0.1:6379, key prefix "parley:"`; never a credential. */
  description: string;
  /**
   * Data outlives this process and is shared with every process on the same backend (Redis,
   * PostgreSQL): no development key is made at start-up, `parley keys` manages keys, and
   * `parley worker` may run apart from `parley serve`.
   */
  durable: boolean;
}

/**
 * Everything Parley stores and moves, on one backend. `createCore(adapters, settings)` takes it
 * whole; a host may mix backends by replacing members (`{ ...redis, storage: other.storage }`),
 * closing each bundle it took members from.
 *
 * Every member honours its port's contract (`@parley/core/testing`). `close()` knows its own
 * order: queues and feeds (which hold connections of their own) before the shared client.
 */
export interface Adapters {
  /** Records, the event log and its outbox, and the deliveries log. */
  storage: Storage;
  apiKeys: ApiKeyStore;
  /** Rate-limit state, exact across every process sharing the backend. */
  rateLimits: RateLimitStore;
  /** Kept responses of `Idempotency-Key` requests. */
  idempotency: IdempotencyStore;
  /** Webhook delivery jobs, leased to workers. */
  deliveryQueue: DeliveryQueue;
  /** Agent reply requests, one conversation at a time. */
  replyQueue: ReplyQueue;
  /** Live stream signals between processes. */
  conversationFeed: ConversationFeed;
  info: BackendInfo;
  /**
   * Resolves once the backend answers and holds records in this version's shape (a durable backend
   * migrates or upgrades what an earlier version stored: docs/storage.md); rejects with an `Error`
   * that names the backend and its last connection error after `waitMs` (default 10 000). Lets a
   * server start beside its database yet fail rather than wait forever. Call it before serving.
   */
  ready(waitMs?: number): Promise<void>;
  /**
   * Calls `listener` each time the backend's connection is ready again after it was lost (not on
   * the first connection). The backend may have come back empty (a Redis restarted without its
   * data). A no-op where the connection cannot be lost (memory).
   */
  onReconnect(listener: () => void): void;
  /** Closes what the bundle opened, in order; never closes a client the host passed in. Idempotent. */
  close(): Promise<void>;
}
