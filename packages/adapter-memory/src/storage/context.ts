/** @module What the in-process stores share: the workspaces' records, the event log and the deliveries log. */
import type { Agent, Conversation, DomainEvent, Message } from '@parley/core';
import type { EventDraft, WebhookEndpointRecord } from '@parley/core/adapter';
import type { MemoryDeliveryLog } from '../memory-deliveries.js';
import type { MemoryEventLog } from '../memory-event-log.js';
import type { RecordIndex } from '../record-index.js';

/** A workspace's records; every record held here is deep-frozen (`frozenCopy`). */
export interface Workspace {
  agents: RecordIndex<Agent>;
  conversations: RecordIndex<Conversation>;
  /** Per conversation, sorted by id ascending. */
  messages: Map<string, Message[]>;
  webhookEndpoints: RecordIndex<WebhookEndpointRecord>;
  /** Usage counters per UTC day (`usageIncrements` of `@parley/core`). */
  usage: Map<string, Record<string, number>>;
}

/** What every store of one `MemoryStorage` reads and writes. */
export interface StoreContext {
  /** The workspace's records, created empty on first use. */
  workspaceOf(id: string): Workspace;
  /** Events and the outbox of every workspace. */
  log: MemoryEventLog;
  /** Delivery attempts of every workspace. */
  deliveryLog: MemoryDeliveryLog;
}

/** A single read's answer: the stored (frozen) record itself, or `null`. */
export const found = <T>(value: T | undefined): T | null => value ?? null;

/** The event a change records: a draft completed with the record as stored, a complete event as given. */
export function eventOf(event: EventDraft | DomainEvent, record: DomainEvent['data']): DomainEvent {
  if ('data' in event) return event;
  // A literal, not `{ ...event, data }`: on Node 20 that spread gives every object a hidden class
  // of its own (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
  return { id: event.id, type: event.type, workspaceId: event.workspaceId, occurredAt: event.occurredAt, data: record };
}
