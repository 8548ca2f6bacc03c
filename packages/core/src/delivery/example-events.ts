/** @module Example `data` of every event type, sent by `POST /api/webhooks/:id/test`. */
import type { Agent, Conversation, DomainEvent, EventType, Message } from '../types.js';

/**
 * The resource an event of `type` carries, filled with example values stamped `at` (ISO 8601):
 * an agent for `agent.*`, a conversation for `conversation.*`, a message for `message.*`, the
 * reply's state for `reply.*`, shaped
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
    tools: [],
    maxSteps: 8,
    autoReply: true,
    mcpServers: [],
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
    pendingToolCalls: [],
  };
  const message: Message = {
    id: 'msg_01EXAMPLE0000000000000000',
    conversationId: conversation.id,
    content: type === 'message.received' ? 'Hello! How can I help?' : 'Hello, I have a question.',
    role: type === 'message.received' ? 'assistant' : 'user',
    metadata: {},
    toolCalls: null,
    toolCallId: null,
    createdAt: at,
  };
  const toolCall = { id: 'call_01EXAMPLE0000000000000000', name: 'get_weather', arguments: { city: 'Paris' } };
  if (type === 'reply.failed')
    return {
      conversationId: conversation.id,
      inReplyTo: message.id,
      error: 'The language model failed 3 times (APICallError (HTTP 500)); the reply was given up.',
    };
  if (type === 'reply.cancelled') return { conversationId: conversation.id, inReplyTo: message.id };
  if (type === 'reply.requires_action') {
    return {
      conversationId: conversation.id,
      inReplyTo: message.id,
      toolCalls: [{ ...toolCall, kind: 'client', requiresApproval: false }],
    };
  }
  if (type.startsWith('agent.')) return agent;
  if (type.startsWith('conversation.')) return conversation;
  return message;
}
