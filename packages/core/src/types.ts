/** @module The domain records services return and storage ports persist. */

/** Agent statuses (docs/api.md#resources): new agents are `active`. */
export const AGENT_STATUSES = ['active', 'inactive'] as const;
/** One of {@link AGENT_STATUSES}. */
export type AgentStatus = (typeof AGENT_STATUSES)[number];
/** Models an agent may be created with (docs/api.md#resources). */
export const AGENT_MODELS = ['modelA-4', 'modelA-3.5-turbo', 'modelB-3'] as const;
/** One of {@link AGENT_MODELS}. A stored agent's `model` is a plain string: the list may change. */
export type AgentModel = (typeof AGENT_MODELS)[number];

/** A JSON object as stored in `metadata` and `configuration`. */
export type JsonObject = { [key: string]: unknown };

/**
 * A tool an agent may call (docs/replies-and-streams.md#defining-tools), as `ToolSchema`
 * (schemas/tools.ts) validates it.
 */
export interface Tool {
  /** 1–64 letters, digits, `_` or `-`; unique among the agent's tools. */
  name: string;
  description: string;
  /** A JSON Schema (draft 2020-12) of type `object`: the call's arguments. */
  parameters: JsonObject;
  /** `webhook`: Parley POSTs the call to `url`; `client`: the caller runs it and posts the result. */
  kind: 'webhook' | 'client';
  /** A webhook tool's `http(s)` URL. */
  url?: string;
  /** The call waits for a person's approval first. */
  requiresApproval?: boolean;
  /** A webhook tool's deadline in ms (default 15 000, at most 60 000). */
  timeoutMs?: number;
}

/**
 * When calls of an MCP server's tools wait for a person's approval (docs/mcp.md#approvals):
 * `always` (the default), `never`, or always but for the tools named in `never`.
 */
export type McpApproval = 'always' | 'never' | { never: string[] };

/**
 * An MCP server an agent's replies may call tools of (docs/mcp.md), as the API shows it: the values
 * of its headers are never shown, only their names.
 */
export interface McpServer {
  /** 1–32 letters, digits, `_` or `-`; unique among the agent's servers. The model sees `<label>__<tool>`. */
  label: string;
  /** The server's Streamable HTTP endpoint (`http(s)`). */
  url: string;
  /** The names of the headers sent with every request to the server (their values are write-only). */
  headerNames: string[];
  /** The only tools of the server the model sees; absent: all of them. */
  allowedTools?: string[];
  requireApproval: McpApproval;
}

/** An AI agent of a workspace (docs/api.md#resources). Timestamps are ISO 8601 UTC with milliseconds. */
export interface Agent {
  id: string;
  name: string;
  description: string;
  model: string;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  /** The caller's own JSON object, stored and returned unchanged: Parley never reads it. */
  configuration: JsonObject;
  /** The tools the agent may call (docs/replies-and-streams.md#tools), `[]` when none. */
  tools: Tool[];
  /** The most model calls one reply makes, 1–32 (default 8). */
  maxSteps: number;
  /** Whether the agent replies on its own to user messages (default `true`). */
  autoReply: boolean;
  /** The MCP servers whose tools the agent may call (docs/mcp.md), `[]` when none. */
  mcpServers: McpServer[];
  status: AgentStatus;
  createdAt: string;
  updatedAt: string;
}

/**
 * An agent as stored: with the secret that signs its webhook tools' calls (`whsec_…` or raw text,
 * docs/replies-and-streams.md#tools), absent until it has one. The API never shows it but in the
 * response of the create or update that set it.
 */
export interface AgentRecord extends Agent {
  toolsSecret?: string;
  /**
   * The header values of the agent's MCP servers, by server `label` then header name
   * (docs/mcp.md#headers): a hidden field, in no response, event or log.
   */
  mcpHeaders?: Record<string, Record<string, string>>;
}

/** Conversation statuses (docs/api.md#resources): `active → completed` is the only transition. */
export const CONVERSATION_STATUSES = ['active', 'completed'] as const;
/** One of {@link CONVERSATION_STATUSES}. */
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/** A conversation with one agent (docs/api.md#resources). */
export interface Conversation {
  id: string;
  agentId: string;
  userId: string | null;
  metadata: JsonObject;
  status: ConversationStatus;
  createdAt: string;
  /** When the conversation last changed: its own update, or its latest message (the later). */
  updatedAt: string;
  /** The `createdAt` of its latest message; `null` until the first one. */
  lastMessageAt: string | null;
  /**
   * The tool calls a paused reply waits for (client tools, calls awaiting approval), `[]` when none
   * (docs/replies-and-streams.md#tools).
   */
  pendingToolCalls: PendingToolCall[];
}

/** A tool call the model asked for: `arguments` is the parsed JSON object. */
export interface ToolCall {
  /**
   * Parley's id of the call, `call_` + a ULID, unique everywhere (docs/replies-and-streams.md#tools).
   * Never the provider's id, which some servers reuse (`call_0` in every response); calls stored
   * before Parley issued its own ids keep the provider's.
   */
  id: string;
  /** The tool's name: an agent tool's, or for an MCP tool its name on the server (the model sees `<server>__<name>`). */
  name: string;
  arguments: JsonObject;
  /** The `label` of the MCP server whose tool this is (docs/mcp.md); absent for the agent's own tools. */
  server?: string;
}

/** A tool call a paused reply waits for: a `client` tool's output or an approval. */
export interface PendingToolCall extends ToolCall {
  kind: 'webhook' | 'client' | 'mcp';
  requiresApproval: boolean;
}

/**
 * Who wrote a message (docs/api.md#resources): `assistant` messages emit `message.received`, the
 * others `message.sent`. `tool` messages (a tool's result) are stored by Parley only.
 */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
/** The roles a caller may post a message with: all but `tool`. */
export const POSTABLE_MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;
/** One of {@link MESSAGE_ROLES}. */
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** A message in a conversation (docs/api.md#resources). */
export interface Message {
  id: string;
  conversationId: string;
  content: string;
  role: MessageRole;
  metadata: JsonObject;
  /** The tool calls an `assistant` message asks for; `null` when it asks for none. */
  toolCalls: ToolCall[] | null;
  /** The call a `tool` message is the result of; `null` on other messages. */
  toolCallId: string | null;
  createdAt: string;
}

/** Every event a webhook endpoint can subscribe to (docs/events-and-webhooks.md#event-types). */
export const EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'conversation.started',
  'conversation.completed',
  'message.sent',
  'message.received',
  'conversation.deleted',
  'reply.failed',
  'reply.requires_action',
  'reply.cancelled',
] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** In a webhook endpoint's `events`, alone: every event type, present and future. */
export const ALL_EVENT_TYPES = '*';
/** What a webhook endpoint subscribes to: event types, or `["*"]` for all of them. */
export type EventSubscription = EventType | typeof ALL_EVENT_TYPES;

/** Whether an endpoint subscribed to `events` gets events of `type`: `["*"]` matches every type. */
export function subscribesTo(events: readonly EventSubscription[], type: EventType): boolean {
  return events.includes(ALL_EVENT_TYPES) || events.includes(type);
}

/** Why an endpoint was disabled by Parley: a `410 Gone` answer, or 5 days of failed deliveries. */
export const DISABLED_REASONS = ['gone', 'failing'] as const;
/** One of {@link DISABLED_REASONS}. */
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** A webhook endpoint as the API returns it: never carries a secret. */
export interface WebhookEndpoint {
  id: string;
  /** The URL in its parsed, normalised form (WHATWG `URL#href`). */
  url: string;
  /** The event types it gets, or `["*"]`: every type, present and future (stored and returned as given). */
  events: EventSubscription[];
  enabled: boolean;
  /** Set when Parley disabled the endpoint; `null` while enabled or when a caller disabled it. */
  disabledReason: DisabledReason | null;
  createdAt: string;
  updatedAt: string;
}

/** A secret a rotation replaced, and until when (ISO 8601) it still signs deliveries. */
export interface PreviousSecret {
  secret: string;
  expiresAt: string;
}

/**
 * A webhook endpoint as stored: with its signing secret (`whsec_…` or raw text) and the delivery
 * state the API does not show.
 */
export interface WebhookEndpointRecord extends WebhookEndpoint {
  secret: string;
  /**
   * Secrets replaced by rotations, newest first, each with when (ISO 8601) deliveries stop being
   * signed with it too: at most two, so at most three secrets sign at once
   * (docs/events-and-webhooks.md). `[]` when none is in its overlap window.
   */
  previousSecrets: PreviousSecret[];
  /** When the oldest attempt of the current run of failures was made (ISO 8601); `null` after a success. */
  failingSince: string | null;
}

/**
 * Something that happened in a workspace, recorded in the event log by the same atomic step as the
 * change it describes (docs/events-and-webhooks.md). `data` is the resource as the API returns it;
 * `occurredAt` is ISO 8601 UTC with milliseconds. `id` is `evt_<ULID>`.
 */
export interface DomainEvent {
  id: string;
  type: EventType;
  workspaceId: string;
  occurredAt: string;
  data: Agent | Conversation | Message | ReplyFailed | ReplyRequiresAction | ReplyCancelled;
}

/** Data of `reply.failed`: a reply given up (docs/replies-and-streams.md); `error` never quotes content. */
export interface ReplyFailed {
  conversationId: string;
  inReplyTo: string | null;
  error: string;
}

/**
 * Data of `reply.cancelled`: a reply that was queued, being made or waiting for tool results was
 * stopped (`POST /api/conversations/:id/reply/cancel`, docs/replies-and-streams.md#stopping-a-reply).
 */
export interface ReplyCancelled {
  conversationId: string;
  inReplyTo: string | null;
}

/**
 * What a reply step's prompt held (`metadata.reply.context`, the stream's `context.trimmed`,
 * docs/replies-and-streams.md#context-that-fits-the-model): `messages` the conversation's messages
 * sent, `tokens` the prompt's estimated size (system prompt, tools and messages, o200k encoding),
 * `trimmed` the older messages left out to fit the model's context window.
 */
export interface ReplyContext {
  messages: number;
  tokens: number;
  trimmed: number;
}

/** Data of `reply.requires_action`: a reply paused until these calls are answered (docs/replies-and-streams.md#tools). */
export interface ReplyRequiresAction {
  conversationId: string;
  inReplyTo: string | null;
  toolCalls: PendingToolCall[];
}

/** What started a delivery attempt. */
export const DELIVERY_TRIGGERS = ['scheduled', 'manual', 'recover', 'test'] as const;
/** One of {@link DELIVERY_TRIGGERS}. */
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];

/**
 * One delivery attempt of an event to a webhook endpoint, as the deliveries log keeps and shows it.
 * `id` is `dlv_<ULID>`; `status` is the HTTP status received (`null` when none was: refused target,
 * connection error, timeout); `error` says what failed (never a secret or the payload);
 * `responseBody` is the first 4 KiB of the response body as text (`null` without a response).
 */
export interface DeliveryAttempt {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: EventType;
  /** 1 for the first attempt of a schedule; manual retries and tests count on from 1 too. */
  attempt: number;
  trigger: DeliveryTrigger;
  status: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /**
   * When the next attempt of this event to this endpoint is due (ISO 8601), as scheduled after this
   * one; `null` when none is: a success, the last attempt, a manual retry or test, or a disabled endpoint.
   */
  nextAttemptAt: string | null;
  createdAt: string;
}

/** A page of a page-numbered list (agents, conversations, webhook endpoints). */
export interface PageResult<T> {
  items: T[];
  total: number;
}

/** Plans of docs/rate-limits.md. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
/** One of {@link PLANS}. */
export type Plan = (typeof PLANS)[number];

/** Scopes an API key may hold (docs/authentication.md); `*` is all of them. */
export const SCOPES = [
  'agents:read',
  'agents:write',
  'conversations:read',
  'conversations:write',
  'webhooks:read',
  'webhooks:write',
  'events:read',
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
