/**
 * @module The in-process storage adapter.
 *
 * Guarantees: everything lives in this process's memory and is gone when it exits; each method
 * runs synchronously inside one event-loop turn, so every operation — a write together with its
 * precondition check and the event it records in the log and outbox — is atomic with respect to
 * the others. Records are cloned on the way in and out. Lists sort the workspace's records
 * (O(n log n)); history pages are a binary search over the conversation's id-sorted array
 * (O(log n + limit)); event pages are a binary search over the commit-ordered log.
 */
import {
  ErrorCode,
  ParleyError,
  systemClock,
  type Agent,
  type AgentStore,
  type Clock,
  type Conversation,
  type ConversationStore,
  type DeliveryStore,
  type DomainEvent,
  type EventOutbox,
  type EventStore,
  type Message,
  type MessagePage,
  type MessageStore,
  type OffsetPage,
  type PageResult,
  type Plant,
  type PlantStore,
  type Storage,
  type Update,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
} from '@parley/core';
import { MemoryDeliveryLog } from './memory-deliveries.js';
import { MemoryEventLog } from './memory-event-log.js';
import { lowerBound } from './sorted.js';

/** Settings of {@link MemoryStorage}; every one has a default. */
export interface MemoryStorageOptions {
  /** How long events and delivery attempts are kept, in ms (default 14 days). */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker before it is handed out again, in ms (default 30 s). */
  outboxLeaseMs?: number;
  /** The clock retention and leases are measured with (default the system clock). */
  clock?: Clock;
}

/** Default `eventRetentionMs`: 14 days. */
export const DEFAULT_EVENT_RETENTION_MS = 14 * 24 * 60 * 60 * 1000;
/** Default `outboxLeaseMs`: 30 s. */
export const DEFAULT_OUTBOX_LEASE_MS = 30_000;

interface Workspace {
  agents: Map<string, Agent>;
  conversations: Map<string, Conversation>;
  /** Per conversation, sorted by id ascending. */
  messages: Map<string, Message[]>;
  webhookEndpoints: Map<string, WebhookEndpointRecord>;
  plants: Map<number, Plant>;
  plantsSeeded: boolean;
}

function newestFirst<T extends { id: string }>(records: Iterable<T>, keep: (record: T) => boolean, page: OffsetPage): PageResult<T> {
  const matching = [...records].filter(keep).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { items: matching.slice(page.offset, page.offset + page.limit).map((record) => structuredClone(record)), total: matching.length };
}

const copy = <T>(value: T | undefined): T | null => (value === undefined ? null : structuredClone(value));

/** Attempts of {@link applyUpdate} before it gives up, as the Redis adapter's compare-and-set. */
const UPDATE_ATTEMPTS = 50;

/**
 * Applies a compare-and-set `update` to `stored`: the function sees a copy, and what it returns is
 * stored as a copy. Stored records are replaced, never mutated, so if the record was replaced
 * while the function ran (a write it set off, which runs synchronously here) the function is
 * called again on the new one. Returns the stored record after the call and the event to record,
 * if any. Throws what `update` throws, having written nothing.
 */
function applyUpdate<T extends { id: string }>(records: Map<string, T>, id: string, update: Update<T>): { record: T; event?: DomainEvent } | null {
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
    const stored = records.get(id);
    if (!stored) return null;
    const change = update(structuredClone(stored));
    if (records.get(id) !== stored) continue;
    if (!change) return { record: structuredClone(stored) };
    // The key is the id the caller named: a change cannot move a record to another id.
    records.set(id, structuredClone({ ...change.record, id }));
    return { record: structuredClone({ ...change.record, id }), ...(change.event && { event: change.event }) };
  }
  throw new ParleyError(ErrorCode.serviceUnavailable, 'The record kept changing during the update; try again.');
}

/**
 * {@link Storage} in this process's memory: for tests, development and single-process servers.
 * Events, the outbox and the deliveries log are lost with the process like everything else.
 */
export class MemoryStorage implements Storage {
  private readonly workspaces = new Map<string, Workspace>();
  private readonly log: MemoryEventLog;
  private readonly deliveryLog: MemoryDeliveryLog;

  constructor(options: MemoryStorageOptions = {}) {
    const clock = options.clock ?? systemClock;
    const retentionMs = options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS;
    if (!(retentionMs > 0)) throw new RangeError('eventRetentionMs must be a positive number of ms.');
    const leaseMs = options.outboxLeaseMs ?? DEFAULT_OUTBOX_LEASE_MS;
    if (!(leaseMs > 0)) throw new RangeError('outboxLeaseMs must be a positive number of ms.');
    this.log = new MemoryEventLog({ clock, retentionMs, leaseMs });
    this.deliveryLog = new MemoryDeliveryLog({ clock, retentionMs });
  }

  private workspace(id: string): Workspace {
    let workspace = this.workspaces.get(id);
    if (!workspace) {
      workspace = { agents: new Map(), conversations: new Map(), messages: new Map(), webhookEndpoints: new Map(), plants: new Map(), plantsSeeded: false };
      this.workspaces.set(id, workspace);
    }
    return workspace;
  }

  readonly agents: AgentStore = {
    insert: async (workspaceId, agent, event) => {
      this.workspace(workspaceId).agents.set(agent.id, structuredClone(agent));
      this.log.record(workspaceId, event);
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).agents.get(id)),
    list: async (workspaceId, { status, ...page }) =>
      newestFirst(this.workspace(workspaceId).agents.values(), (agent) => status === undefined || agent.status === status, page),
    update: async (workspaceId, id, update) => {
      const changed = applyUpdate(this.workspace(workspaceId).agents, id, update);
      if (changed?.event) this.log.record(workspaceId, changed.event);
      return changed?.record ?? null;
    },
    delete: async (workspaceId, id, event) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(id);
      if (!agent) return null;
      // Built before anything is removed: if it throws, nothing is deleted.
      const deleted = event(structuredClone(agent));
      workspace.agents.delete(id);
      for (const conversation of workspace.conversations.values()) {
        if (conversation.agentId !== id) continue;
        workspace.conversations.delete(conversation.id);
        workspace.messages.delete(conversation.id);
      }
      this.log.record(workspaceId, deleted);
      return structuredClone(agent);
    },
  };

  readonly conversations: ConversationStore = {
    insert: async (workspaceId, conversation, event) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(conversation.agentId);
      if (!agent) return 'agent_not_found';
      if (agent.status !== 'active') return 'agent_inactive';
      workspace.conversations.set(conversation.id, structuredClone(conversation));
      this.log.record(workspaceId, event);
      return 'inserted';
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).conversations.get(id)),
    list: async (workspaceId, { agentId, userId, status, ...page }) => {
      const matches = (conversation: Conversation) =>
        (agentId === undefined || conversation.agentId === agentId) &&
        (userId === undefined || conversation.userId === userId) &&
        (status === undefined || conversation.status === status);
      return newestFirst(this.workspace(workspaceId).conversations.values(), matches, page);
    },
    update: async (workspaceId, id, update) => {
      const { conversations } = this.workspace(workspaceId);
      const agentId = conversations.get(id)?.agentId;
      const changed = applyUpdate(conversations, id, (current) => {
        const change = update(current);
        // Callers never move a conversation to another agent; the stored agent is kept.
        return change && { ...change, record: { ...change.record, agentId: agentId! } };
      });
      if (changed?.event) this.log.record(workspaceId, changed.event);
      return changed?.record ?? null;
    },
    delete: async (workspaceId, id, check) => {
      const workspace = this.workspace(workspaceId);
      const stored = workspace.conversations.get(id);
      // Checked in the same synchronous section as the removal: if it throws, nothing is deleted.
      if (stored && check) check(structuredClone(stored));
      if (!workspace.conversations.delete(id)) return false;
      workspace.messages.delete(id);
      return true;
    },
  };

  readonly messages: MessageStore = {
    append: async (workspaceId, message, event) => {
      const workspace = this.workspace(workspaceId);
      const conversation = workspace.conversations.get(message.conversationId);
      if (!conversation) return 'conversation_not_found';
      if (conversation.status !== 'active') return 'conversation_completed';
      let history = workspace.messages.get(message.conversationId);
      if (!history) workspace.messages.set(message.conversationId, (history = []));
      // Ids normally arrive in order (append at the end); a late one is placed by binary search.
      history.splice(lowerBound(history, message.id), 0, structuredClone(message));
      // Never backwards: a late-arriving older message leaves both where they are (ports/storage.ts).
      // Replaced, not mutated: a compare-and-set in progress sees the change (applyUpdate).
      const at = message.createdAt;
      workspace.conversations.set(conversation.id, {
        ...conversation,
        lastMessageAt: conversation.lastMessageAt === null || at > conversation.lastMessageAt ? at : conversation.lastMessageAt,
        updatedAt: at > conversation.updatedAt ? at : conversation.updatedAt,
      });
      this.log.record(workspaceId, event);
      return 'appended';
    },
    get: async (workspaceId, conversationId, id) => {
      const history = this.workspace(workspaceId).messages.get(conversationId) ?? [];
      const found = history[lowerBound(history, id)];
      return found?.id === id ? structuredClone(found) : null;
    },
    page: async (workspaceId, conversationId, { before, after, limit, requireConversation }): Promise<MessagePage | null> => {
      if (requireConversation && !this.workspace(workspaceId).conversations.has(conversationId)) return null;
      const history = this.workspace(workspaceId).messages.get(conversationId) ?? [];
      if (after !== undefined) {
        const at = lowerBound(history, after);
        if (history[at]?.id !== after) return null;
        const end = Math.min(history.length, at + 1 + limit);
        return { messages: history.slice(at + 1, end).map((message) => structuredClone(message)), hasMore: end < history.length };
      }
      let end = history.length;
      if (before !== undefined) {
        end = lowerBound(history, before);
        if (history[end]?.id !== before) return null;
      }
      const start = Math.max(0, end - limit);
      return { messages: history.slice(start, end).map((message) => structuredClone(message)), hasMore: start > 0 };
    },
  };

  readonly webhookEndpoints: WebhookEndpointStore = {
    insert: async (workspaceId, endpoint) => {
      this.workspace(workspaceId).webhookEndpoints.set(endpoint.id, structuredClone(endpoint));
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).webhookEndpoints.get(id)),
    list: async (workspaceId, page) => newestFirst(this.workspace(workspaceId).webhookEndpoints.values(), () => true, page),
    subscribed: async (workspaceId, type) =>
      [...this.workspace(workspaceId).webhookEndpoints.values()]
        .filter((endpoint) => endpoint.enabled && endpoint.events.includes(type))
        .map((endpoint) => structuredClone(endpoint)),
    // Endpoints emit no events: a change's `event` is ignored (ports/storage.ts).
    update: async (workspaceId, id, update) => applyUpdate(this.workspace(workspaceId).webhookEndpoints, id, update)?.record ?? null,
    delete: async (workspaceId, id, check) => {
      const endpoints = this.workspace(workspaceId).webhookEndpoints;
      const stored = endpoints.get(id);
      // Checked in the same synchronous section as the removal: if it throws, nothing is deleted.
      if (stored && check) check(structuredClone(stored));
      if (!endpoints.delete(id)) return false;
      this.deliveryLog.remove(workspaceId, id);
      return true;
    },
  };

  readonly events: EventStore = {
    get: async (workspaceId, id) => this.log.get(workspaceId, id),
    list: async (workspaceId, query) => this.log.list(workspaceId, query),
  };

  readonly outbox: EventOutbox = {
    take: (max, waitMs) => this.log.take(max, waitMs),
    ack: async (batch) => this.log.ack(batch),
  };

  readonly deliveries: DeliveryStore = {
    record: async (workspaceId, attempt) => {
      if (!this.workspace(workspaceId).webhookEndpoints.has(attempt.endpointId)) return;
      this.deliveryLog.record(workspaceId, attempt);
    },
    get: async (workspaceId, endpointId, id) => this.deliveryLog.get(workspaceId, endpointId, id),
    list: async (workspaceId, endpointId, query) => this.deliveryLog.list(workspaceId, endpointId, query),
    delivered: async (workspaceId, endpointId, eventIds) => this.deliveryLog.delivered(workspaceId, endpointId, eventIds),
  };

  readonly plants: PlantStore = {
    seed: async (workspaceId, plants) => {
      const workspace = this.workspace(workspaceId);
      if (workspace.plantsSeeded) return;
      workspace.plantsSeeded = true;
      for (const plant of plants) workspace.plants.set(plant.id, structuredClone(plant));
    },
    list: async (workspaceId, limit) => {
      const plants = [...this.workspace(workspaceId).plants.values()].sort((a, b) => a.id - b.id);
      return plants.slice(0, limit ?? plants.length).map((plant) => structuredClone(plant));
    },
    insert: async (workspaceId, plant) => {
      const { plants } = this.workspace(workspaceId);
      if (plants.has(plant.id)) return false;
      plants.set(plant.id, structuredClone(plant));
      return true;
    },
    delete: async (workspaceId, id) => this.workspace(workspaceId).plants.delete(id),
  };

  async ping(): Promise<void> {}
}

