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
  positiveMs,
  subscribesTo,
  systemClock,
  type Agent,
  type AgentStore,
  type Clock,
  type Conversation,
  type ConversationStore,
  type DeliveryStore,
  type DomainEvent,
  type EventDraft,
  type EventOutbox,
  type EventStore,
  type Message,
  type MessagePage,
  type MessageStore,
  type Plant,
  type PlantStore,
  type Storage,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
  type UsageStore,
  daysBetween,
  frozenCopy,
  usageDay,
  usageIncrements,
  usageTotals,
  recordVersion,
} from '@parley/core';
import { applyChange, meets, versioned } from './memory-changes.js';
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
  /** Usage counters per UTC day (`usageIncrements` of `@parley/core`). */
  usage: Map<string, Record<string, number>>;
}

/** A single read's answer: the stored (frozen) record itself, or `null`. */
const found = <T>(value: T | undefined): T | null => value ?? null;

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
        usage: new Map(),
      };
      this.workspaces.set(id, workspace);
    }
    return workspace;
  }

  readonly agents: AgentStore = {
    insert: async (workspaceId, agent, event) => {
      const stored = versioned(frozenCopy(agent), 1);
      this.workspace(workspaceId).agents.set(stored);
      this.log.record(workspaceId, event, agent, stored);
    },
    get: async (workspaceId, id) => found(this.workspace(workspaceId).agents.get(id)),
    list: async (workspaceId, { status, ...page }) =>
      this.workspace(workspaceId).agents.newestFirst(page, status === undefined ? undefined : (agent) => agent.status === status),
    update: async (workspaceId, id, change) => {
      const result = applyChange(this.workspace(workspaceId).agents, id, change);
      if (result?.outcome === 'applied' && change.event) this.log.record(workspaceId, eventOf(change.event, result.record));
      return result;
    },
    delete: async (workspaceId, id, event, conditions = {}) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(id);
      if (!agent) return null;
      if (!meets(agent, conditions)) return { outcome: 'unmet', record: agent };
      workspace.agents.delete(id);
      for (const conversation of workspace.conversations.deleteWhere((conversation) => conversation.agentId === id)) {
        workspace.messages.delete(conversation.id);
      }
      this.log.record(workspaceId, eventOf(event, agent));
      return { outcome: 'applied', record: agent };
    },
  };

  readonly conversations: ConversationStore = {
    insert: async (workspaceId, conversation, event) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(conversation.agentId);
      if (!agent) return 'agent_not_found';
      if (agent.status !== 'active') return 'agent_inactive';
      const stored = versioned(frozenCopy(conversation), 1);
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
    update: async (workspaceId, id, change) => {
      const result = applyChange(this.workspace(workspaceId).conversations, id, change);
      if (result?.outcome === 'applied' && change.event) this.log.record(workspaceId, eventOf(change.event, result.record));
      return result;
    },
    delete: async (workspaceId, id, conditions = {}, event) => {
      const workspace = this.workspace(workspaceId);
      const stored = workspace.conversations.get(id);
      if (!stored) return null;
      if (!meets(stored, conditions)) return { outcome: 'unmet', record: stored };
      workspace.conversations.delete(id);
      workspace.messages.delete(id);
      if (event) this.log.record(workspaceId, eventOf(event, stored));
      return { outcome: 'applied', record: stored };
    },
  };

  readonly messages: MessageStore = {
    append: async (workspaceId, message, event, usage) => {
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
      const at = message.createdAt;
      // `conversation` is a stored, deep-frozen record: its insides are shared, not copied.
      workspace.conversations.set(
        versioned(
          {
            ...conversation,
            lastMessageAt: conversation.lastMessageAt === null || at > conversation.lastMessageAt ? at : conversation.lastMessageAt,
            updatedAt: at > conversation.updatedAt ? at : conversation.updatedAt,
          },
          recordVersion(conversation) + 1,
        ),
      );
      this.log.record(workspaceId, event, message, stored);
      if (usage) {
        const day = usageDay(message.createdAt);
        let counters = workspace.usage.get(day);
        if (!counters) workspace.usage.set(day, (counters = {}));
        for (const [field, increment] of usageIncrements(usage)) counters[field] = (counters[field] ?? 0) + increment;
      }
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

  readonly usage: UsageStore = {
    totals: async (workspaceId, { from, to, groupBy }) => {
      const { usage } = this.workspace(workspaceId);
      const days = new Map(daysBetween(from, to).flatMap((day) => (usage.has(day) ? [[day, usage.get(day)!] as const] : [])));
      return usageTotals(days, groupBy);
    },
  };

  readonly webhookEndpoints: WebhookEndpointStore = {
    insert: async (workspaceId, endpoint) => {
      this.workspace(workspaceId).webhookEndpoints.set(versioned(frozenCopy(endpoint), 1));
    },
    get: async (workspaceId, id) => found(this.workspace(workspaceId).webhookEndpoints.get(id)),
    list: async (workspaceId, page) => this.workspace(workspaceId).webhookEndpoints.newestFirst(page),
    subscribed: async (workspaceId, type) =>
      [...this.workspace(workspaceId).webhookEndpoints.values()].filter((endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type)),
    // Endpoints emit no events: a change's `event` is ignored (ports/storage.ts).
    update: async (workspaceId, id, change) => applyChange(this.workspace(workspaceId).webhookEndpoints, id, change),
    delete: async (workspaceId, id, conditions = {}) => {
      const endpoints = this.workspace(workspaceId).webhookEndpoints;
      const stored = endpoints.get(id);
      if (!stored) return null;
      if (!meets(stored, conditions)) return { outcome: 'unmet', record: stored };
      endpoints.delete(id);
      this.deliveryLog.remove(workspaceId, id);
      return { outcome: 'applied', record: stored };
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

/** The event a change records: a draft completed with the record as stored, a complete event as given. */
function eventOf(event: EventDraft | DomainEvent, record: DomainEvent['data']): DomainEvent {
  if ('data' in event) return event;
  // A literal, not `{ ...event, data }`: on Node 20 that spread gives every object a hidden class
  // of its own (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
  return { id: event.id, type: event.type, workspaceId: event.workspaceId, occurredAt: event.occurredAt, data: record };
}
