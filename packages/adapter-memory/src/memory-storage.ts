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
 * event pages are a binary search over the commit-ordered log.
 */
import {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_OUTBOX_LEASE_MS,
  ErrorCode,
  positiveMs,
  ParleyError,
  subscribesTo,
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
  type Plant,
  type PlantStore,
  type Storage,
  type Update,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
  frozenCopy,
} from '@parley/core';
import { MemoryDeliveryLog } from './memory-deliveries.js';
import { MemoryEventLog } from './memory-event-log.js';
import { RecordIndex } from './record-index.js';
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

/** A workspace's records; every record held here is deep-frozen (`frozenCopy`). */
interface Workspace {
  agents: RecordIndex<Agent>;
  conversations: RecordIndex<Conversation>;
  /** Per conversation, sorted by id ascending. */
  messages: Map<string, Message[]>;
  webhookEndpoints: RecordIndex<WebhookEndpointRecord>;
  plants: Map<number, Plant>;
  plantsSeeded: boolean;
}

/** A single read's answer: the stored (frozen) record itself, or `null`. */
const found = <T>(value: T | undefined): T | null => value ?? null;

/** Attempts of {@link applyUpdate} before it gives up, as the Redis adapter's compare-and-set. */
const UPDATE_ATTEMPTS = 50;

/**
 * Applies a compare-and-set `update` to the stored record `id`: the function sees the stored
 * (frozen) record, and a frozen copy of what it returns is stored and handed back. Stored records
 * are replaced, never mutated, so if the record was replaced while the function ran (a write it
 * set off, which runs synchronously here) the function is called again on the new one. Returns
 * the stored record after the call and the event to record, if any. Throws what `update` throws,
 * having written nothing.
 */
function applyUpdate<T extends { id: string }>(records: RecordIndex<T>, id: string, update: Update<T>): { record: T; event?: DomainEvent } | null {
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
    const stored = records.get(id);
    if (!stored) return null;
    const change = update(stored);
    if (records.get(id) !== stored) continue;
    if (!change) return { record: stored };
    // The key is the id the caller named: a change cannot move a record to another id.
    const record = frozenCopy({ ...change.record, id });
    records.set(record);
    return { record, ...(change.event && { event: change.event }) };
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
    const retentionMs = positiveMs(options.eventRetentionMs, DEFAULT_EVENT_RETENTION_MS, 'eventRetentionMs');
    const leaseMs = positiveMs(options.outboxLeaseMs, DEFAULT_OUTBOX_LEASE_MS, 'outboxLeaseMs');
    this.log = new MemoryEventLog({ clock, retentionMs, leaseMs });
    this.deliveryLog = new MemoryDeliveryLog({ clock, retentionMs });
  }

  private workspace(id: string): Workspace {
    let workspace = this.workspaces.get(id);
    if (!workspace) {
      workspace = {
        agents: new RecordIndex(),
        conversations: new RecordIndex(),
        messages: new Map(),
        webhookEndpoints: new RecordIndex(),
        plants: new Map(),
        plantsSeeded: false,
      };
      this.workspaces.set(id, workspace);
    }
    return workspace;
  }

  readonly agents: AgentStore = {
    insert: async (workspaceId, agent, event) => {
      const stored = frozenCopy(agent);
      this.workspace(workspaceId).agents.set(stored);
      this.log.record(workspaceId, event, agent, stored);
    },
    get: async (workspaceId, id) => found(this.workspace(workspaceId).agents.get(id)),
    list: async (workspaceId, { status, ...page }) =>
      this.workspace(workspaceId).agents.newestFirst(page, status === undefined ? undefined : (agent) => agent.status === status),
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
      const deleted = event(agent);
      workspace.agents.delete(id);
      for (const conversation of workspace.conversations.deleteWhere((conversation) => conversation.agentId === id)) {
        workspace.messages.delete(conversation.id);
      }
      this.log.record(workspaceId, deleted);
      return agent;
    },
  };

  readonly conversations: ConversationStore = {
    insert: async (workspaceId, conversation, event) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(conversation.agentId);
      if (!agent) return 'agent_not_found';
      if (agent.status !== 'active') return 'agent_inactive';
      const stored = frozenCopy(conversation);
      workspace.conversations.set(stored);
      this.log.record(workspaceId, event, conversation, stored);
      return 'inserted';
    },
    get: async (workspaceId, id) => found(this.workspace(workspaceId).conversations.get(id)),
    list: async (workspaceId, { agentId, userId, status, ...page }) => {
      const filtered = agentId !== undefined || userId !== undefined || status !== undefined;
      const matches = (conversation: Conversation) =>
        (agentId === undefined || conversation.agentId === agentId) &&
        (userId === undefined || conversation.userId === userId) &&
        (status === undefined || conversation.status === status);
      return this.workspace(workspaceId).conversations.newestFirst(page, filtered ? matches : undefined);
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
      if (stored && check) check(stored);
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
      const stored = frozenCopy(message);
      const last = history[history.length - 1];
      if (last === undefined || last.id < stored.id) history.push(stored);
      else history.splice(lowerBound(history, stored.id), 0, stored);
      // Never backwards: a late-arriving older message leaves both where they are (ports/storage.ts).
      // Replaced, not mutated: a compare-and-set in progress sees the change (applyUpdate).
      const at = message.createdAt;
      // `conversation` is a stored, deep-frozen record: its insides are shared, not copied.
      workspace.conversations.set(
        Object.freeze({
          ...conversation,
          lastMessageAt: conversation.lastMessageAt === null || at > conversation.lastMessageAt ? at : conversation.lastMessageAt,
          updatedAt: at > conversation.updatedAt ? at : conversation.updatedAt,
        }),
      );
      this.log.record(workspaceId, event, message, stored);
      return 'appended';
    },
    get: async (workspaceId, conversationId, id) => {
      const history = this.workspace(workspaceId).messages.get(conversationId) ?? [];
      const message = history[lowerBound(history, id)];
      return message?.id === id ? message : null;
    },
    page: async (workspaceId, conversationId, { before, after, limit, requireConversation }): Promise<MessagePage | null> => {
      if (requireConversation && !this.workspace(workspaceId).conversations.has(conversationId)) return null;
      const history = this.workspace(workspaceId).messages.get(conversationId) ?? [];
      if (after !== undefined) {
        const at = lowerBound(history, after);
        if (history[at]?.id !== after) return null;
        const end = Math.min(history.length, at + 1 + limit);
        return { messages: history.slice(at + 1, end), hasMore: end < history.length };
      }
      let end = history.length;
      if (before !== undefined) {
        end = lowerBound(history, before);
        if (history[end]?.id !== before) return null;
      }
      const start = Math.max(0, end - limit);
      return { messages: history.slice(start, end), hasMore: start > 0 };
    },
  };

  readonly webhookEndpoints: WebhookEndpointStore = {
    insert: async (workspaceId, endpoint) => {
      this.workspace(workspaceId).webhookEndpoints.set(frozenCopy(endpoint));
    },
    get: async (workspaceId, id) => found(this.workspace(workspaceId).webhookEndpoints.get(id)),
    list: async (workspaceId, page) => this.workspace(workspaceId).webhookEndpoints.newestFirst(page),
    subscribed: async (workspaceId, type) =>
      [...this.workspace(workspaceId).webhookEndpoints.values()].filter((endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type)),
    // Endpoints emit no events: a change's `event` is ignored (ports/storage.ts).
    update: async (workspaceId, id, update) => applyUpdate(this.workspace(workspaceId).webhookEndpoints, id, update)?.record ?? null,
    delete: async (workspaceId, id, check) => {
      const endpoints = this.workspace(workspaceId).webhookEndpoints;
      const stored = endpoints.get(id);
      // Checked in the same synchronous section as the removal: if it throws, nothing is deleted.
      if (stored && check) check(stored);
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
      for (const plant of plants) workspace.plants.set(plant.id, frozenCopy(plant));
    },
    list: async (workspaceId, limit) => {
      const plants = [...this.workspace(workspaceId).plants.values()].sort((a, b) => a.id - b.id);
      return plants.slice(0, limit ?? plants.length);
    },
    insert: async (workspaceId, plant) => {
      const { plants } = this.workspace(workspaceId);
      if (plants.has(plant.id)) return false;
      plants.set(plant.id, frozenCopy(plant));
      return true;
    },
    delete: async (workspaceId, id) => this.workspace(workspaceId).plants.delete(id),
  };

  async ping(): Promise<void> {}
}

