/**
 * @module The Redis storage adapter: core's {@link Storage} on standalone Redis or Redis Cluster.
 *
 * Guarantees: each write is atomic (one Lua script) and records its event in the same script
 * (the transactional event log: README, "Events and the outbox"). Every key of a workspace
 * carries the hash tag `{<workspace>}`, so scripts work on Redis Cluster; a workspace therefore
 * lives on one slot. A call rejects with ParleyError `service_unavailable` within `timeoutMs`
 * when Redis cannot be reached, and works again as soon as Redis is back. Durability is that of
 * the Redis server's persistence settings (RDB/AOF); this adapter acknowledges a write once Redis
 * has applied it in memory.
 */
import {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_OUTBOX_LEASE_MS,
  positiveMs,
  systemClock,
  type AgentStore,
  type Clock,
  type ConversationStore,
  type DeliveryStore,
  type UsageStore,
  type EventStore,
  type MessageStore,
  type Storage,
  type WebhookEndpointStore,
  type ScopedCalls,
} from '@parley/core/adapter';
import type { RedisRateLimitStore } from './redis-rate-limits.js';
import { RedisAdapter, type RedisAdapterOptions } from './connection.js';
import { agentStore } from './stores/agent-store.js';
import { conversationStore } from './stores/conversation-store.js';
import { deliveryStore } from './stores/delivery-store.js';
import { EventLog, eventStore, type EventLogOptions } from './stores/event-log.js';
import { messageStore } from './stores/message-store.js';
import { outboxStore, type RedisEventOutbox } from './stores/outbox.js';
import { upgradeRecords } from './stores/upgrades.js';
import { usageStore } from './stores/usage-store.js';
import { webhookEndpointStore } from './stores/webhook-endpoint-store.js';

/** Options of {@link RedisStorage}: where Redis is (see {@link RedisAdapterOptions}), plus the event log's settings. */
export type RedisStorageOptions = RedisAdapterOptions & {
  /** How long events and delivery attempts are kept, in ms (default 14 days). */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker before it is handed out again, in ms (default 30 s). */
  outboxLeaseMs?: number;
  /** The clock retention is measured with (default the system clock). */
  clock?: Clock;
  /**
   * The rate-limit store whose hits this storage decides in its own scripts, so a request costs one
   * round trip (docs/rate-limits.md#one-round-trip); `redisAdapters` passes its own. It must keep
   * its state on the same client under the same prefix. Default none: every decision is a `hit`.
   */
  rateLimits?: RedisRateLimitStore;
};

/**
 * The calls whose script decides a request's pending rate limit before its body: every call a
 * request makes through the services, all in the workspace's slot, where the rate-limit state is.
 */
const DECIDING_CALLS: ScopedCalls = {
  agents: ['insert', 'get', 'list', 'update', 'delete'],
  conversations: ['insert', 'get', 'list', 'update', 'delete'],
  messages: ['append', 'get', 'page'],
  webhookEndpoints: ['insert', 'get', 'list', 'update', 'delete'],
  events: ['get', 'list'],
};

/**
 * The event log settings of `options`, with their defaults.
 * @throws RangeError for a retention or lease that is not a positive number of ms.
 */
export function eventLogSettings(options: RedisStorageOptions): EventLogOptions {
  return {
    retentionMs: positiveMs(options.eventRetentionMs, DEFAULT_EVENT_RETENTION_MS, 'eventRetentionMs'),
    leaseMs: positiveMs(options.outboxLeaseMs, DEFAULT_OUTBOX_LEASE_MS, 'outboxLeaseMs'),
    clock: options.clock ?? systemClock,
  };
}

/**
 * {@link Storage} on Redis. Pass an existing ioredis client (`{ client }`, not closed by
 * {@link close}), a URL (`{ url }`) or Cluster seed nodes (`{ clusterNodes }`), plus an optional
 * key `prefix` (default `parley:`), call deadline `timeoutMs` (default 1 000 ms),
 * `eventRetentionMs` (default 14 days) and `outboxLeaseMs` (default 30 s).
 *
 * @example
 * ```ts
 * const storage = new RedisStorage({ client: new Redis(process.env.REDIS_URL!), prefix: 'parley:' });
 * ```
 * @throws TypeError from the constructor for a prefix containing `{` or `}`; RangeError for a
 *   retention or lease that is not a positive number of ms.
 */
export class RedisStorage extends RedisAdapter implements Storage {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly events: EventStore;
  readonly outbox: RedisEventOutbox;
  readonly deliveries: DeliveryStore;
  readonly usage: UsageStore;
  readonly decidesRateLimits?: Storage['decidesRateLimits'];

  constructor(options: RedisStorageOptions) {
    // Checked before super() opens a connection.
    const settings = eventLogSettings(options);
    super(options);
    if (options.rateLimits) {
      if (options.rateLimits.client !== this.client || options.rateLimits.prefix !== this.prefix) {
        throw new TypeError('RedisStorage: `rateLimits` must use the same client and prefix.');
      }
      this.decidesRateLimits = { rateLimits: options.rateLimits, calls: DECIDING_CALLS };
    }
    const log = new EventLog(this.runner, settings);
    this.agents = agentStore(log);
    this.conversations = conversationStore(log);
    this.messages = messageStore(log);
    this.webhookEndpoints = webhookEndpointStore(log);
    this.usage = usageStore(log);
    this.events = eventStore(log);
    this.outbox = outboxStore(log);
    this.deliveries = deliveryStore(log);
  }

  /**
   * Resolves when Redis answers PING (on a Cluster: the node ioredis picks).
   * @throws ParleyError `service_unavailable` when it does not within `timeoutMs`.
   */
  async ping(): Promise<void> {
    await this.runner.run((client) => client.ping());
  }

  /**
   * Rewrites records an earlier Parley stored in an earlier shape (e.g. agents with their settings
   * inside `configuration`) in this version's shape, once per key prefix (stores/upgrades.ts,
   * docs/storage.md#upgrades); `redisAdapters().ready()` calls it. Call it before serving when you
   * build a `RedisStorage` yourself.
   * @throws ParleyError `service_unavailable` when Redis stops answering meanwhile (a later call resumes).
   */
  upgrade(): Promise<void> {
    return upgradeRecords(this.runner);
  }

  /**
   * Closes the outbox's blocking connection (if `outbox.take` opened one), and the client if this
   * storage created it; a client passed in stays open.
   */
  override async close(): Promise<void> {
    await this.outbox.close();
    await super.close();
  }
}
