/** @module Records with deterministic, time-sortable ids for the storage contract suite. */
import { createUlidGenerator, type IdPrefix } from '../../ports/ids.js';
import type { EventDraft, Storage } from '../../ports/storage.js';
import type {
  Agent,
  Conversation,
  DeliveryAttempt,
  DomainEvent,
  EventType,
  Message,
  WebhookEndpointRecord,
} from '../../types.js';
import { ManualClock } from '../clock.js';

/** The two workspaces every suite plays with. */
export const WS = 'ws_contract_a';
export const OTHER_WS = 'ws_contract_b';

/**
 * Builds records whose ids come from the real ULID generator on a clock that moves 1 ms per id,
 * so each new record is strictly newer than the previous one of any kind.
 */
export class Records {
  private readonly clock = new ManualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  private readonly ids = createUlidGenerator(() => this.clock.now());
  // Events and delivery attempts get ids of the real time: an adapter may count retention from an
  // event's id or `occurredAt`, or from an attempt's id, as well as from when it recorded them, and
  // the suite must not depend on which.
  private readonly eventIds = createUlidGenerator();

  /** A new id of this prefix, newer than every id issued before. */
  id(prefix: IdPrefix): string {
    this.clock.advance(1);
    return this.ids.next(prefix);
  }

  private stamp(): string {
    return new Date(this.clock.now()).toISOString();
  }

  agent(overrides: Partial<Agent> = {}): Agent {
    const id = this.id('agt');
    const now = this.stamp();
    return {
      id,
      name: `Agent ${id.slice(-4)}`,
      description: 'Answers questions about plants.',
      model: 'modelA-4',
      systemPrompt: null,
      temperature: 0.7,
      maxTokens: null,
      configuration: { tools: ['search'], nested: { level: { deeper: true } } },
      tools: [
        {
          name: 'lookup',
          description: 'Looks an order up.',
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
          kind: 'client',
        },
      ],
      maxSteps: 8,
      autoReply: true,
      mcpServers: [],
      status: 'active',
      createdAt: now,
      updatedAt: now,
      ...overrides,
    };
  }

  conversation(agentId: string, overrides: Partial<Conversation> = {}): Conversation {
    const now = this.stamp();
    return {
      id: this.id('conv'),
      agentId,
      userId: null,
      metadata: { channel: 'web' },
      status: 'active',
      createdAt: now,
      updatedAt: now,
      lastMessageAt: null,
      pendingToolCalls: [],
      ...overrides,
    };
  }

  message(conversationId: string, overrides: Partial<Message> = {}): Message {
    const id = this.id('msg');
    return {
      id,
      conversationId,
      content: `content of ${id}`,
      role: 'user',
      metadata: {},
      toolCalls: null,
      toolCallId: null,
      createdAt: this.stamp(),
      ...overrides,
    };
  }

  endpoint(overrides: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord {
    const now = this.stamp();
    return {
      id: this.id('wh'),
      url: 'https://hooks.example.com/parley',
      events: ['agent.created', 'message.sent'],
      enabled: true,
      createdAt: now,
      updatedAt: now,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      disabledReason: null,
      previousSecrets: [],
      failingSince: null,
      ...overrides,
    } as WebhookEndpointRecord;
  }

  /** A new event of `type` about `data`, with a fresh `evt_` id and the current real time. */
  event(workspaceId: string, type: EventType, data: DomainEvent['data']): DomainEvent {
    return {
      id: this.eventIds.next('evt'),
      type,
      workspaceId,
      occurredAt: new Date().toISOString(),
      data: structuredClone(data),
    };
  }

  /** A new event draft of `type` (an update or delete fills in its `data`), like {@link event}. */
  draft(workspaceId: string, type: EventType): EventDraft {
    return { id: this.eventIds.next('evt'), type, workspaceId, occurredAt: new Date().toISOString() };
  }

  /** A delivery attempt of `event` to `endpointId` (a 200 unless overridden), with a new `dlv_` id of the real time. */
  attempt(endpointId: string, event: DomainEvent, overrides: Partial<DeliveryAttempt> = {}): DeliveryAttempt {
    return {
      id: this.eventIds.next('dlv'),
      endpointId,
      eventId: event.id,
      eventType: event.type,
      attempt: 1,
      trigger: 'scheduled',
      status: 200,
      durationMs: 12,
      error: null,
      responseBody: 'ok',
      nextAttemptAt: null,
      createdAt: this.stamp(),
      ...overrides,
    };
  }

  /** The event `messages.append` records for `message` (`message.sent` or `message.received`). */
  sent(workspaceId: string, message: Message): DomainEvent {
    return this.event(workspaceId, message.role === 'assistant' ? 'message.received' : 'message.sent', message);
  }

  /** Inserts a new endpoint into `workspaceId` and returns it. */
  async insertEndpoint(
    storage: Storage,
    workspaceId: string,
    overrides: Partial<WebhookEndpointRecord> = {},
  ): Promise<WebhookEndpointRecord> {
    const endpoint = this.endpoint(overrides);
    await storage.webhookEndpoints.insert({ workspaceId }, endpoint);
    return endpoint;
  }

  /** Inserts `count` new agents into `workspaceId`, one by one; returns their `agent.created` events in order. */
  async insertAgentsWithEvents(storage: Storage, workspaceId: string, count: number): Promise<DomainEvent[]> {
    const events: DomainEvent[] = [];
    for (let index = 0; index < count; index += 1) {
      const agent = this.agent();
      const event = this.event(workspaceId, 'agent.created', agent);
      await storage.agents.insert({ workspaceId }, agent, { event: event });
      events.push(event);
    }
    return events;
  }

  /** Inserts a new agent into `workspaceId` and returns it. */
  async insertAgent(storage: Storage, workspaceId: string, overrides: Partial<Agent> = {}): Promise<Agent> {
    const agent = this.agent(overrides);
    await storage.agents.insert({ workspaceId }, agent, { event: this.event(workspaceId, 'agent.created', agent) });
    return agent;
  }

  /** Inserts a new conversation with `agentId` (which must exist) and returns it. */
  async insertConversation(
    storage: Storage,
    workspaceId: string,
    agentId: string,
    overrides: Partial<Conversation> = {},
  ): Promise<Conversation> {
    const conversation = this.conversation(agentId, overrides);
    const outcome = await storage.conversations.insert({ workspaceId }, conversation, {
      event: this.event(workspaceId, 'conversation.started', conversation),
    });
    if (outcome !== 'inserted')
      throw new Error(`Contract setup: conversations.insert answered ${outcome} for agent ${agentId}.`);
    return conversation;
  }

  /** Appends `count` new messages to a conversation in id order and returns them, oldest first. */
  async appendMessages(
    storage: Storage,
    workspaceId: string,
    conversationId: string,
    count: number,
  ): Promise<Message[]> {
    const messages: Message[] = [];
    for (let index = 0; index < count; index += 1) {
      const message = this.message(conversationId, { role: index % 2 === 0 ? 'user' : 'assistant' });
      const outcome = await storage.messages.append({ workspaceId }, message, {
        event: this.sent(workspaceId, message),
      });
      if (outcome !== 'appended')
        throw new Error(`Contract setup: messages.append answered ${outcome} for ${conversationId}.`);
      messages.push(message);
    }
    return messages;
  }
}

/** The ids of records, for comparing orders. */
/**
 * Runs `mutate`, a caller changing what a store handed out. A store may hand out deep-frozen
 * records instead of copies (ports/storage.ts): then the change throws a TypeError (ESM is strict
 * mode), which serves the contract as well as a copy does — what is checked afterwards is that
 * nothing stored changed. Any other error propagates.
 */
export function mutateResult(mutate: () => void): void {
  try {
    mutate();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

export const ids = (records: ReadonlyArray<{ id: string }>): string[] => records.map((record) => record.id);
