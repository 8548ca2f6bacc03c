/**
 * @module {@link PostgresStorage}: the storage port on PostgreSQL or PGlite, and its retention sweep.
 *
 * Guarantees (ports/storage.ts): each write, its preconditions (If-Match versions, conditions,
 * an inactive agent, a completed conversation) and the event it records (log and outbox) are one
 * SQL statement — a declarative change is merged in the database (storage/changes.ts), so
 * concurrent writers of one row queue on its lock instead of retrying. Every statement is
 * unnamed, so it works behind a transaction-mode pooler.
 */
import { DEFAULT_EVENT_RETENTION_MS, DEFAULT_OUTBOX_LEASE_MS, positiveMs } from '@parley/core/adapter';
import type {
  AgentStore,
  ConversationStore,
  DeliveryStore,
  EventOutbox,
  EventStore,
  MessageStore,
  Storage,
  UsageStore,
  WebhookEndpointStore,
} from '@parley/core/adapter';
import { quoteSchema, DEFAULT_SCHEMA } from './schema.js';
import type { Sql } from './sql.js';
import { agentStore } from './storage/agents.js';
import type { StoreContext } from './storage/context.js';
import { conversationStore } from './storage/conversations.js';
import { deliveryStore } from './storage/deliveries.js';
import { eventStore, outboxStore, Wakeup } from './storage/events.js';
import { messageStore } from './storage/messages.js';
import { usageStore } from './storage/usage.js';
import { webhookEndpointStore } from './storage/webhook-endpoints.js';

/** Settings of {@link PostgresStorage}. */
export interface PostgresStorageOptions {
  /** The connection (`sqlFromPool` / `sqlFromPglite`); the schema must be migrated (`migrate`). */
  sql: Sql;
  /** The schema holding Parley's tables (default `parley`). */
  schema?: string;
  /** How long events and delivery attempts are kept, in ms (default 14 days). */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker before it is handed out again, in ms (default 30 s). */
  outboxLeaseMs?: number;
}

/** {@link Storage} on PostgreSQL (node-postgres) or PGlite. */
export class PostgresStorage implements Storage {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly events: EventStore;
  readonly outbox: EventOutbox;
  readonly deliveries: DeliveryStore;
  readonly usage: UsageStore;
  private readonly context: StoreContext;

  constructor(options: PostgresStorageOptions) {
    const retentionMs = positiveMs(options.eventRetentionMs, DEFAULT_EVENT_RETENTION_MS, 'eventRetentionMs');
    const leaseMs = positiveMs(options.outboxLeaseMs, DEFAULT_OUTBOX_LEASE_MS, 'outboxLeaseMs');
    const wakeup = new Wakeup();
    this.context = {
      sql: options.sql,
      s: quoteSchema(options.schema ?? DEFAULT_SCHEMA),
      retentionMs: Math.round(retentionMs),
      leaseMs: Math.round(leaseMs),
      recorded: () => wakeup.notify(),
    };
    this.agents = agentStore(this.context);
    this.conversations = conversationStore(this.context);
    this.messages = messageStore(this.context);
    this.webhookEndpoints = webhookEndpointStore(this.context);
    this.events = eventStore(this.context);
    this.outbox = outboxStore(this.context, wakeup);
    this.deliveries = deliveryStore(this.context);
    this.usage = usageStore(this.context);
  }

  async ping(): Promise<void> {
    await this.context.sql.query('SELECT 1');
  }
}
