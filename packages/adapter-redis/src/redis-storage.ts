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
  type PlantStore,
  type Storage,
  type WebhookEndpointStore,
} from '@parley/core';
import { RedisAdapter, type RedisAdapterOptions } from './connection.js';
import { RedisAgentStore } from './stores/agent-store.js';
import { RedisConversationStore } from './stores/conversation-store.js';
import { RedisDeliveryStore } from './stores/delivery-store.js';
import { EventLog, RedisEventStore, type EventLogOptions } from './stores/event-log.js';
import { RedisMessageStore } from './stores/message-store.js';
import { RedisEventOutbox } from './stores/outbox.js';
import { RedisPlantStore } from './stores/plant-store.js';
import { RedisUsageStore } from './stores/usage-store.js';
import { RedisWebhookEndpointStore } from './stores/webhook-endpoint-store.js';

/** Options of {@link RedisStorage}: where Redis is (see {@link RedisAdapterOptions}), plus the event log's settings. */
export type RedisStorageOptions = RedisAdapterOptions & {
  /** How long events and delivery attempts are kept, in ms (default 14 days). */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker before it is handed out again, in ms (default 30 s). */
  outboxLeaseMs?: number;
  /** The clock retention is measured with (default the system clock). */
  clock?: Clock;
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
  readonly plants: PlantStore;
  readonly events: EventStore;
  readonly outbox: RedisEventOutbox;
  readonly deliveries: DeliveryStore;
  readonly usage: UsageStore;

  constructor(options: RedisStorageOptions) {
    // Checked before super() opens a connection.
    const settings = eventLogSettings(options);
    super(options);
    const log = new EventLog(this.runner, settings);
    this.agents = new RedisAgentStore(log);
    this.conversations = new RedisConversationStore(log);
    this.messages = new RedisMessageStore(log);
    this.webhookEndpoints = new RedisWebhookEndpointStore(log);
    this.plants = new RedisPlantStore(this.runner);
    this.usage = new RedisUsageStore(this.runner);
    this.events = new RedisEventStore(log);
    this.outbox = new RedisEventOutbox(log);
    this.deliveries = new RedisDeliveryStore(log);
  }

  /**
   * Resolves when Redis answers PING (on a Cluster: the node ioredis picks).
   * @throws ParleyError `service_unavailable` when it does not within `timeoutMs`.
   */
  async ping(): Promise<void> {
    await this.runner.run((client) => client.ping());
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
