/**
 * @module Response schemas: what the API returns (docs/api.md#resources, docs/api.md#ids-timestamps-and-bodies, docs/errors.md, docs/api.md#resources, docs/pagination.md). Documentation only:
 * nothing validates responses at run time; the OpenAPI document is generated from these, and
 * tests check that real responses satisfy them.
 */
import * as v from 'valibot';
import { ErrorCode } from '../errors.js';
import {
  AGENT_STATUSES,
  ALL_EVENT_TYPES,
  CONVERSATION_STATUSES,
  DISABLED_REASONS,
  EVENT_TYPES,
  MESSAGE_ROLES,
  PLANS,
  SCOPES,
} from '../types.js';
import { JsonObjectSchema } from './common.js';
import { AutoReplySchema, MaxStepsSchema, TOOL_KINDS, ToolsSchema } from './tools.js';
import { McpServersSchema } from './mcp.js';

/** An ISO 8601 UTC timestamp with milliseconds (docs/api.md#ids-timestamps-and-bodies). */
const timestamp = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.description('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z.'),
);

/** An opaque id with its type prefix (`agt_`, `conv_`, …), sortable by creation time. */
function id(prefix: string) {
  return v.pipe(
    v.string(),
    v.startsWith(`${prefix}_`),
    v.description(`Opaque id starting with ${prefix}_, sortable by creation time.`),
  );
}

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** An agent (docs/api.md#resources): every field is always present; optional settings never set are `null`. */
export const AgentSchema = v.object({
  id: id('agt'),
  name: v.string(),
  description: v.string(),
  // Spec §2.1: "Returned as a string": an agent keeps a model even after it leaves the create list.
  model: v.pipe(v.string(), v.description('One of the models accepted on creation when the agent was created.')),
  systemPrompt: v.nullable(v.string()),
  temperature: v.nullable(v.number()),
  maxTokens: v.nullable(v.pipe(v.number(), v.integer())),
  configuration: v.pipe(
    JsonObjectSchema,
    v.description('Yours: the JSON object you stored, unchanged. Parley never reads it.'),
  ),
  tools: ToolsSchema,
  maxSteps: MaxStepsSchema,
  autoReply: AutoReplySchema,
  mcpServers: McpServersSchema,
  status: v.picklist(AGENT_STATUSES),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** A tool call the model asked for (docs/replies-and-streams.md#tools). */
export const ToolCallSchema = v.object({
  id: v.pipe(
    v.string(),
    v.description(
      "Parley's id of the call (`call_` + a ULID), unique everywhere: its result's `toolCallId`, the `toolCallId` " +
        "to answer it with and a webhook tool's `webhook-id`. Not the provider's id.",
    ),
  ),
  name: v.string(),
  arguments: v.pipe(
    v.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value)),
    v.metadata({
      type: 'object',
      description: "The arguments, parsed from the model's JSON (`{}` when it sent none that parse).",
    }),
  ),
  server: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "The `label` of the MCP server whose tool is called (`name` is the tool's name on that server); absent for the agent's own tools.",
      ),
    ),
  ),
});

/** A call a paused reply waits for: a client tool's output or an approval. */
export const PendingToolCallSchema = v.object({
  ...ToolCallSchema.entries,
  kind: v.pipe(
    v.picklist([...TOOL_KINDS, 'mcp']),
    v.description("`webhook` or `client` (the agent's tools), or `mcp` (a tool of the MCP server `server`)."),
  ),
  requiresApproval: v.boolean(),
});

/** An agent as its create or PATCH answers when it set the tools secret: with `toolsSecret`, shown only then. */
export const AgentWithToolsSecretSchema = v.object({
  ...AgentSchema.entries,
  toolsSecret: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "The secret that signs the calls of the agent's webhook tools (Standard Webhooks); present only in the response that set or generated it.",
      ),
    ),
  ),
});

/** Answer of `POST /api/conversations/:id/tool-results`: the calls still waiting. */
export const ToolResultsAcceptedSchema = v.object({
  conversationId: id('conv'),
  pendingToolCalls: v.array(PendingToolCallSchema),
});

/** A conversation (docs/api.md#resources); `userId` is `null` when none was given. */
export const ConversationSchema = v.object({
  id: id('conv'),
  agentId: id('agt'),
  userId: v.nullable(v.string()),
  metadata: JsonObjectSchema,
  status: v.picklist(CONVERSATION_STATUSES),
  createdAt: timestamp,
  updatedAt: v.pipe(
    timestamp,
    v.description('When it last changed: a PATCH that changed it, or its latest message, whichever is later.'),
  ),
  lastMessageAt: v.pipe(
    v.nullable(timestamp),
    v.description('The createdAt of its latest message; null until the first one.'),
  ),
  pendingToolCalls: v.pipe(
    v.array(PendingToolCallSchema),
    v.description(
      'The tool calls a paused reply waits for (answer them with POST /api/conversations/{id}/tool-results); [] when none.',
    ),
  ),
});

/** A message of a conversation (docs/api.md#resources). */
export const MessageSchema = v.object({
  id: id('msg'),
  conversationId: id('conv'),
  content: v.string(),
  role: v.pipe(
    v.picklist(MESSAGE_ROLES),
    v.description("`tool` messages hold a tool's result and are stored by Parley only."),
  ),
  metadata: JsonObjectSchema,
  toolCalls: v.pipe(
    v.nullable(v.array(ToolCallSchema)),
    v.description('The tool calls an assistant message asks for; null when none.'),
  ),
  toolCallId: v.pipe(
    v.nullable(v.string()),
    v.description('The call a tool message is the result of; null on other messages.'),
  ),
  createdAt: timestamp,
});

/** A webhook endpoint as the API returns it: never with its secret (docs/api.md#resources). */
export const WebhookEndpointSchema = v.object({
  id: id('wh'),
  url: v.pipe(v.string(), v.description('The URL in its normalised form (WHATWG URL href).')),
  events: v.pipe(
    v.array(v.picklist([...EVENT_TYPES, ALL_EVENT_TYPES])),
    v.description('The event types delivered, or ["*"]: every type, present and future.'),
  ),
  enabled: v.pipe(v.boolean(), v.description('False when disabled by PATCH, or by Parley (see disabledReason).')),
  disabledReason: v.pipe(
    v.nullable(v.picklist(DISABLED_REASONS)),
    v.description(
      'Why Parley disabled the endpoint: "gone" (it answered 410 Gone) or "failing" (every delivery failed for 5 days); null otherwise. PATCH {"enabled": true} clears it.',
    ),
  ),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** The registration's answer: the endpoint, plus `secret` only when Parley generated it. */
export const WebhookEndpointCreatedSchema = v.object({
  ...WebhookEndpointSchema.entries,
  secret: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'The generated whsec_ signing secret. Present only when none was given; shown only in this response.',
      ),
    ),
  ),
});

/** Fields of a page-numbered list: `page` and `limit` echo the (defaulted) query. */
const pageFields = {
  total: v.pipe(count, v.description('Number of matching items in all pages.')),
  page: v.pipe(count, v.minValue(1)),
  limit: v.pipe(count, v.minValue(1)),
};

/** `GET /api/agents`: newest first. */
export const AgentListSchema = v.object({ agents: v.array(AgentSchema), ...pageFields });
/** `GET /api/conversations`: newest first. */
export const ConversationListSchema = v.object({ conversations: v.array(ConversationSchema), ...pageFields });
/** `GET /api/webhooks`: newest first. */
export const WebhookEndpointListSchema = v.object({ webhooks: v.array(WebhookEndpointSchema), ...pageFields });

/** A page of history, oldest first; `nextCursor` is present exactly when `hasMore` is true. */
export const MessageHistorySchema = v.object({
  messages: v.array(MessageSchema),
  hasMore: v.boolean(),
  nextCursor: v.optional(
    v.pipe(
      v.string(),
      v.description('Pass as the same parameter (`before` or `after`) to fetch the next page in that direction.'),
    ),
  ),
});

/** `POST /api/conversations/:id/reply` (202): the reply was asked for and will arrive on the stream. */
export const ReplyRequestedSchema = v.object({
  conversationId: id('conv'),
  inReplyTo: v.pipe(
    v.nullable(id('msg')),
    v.description("The message the reply answers: the conversation's latest when asked, `null` if it had none."),
  ),
});

/** Data of `reply.failed`: a reply given up; `error` says why, never quoting content. */
export const ReplyFailedSchema = v.object({
  conversationId: id('conv'),
  inReplyTo: v.nullable(id('msg')),
  error: v.string(),
});

/** Data of `reply.requires_action`: a reply paused until these calls are answered. */
export const ReplyRequiresActionSchema = v.object({
  conversationId: id('conv'),
  inReplyTo: v.nullable(id('msg')),
  toolCalls: v.array(PendingToolCallSchema),
});

/** Data of `reply.cancelled`: a reply that was stopped. */
export const ReplyCancelledSchema = v.object({
  conversationId: id('conv'),
  inReplyTo: v.nullable(id('msg')),
});

/** `POST /api/conversations/:id/reply/cancel` (200): the replies that were stopped. */
export const RepliesCancelledSchema = v.object({
  cancelled: v.pipe(
    v.array(v.nullable(id('msg'))),
    v.description(
      'The `inReplyTo` of each reply stopped (queued, being made, or waiting for tool results), oldest first; `[]` when none was. `null` stands for a reply asked for in a conversation without messages.',
    ),
  ),
});

/** One event of the workspace's event log (`GET /api/events`): `timestamp` is when it occurred. */
export const EventSchema = v.object({
  id: id('evt'),
  type: v.picklist(EVENT_TYPES),
  timestamp,
  data: v.pipe(
    v.union([
      AgentSchema,
      ConversationSchema,
      MessageSchema,
      ReplyFailedSchema,
      ReplyRequiresActionSchema,
      ReplyCancelledSchema,
    ]),
    v.description(
      "The resource as the API returned it at the change: an agent, a conversation or a message, by type; for reply.failed, reply.requires_action and reply.cancelled the reply's state.",
    ),
  ),
});

/** `GET /api/events`: oldest first from the cursor; `nextCursor` is present exactly when `hasMore` is true. */
export const EventListSchema = v.object({
  events: v.array(EventSchema),
  hasMore: v.boolean(),
  nextCursor: v.optional(v.pipe(v.string(), v.description('Pass as `after` to fetch the next page.'))),
});

/** Every `/api` delete answers 200 with this (docs/api.md#ids-timestamps-and-bodies). */
export const DeleteResultSchema = v.object({
  success: v.boolean(),
  message: v.string(),
});

/** One failed check of a validation (`details.issues`); never echoes the submitted value. */
export const ValidationIssueSchema = v.object({
  path: v.pipe(
    v.string(),
    v.description('Dotted path of the field (metadata.tags.0); empty for the body or query itself.'),
  ),
  message: v.string(),
});

/** Every `/api` error (docs/errors.md): `{"error": {"code", "message", "details"?}}`. */
export const ApiErrorSchema = v.object({
  error: v.object({
    code: v.picklist(Object.values(ErrorCode)),
    message: v.pipe(v.string(), v.description('Safe to show; never contains internals.')),
    details: v.optional(
      v.looseObject({
        issues: v.optional(v.array(ValidationIssueSchema)),
        requiredScope: v.optional(v.string()),
        limitBytes: v.optional(v.number()),
        retryAfterSeconds: v.optional(v.number()),
        etag: v.optional(
          v.pipe(v.string(), v.description("`precondition_failed`: the resource's current entity tag.")),
        ),
      }),
    ),
  }),
});

/**
 * `GET /api/key`: what the key the request was made with grants (docs/authentication.md) — never
 * the key itself, nor its hash.
 */
export const CallingKeySchema = v.object({
  keyId: v.pipe(v.string(), v.description("The key's id (`key_…`), as `parley keys list` shows it.")),
  workspaceId: v.string(),
  plan: v.picklist(PLANS),
  scopes: v.pipe(
    v.array(v.picklist([...SCOPES, '*'])),
    v.description('The scopes the key holds; `*` is every scope. The console shows what the others allow.'),
  ),
  limitPerHour: v.pipe(
    v.nullable(count),
    v.description("The key's own requests-per-hour limit; `null`: the plan's (RateLimit-Policy says it)."),
  ),
});

/** `GET /healthz` and `GET /readyz` when healthy. */
export const HealthSchema = v.object({ status: v.literal('ok') });
