/**
 * @module The in-process storage adapter.
 *
 * Guarantees: everything lives in this process's memory and is gone when it exits; each method
 * runs synchronously inside one event-loop turn, so every operation — a write together with its
 * precondition check and the event it records in the log and outbox — is atomic with respect to
 * the others. Records are stored as deep-frozen copies (`frozenCopy`) and handed out as they are,
 * with no copy per read; a change stores a new record (copy on write), so a record handed out
 * never changes and cannot be changed (ports/storage.ts). Lists read each workspace's id-sorted
 * index from the newest end (O(offset + limit), plus one pass to count matches when filtered);
 * history pages are a binary search over the conversation's id-sorted array (O(log n + limit));
 * event pages are a binary search over the commit-ordered log. Each store is a factory in
 * `storage/`, over the records this class holds (`storage/context.ts`).
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
  type EventOutbox,
  type EventStore,
  type MessageStore,
  type Storage,
  type UsageStore,
  type WebhookEndpointStore,
} from '@parley/core/adapter';
import { MemoryDeliveryLog } from './memory-deliveries.js';
import { MemoryEventLog } from './memory-event-log.js';
import { RecordIndex } from './record-index.js';
import { agentStore } from './storage/agents.js';
import type { StoreContext, Workspace } from './storage/context.js';
import { conversationStore } from './storage/conversations.js';
import { deliveryStore } from './storage/deliveries.js';
import { eventStore, outboxStore } from './storage/events.js';
import { messageStore } from './storage/messages.js';
import { usageStore } from './storage/usage.js';
import { webhookEndpointStore } from './storage/webhook-endpoints.js';

/** Settings of {@link MemoryStorage}; every one has a default. */
export interface MemoryStorageOptions {
  /** How long events and delivery attempts are kept, in ms (default 14 days). */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker before it is handed out again, in ms (default 30 s). */
  outboxLeaseMs?: number;
  /** The clock retention and leases are measured with (default the system clock). */
  clock?: Clock;
}

/**
 * {@link Storage} in this process's memory: for tests, development and single-process servers.
 * Events, the outbox and the deliveries log are lost with the process like everything else.
 */
export class MemoryStorage implements Storage {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly events: EventStore;
  readonly outbox: EventOutbox;
  readonly deliveries: DeliveryStore;
  readonly usage: UsageStore;

  constructor(options: MemoryStorageOptions = {}) {
    const clock = options.clock ?? systemClock;
    const retentionMs = positiveMs(options.eventRetentionMs, DEFAULT_EVENT_RETENTION_MS, 'eventRetentionMs');
    const leaseMs = positiveMs(options.outboxLeaseMs, DEFAULT_OUTBOX_LEASE_MS, 'outboxLeaseMs');
    const workspaces = new Map<string, Workspace>();
    const context: StoreContext = {
      workspaceOf: (id) => {
        let workspace = workspaces.get(id);
        if (!workspace) {
          workspace = {
            agents: new RecordIndex(),
            conversations: new RecordIndex(),
            messages: new Map(),
            webhookEndpoints: new RecordIndex(),
            usage: new Map(),
          };
          workspaces.set(id, workspace);
        }
        return workspace;
      },
      log: new MemoryEventLog({ clock, retentionMs, leaseMs }),
      deliveryLog: new MemoryDeliveryLog({ clock, retentionMs }),
    };
    this.agents = agentStore(context);
    this.conversations = conversationStore(context);
    this.messages = messageStore(context);
    this.webhookEndpoints = webhookEndpointStore(context);
    this.events = eventStore(context);
    this.outbox = outboxStore(context);
    this.deliveries = deliveryStore(context);
    this.usage = usageStore(context);
  }

  async ping(): Promise<void> {}
}
