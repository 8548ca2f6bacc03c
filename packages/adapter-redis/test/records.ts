/** @module Test support: records with real, strictly increasing ULID ids for Redis-specific tests. */
import { createUlidGenerator, type Agent, type Conversation, type IdPrefix, type Message, type Storage, type WebhookEndpointRecord } from '@parley/core';
import { ManualClock } from '@parley/core/testing';

/** The workspace Redis-specific tests write to (under a unique key prefix). */
export const WS = 'ws_redis_specific';

/** Builds records whose ids move 1 ms per id, so each is newer than the one before. */
export class Records {
  private readonly clock = new ManualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  private readonly ids = createUlidGenerator(() => this.clock.now());

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
      description: '',
      model: 'modelA-4',
      systemPrompt: null,
      temperature: null,
      maxTokens: null,
      configuration: {},
      status: 'active',
      createdAt: now,
      updatedAt: now,
      ...overrides,
    };
  }

  conversation(agentId: string, overrides: Partial<Conversation> = {}): Conversation {
    return { id: this.id('conv'), agentId, userId: null, metadata: {}, status: 'active', createdAt: this.stamp(), ...overrides };
  }

  message(conversationId: string, overrides: Partial<Message> = {}): Message {
    const id = this.id('msg');
    return { id, conversationId, content: `content of ${id}`, role: 'user', metadata: {}, createdAt: this.stamp(), ...overrides };
  }

  endpoint(): WebhookEndpointRecord {
    const now = this.stamp();
    return { id: this.id('wh'), url: 'https://hooks.example.com/p', events: ['agent.created'], enabled: true, createdAt: now, updatedAt: now, secret: 's3cret' };
  }

  async insertAgent(storage: Storage, workspaceId: string, overrides: Partial<Agent> = {}): Promise<Agent> {
    const agent = this.agent(overrides);
    await storage.agents.insert(workspaceId, agent);
    return agent;
  }

  async insertConversation(storage: Storage, workspaceId: string, agentId: string, overrides: Partial<Conversation> = {}): Promise<Conversation> {
    const conversation = this.conversation(agentId, overrides);
    if (!(await storage.conversations.insert(workspaceId, conversation))) throw new Error(`No agent ${agentId}.`);
    return conversation;
  }

  async appendMessages(storage: Storage, workspaceId: string, conversationId: string, count: number): Promise<Message[]> {
    const messages: Message[] = [];
    for (let i = 0; i < count; i += 1) {
      const message = this.message(conversationId);
      if (!(await storage.messages.append(workspaceId, message))) throw new Error(`No conversation ${conversationId}.`);
      messages.push(message);
    }
    return messages;
  }
}
