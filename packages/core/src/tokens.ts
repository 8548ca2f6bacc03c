/**
 * @module tsyringe injection tokens: every constructor parameter of a service names one, and each
 * token carries the type of what `createCore` registers under it.
 */
import type { DeliveryOptions } from './delivery/retry-schedule.js';
import type { ApiKeyStore } from './ports/api-keys.js';
import type { Clock } from './ports/clock.js';
import type { ConversationFeed } from './ports/conversation-feed.js';
import type { DeliveryQueue } from './ports/delivery-queue.js';
import type { IdempotencyStore } from './ports/idempotency.js';
import type { IdGenerator } from './ports/ids.js';
import type { LanguageModel } from './ports/language-model.js';
import type { RateLimitStore } from './ports/rate-limit.js';
import type { ReplyQueue } from './ports/reply-queue.js';
import type { Storage } from './ports/storage.js';
import type { WebhookTransport } from './ports/webhook-transport.js';
import type { RateLimiterOptions } from './rate-limit/options.js';
import type { ReplyOptions } from './replies/reply-options.js';
import type { McpClients } from './replies/mcp/mcp-clients.js';
import type { AgentSchemas } from './schemas/agent.js';
import type { WebhookTargetPolicy } from './services/webhook-targets.js';
import type { Tracing } from './tracing/tracing.js';

/** A tsyringe token (a registered symbol) that names the type of its value. */
export type Token<T> = symbol & { readonly __value?: T };

const token = <T>(name: string) => Symbol.for(`parley.${name}`) as Token<T>;

/** The tokens of a core's container (docs/architecture.md#the-composition-root). */
export const TOKENS = Object.freeze({
  storage: token<Storage>('Storage'),
  apiKeys: token<ApiKeyStore>('ApiKeyStore'),
  deliveryQueue: token<DeliveryQueue>('DeliveryQueue'),
  webhookTransport: token<WebhookTransport>('WebhookTransport'),
  deliveryOptions: token<DeliveryOptions>('DeliveryOptions'),
  clock: token<Clock>('Clock'),
  ids: token<IdGenerator>('IdGenerator'),
  rateLimits: token<RateLimitStore>('RateLimitStore'),
  rateLimiterOptions: token<RateLimiterOptions>('RateLimiterOptions'),
  /** Checks webhook endpoint and webhook tool URLs (SSRF, docs/events-and-webhooks.md#targets). */
  webhookTargets: token<WebhookTargetPolicy>('WebhookTargetPolicy'),
  /** Agent schemas whose `model` picklist holds {@link TOKENS.agentModels}. */
  agentSchemas: token<AgentSchemas>('AgentSchemas'),
  /** The `model` values agents may take: the spec's three, then every configured model's name. */
  agentModels: token<readonly string[]>('AgentModels'),
  models: token<ReadonlyMap<string, LanguageModel>>('LanguageModels'),
  replyQueue: token<ReplyQueue>('ReplyQueue'),
  conversationFeed: token<ConversationFeed>('ConversationFeed'),
  idempotency: token<IdempotencyStore>('IdempotencyStore'),
  replyOptions: token<ReplyOptions>('ReplyOptions'),
  /** The tracer Parley's spans go to, and whether they record content (docs/observability.md#traces). */
  tracing: token<Tracing>('Tracing'),
  /** The MCP client side of replies (docs/mcp.md). */
  mcpClients: token<McpClients>('McpClients'),
});
