/** @module Example `data` of every event type, sent by `POST /api/webhooks/:id/test`. */
import type { Agent, Conversation, DomainEvent, EventType, Message } from '../types.js';

/**
 * The resource an event of `type` carries, filled with example values stamped `at` (ISO 8601):
 * an agent for `agent.*`, a conversation for `conversation.*`, a message for `message.*`, shaped
 * exactly like the real ones so a receiver's parsing is exercised.
 */
export function exampleEventData(type: EventType, at: string): DomainEvent['data'] {
  const agent: Agent = {
    id: 'agt_01EXAMPLE0000000000000000',
    name: 'Example agent',
    description: 'An agent of a test event',
    model: 'modelA-4',
    systemPrompt: null,
    temperature: null,
    maxTokens: null,
    configuration: {},
    status: type === 'agent.deleted' ? 'inactive' : 'active',
    createdAt: at,
    updatedAt: at,
  };
  const conversation: Conversation = {
    id: 'conv_01EXAMPLE000000000000000',
    agentId: agent.id,
    userId: 'user-123',
    metadata: {},
    status: type === 'conversation.completed' ? 'completed' : 'active',
    createdAt: at,
    updatedAt: at,
    lastMessageAt: type === 'conversation.completed' ? at : null,
  };
  const message: Message = {
    id: 'msg_01EXAMPLE0000000000000000',
    conversationId: conversation.id,
    content: type === 'message.received' ? 'Hello! How can I help?' : 'Hello, I have a question.',
    role: type === 'message.received' ? 'assistant' : 'user',
    metadata: {},
    createdAt: at,
  };
  if (type.startsWith('agent.')) return agent;
  if (type.startsWith('conversation.')) return conversation;
  return message;
}
