/** @module The domain records services return and storage ports persist. */

/** Agent statuses (spec §3): new agents are `active`. */
export const AGENT_STATUSES = ['active', 'inactive'] as const;
/** One of {@link AGENT_STATUSES}. */
export type AgentStatus = (typeof AGENT_STATUSES)[number];
/** Models an agent may be created with (spec §2.1). */
export const AGENT_MODELS = ['modelA-4', 'modelA-3.5-turbo', 'modelB-3'] as const;
/** One of {@link AGENT_MODELS}. A stored agent's `model` is a plain string: the list may change. */
export type AgentModel = (typeof AGENT_MODELS)[number];

/** A JSON object as stored in `metadata` and `configuration`. */
export type JsonObject = { [key: string]: unknown };

/** An AI agent of a workspace (spec §2.1). Timestamps are ISO 8601 UTC with milliseconds. */
export interface Agent {
  id: string;
  name: string;
  description: string;
  model: string;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  configuration: JsonObject;
  status: AgentStatus;
  createdAt: string;
  updatedAt: string;
}

/** Conversation statuses (spec §3): `active → completed` is the only transition. */
export const CONVERSATION_STATUSES = ['active', 'completed'] as const;
/** One of {@link CONVERSATION_STATUSES}. */
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/** A conversation with one agent (spec §2.2). */
export interface Conversation {
  id: string;
  agentId: string;
  userId: string | null;
  metadata: JsonObject;
  status: ConversationStatus;
  createdAt: string;
}

/** Who wrote a message (spec §2.3): `assistant` messages emit `message.received`, the others `message.sent`. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;
/** One of {@link MESSAGE_ROLES}. */
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** A message in a conversation (spec §2.3). */
export interface Message {
  id: string;
  conversationId: string;
  content: string;
  role: MessageRole;
  metadata: JsonObject;
  createdAt: string;
}

/** Every event a webhook endpoint can subscribe to (spec §6). */
export const EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'conversation.started',
  'conversation.completed',
  'message.sent',
  'message.received',
] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** A webhook endpoint as the API returns it: never carries the secret (decisions §4). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: EventType[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A webhook endpoint as stored: with its signing secret (`whsec_…` or raw text). */
export interface WebhookEndpointRecord extends WebhookEndpoint {
  secret: string;
}

/** A plant of the sandbox (plants-openapi.json `NewPlant`): `id` is an int64 within JS's safe range. */
export interface Plant {
  id: number;
  name: string;
  tag?: string;
}

/**
 * Something that happened in a workspace, published for webhook delivery (decisions §8).
 * `data` is the resource as the API returns it; `occurredAt` is ISO 8601 UTC.
 */
export interface DomainEvent {
  id: string;
  type: EventType;
  workspaceId: string;
  occurredAt: string;
  data: Agent | Conversation | Message;
}

/** A page of a page-numbered list (agents, conversations, webhook endpoints). */
export interface PageResult<T> {
  items: T[];
  total: number;
}

/** Plans of spec §8. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
/** One of {@link PLANS}. */
export type Plan = (typeof PLANS)[number];

/** Scopes an API key may hold (decisions §6); `*` is all of them. */
export const SCOPES = [
  'agents:read',
  'agents:write',
  'conversations:read',
  'conversations:write',
  'webhooks:read',
  'webhooks:write',
  'plants:read',
  'plants:write',
] as const;
/** One of {@link SCOPES}. */
export type Scope = (typeof SCOPES)[number];

/**
 * What an authenticated API key grants: its workspace, the workspace's plan and the key's scopes.
 * `limitPerHour` is set for `enterprise` (and overrides the plan table when present).
 */
export interface Principal {
  keyId: string;
  workspaceId: string;
  plan: Plan;
  scopes: ReadonlyArray<Scope | '*'>;
  limitPerHour?: number;
}

/** An API key as stored: only the SHA-256 hash (hex) of the secret, never the key itself. */
export interface ApiKeyRecord extends Principal {
  hash: string;
  createdAt: string;
}
