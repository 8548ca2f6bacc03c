/**
 * @module @parley/core: what an application embedding Parley uses — `createCore`, the records and
 * their schemas, errors, plans and scopes, and the pieces an HTTP layer over the core needs.
 * Adapter authors import ports and shared helpers from `@parley/core/adapter`; contract suites
 * live in `@parley/core/testing` (docs/architecture.md#entry-points).
 */
import './di.js';

export { createCore, type Core, type CoreSettings, type CoreWorkers } from './create-core.js';
export type { DeliveryOptions } from './delivery/retry-schedule.js';
export type { DeliveryList, DeliveryLogEntry } from './delivery/delivery-service.js';
export { DELIVERY_OUTCOMES, type DeliveryAttemptReport } from './delivery/delivery-worker.js';
export { DEFAULT_WEBHOOK_RETRY_DELAYS } from './delivery/retry-schedule.js';
export { undiciTransport } from './delivery/undici-transport.js';
export { ErrorCode, ParleyError, isParleyError, type ValidationIssue } from './errors.js';
export { aiSdkModel, type AiSdkLanguageModel } from './models/ai-sdk-model.js';
export type { ModelEntry, ModelMap } from './models/registry.js';
export { modelFailure } from './models/model-failure.js';
export type { Adapters, BackendInfo } from './ports/adapters.js';
export type { Clock } from './ports/clock.js';
export type { IdGenerator } from './ports/ids.js';
export type { LanguageModel, ModelRequest, ModelStreamPart } from './ports/language-model.js';
export type { WorkerLogger } from './ports/logger.js';
export { systemHostResolver, type HostResolver } from './ports/webhook-targets.js';
export type { WebhookTransport } from './ports/webhook-transport.js';
export { Admission } from './rate-limit/admission.js';
export { rateLimitRefusal, type RateLimitResult } from './rate-limit/result.js';
export type { WorkspaceScope } from './ports/scope.js';
export { planEntryIssues, type PlanEntry } from './rate-limit/plans.js';
export type { RateLimitFailurePolicy } from './rate-limit/options.js';
export { RateLimiter } from './rate-limit/rate-limiter.js';
export type { ConversationStream, StreamItem } from './replies/conversation-stream.js';
export { REPLY_OUTCOMES, type ReplyInProgress, type ReplyOutcome } from './replies/reply-service.js';
export { ReplyCancelledError, type RepliesCancelled, type ReplyFinishReason } from './replies/reply-cancel.js';
export { ReplyWorker } from './replies/reply-worker.js';
export {
  MCP_TIMEOUT_MS,
  MCP_TOOLS_TTL_MS,
  McpFailure,
  sdkMcpClients,
  type McpCallResult,
  type McpClients,
  type McpTarget,
  type McpToolInfo,
  type SdkMcpClientsOptions,
} from './replies/mcp/mcp-clients.js';
export { McpServerInputSchema, McpServersInputSchema, type McpServerInput } from './schemas/mcp.js';
export {
  AgentCreateSchema,
  AgentListQuerySchema,
  AgentUpdateSchema,
  agentSchemas,
  type AgentCreateInput,
  type AgentListQuery,
  type AgentSchemas,
  type AgentUpdateInput,
} from './schemas/agent.js';
export {
  ConversationCreateSchema,
  ConversationListQuerySchema,
  ConversationStreamQuerySchema,
  ConversationUpdateSchema,
  MessageCreateSchema,
  MessageHistoryQuerySchema,
  type ConversationCreateInput,
  type ConversationListQuery,
  type ConversationStreamQuery,
  type ConversationUpdateInput,
  type MessageCreateInput,
  type MessageHistoryQuery,
} from './schemas/conversation.js';
export {
  DeliveryAttemptSchema,
  DeliveryListQuerySchema,
  DeliveryListSchema,
  RecoverResultSchema,
  RecoverSchema,
  RetryResultSchema,
  RotateSecretResultSchema,
  RotateSecretSchema,
  WebhookTestSchema,
  type DeliveryListQuery,
  type RecoverInput,
  type RotateSecretInput,
  type WebhookTestInput,
} from './schemas/delivery.js';
export { EventListQuerySchema, type EventListQuery } from './schemas/event.js';
export {
  AgentListSchema,
  AgentSchema,
  AgentWithToolsSecretSchema,
  ApiErrorSchema,
  CallingKeySchema,
  ConversationListSchema,
  ConversationSchema,
  DeleteResultSchema,
  EventListSchema,
  EventSchema,
  HealthSchema,
  MessageHistorySchema,
  MessageSchema,
  PendingToolCallSchema,
  ReplyCancelledSchema,
  RepliesCancelledSchema,
  ReplyFailedSchema,
  ReplyRequestedSchema,
  ReplyRequiresActionSchema,
  ToolCallSchema,
  ToolResultsAcceptedSchema,
  ValidationIssueSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from './schemas/responses.js';
export { ToolResultsSchema, ToolSchema, type ToolResultsInput } from './schemas/tools.js';
export {
  WebhookCreateSchema,
  WebhookListQuerySchema,
  WebhookUpdateSchema,
  type WebhookCreateInput,
  type WebhookListQuery,
  type WebhookUpdateInput,
} from './schemas/webhook.js';
export { AgentService, type AgentList, type AgentWithToolsSecret } from './services/agent-service.js';
export { apiKeyChecksumFails, generateApiKey } from './services/api-key-format.js';
export { hasScope, hashApiKey, type ApiKeyGrant } from './services/api-key-service.js';
export type { ConversationList, MessageHistory } from './services/conversation-service.js';
export { messageCursor } from './services/cursor.js';
export { entityTag, ifMatchVersions, ifNoneMatchMatches, type WriteConditions } from './services/entity-tag.js';
export type { ApiEvent, EventList } from './services/event-service.js';
export { UsageQuerySchema, UsageReportSchema, type UsageQuery, type UsageReport } from './services/usage-service.js';
export type { WebhookList, WebhookRegistration } from './services/webhook-service.js';
export type { WebhookTargetPolicy } from './services/webhook-targets.js';
export { TOKENS, type Token } from './tokens.js';
export { activeTraceContext, contextFromTrace, formatTraceContext } from './tracing/trace-context.js';
export { CAPTURE_CONTENT_VARIABLE, TRACER_NAME, Tracing, type TracingSettings } from './tracing/tracing.js';
export { executeToolSpan, recordToolResult, type ToolKind } from './tracing/gen-ai.js';
export {
  EVENT_TYPES,
  PLANS,
  SCOPES,
  type Agent,
  type AgentModel,
  type AgentStatus,
  type ApiKeyRecord,
  type Conversation,
  type ConversationStatus,
  type DeliveryAttempt,
  type DeliveryTrigger,
  type DisabledReason,
  type DomainEvent,
  type EventSubscription,
  type EventType,
  type JsonObject,
  type McpApproval,
  type McpServer,
  type Message,
  type MessageRole,
  type PageResult,
  type PendingToolCall,
  type Plan,
  type Principal,
  type ReplyCancelled,
  type ReplyFailed,
  type ReplyRequiresAction,
  type Scope,
  type Tool,
  type ToolCall,
  type WebhookEndpoint,
} from './types.js';
export { assertStorableStrings, parse, validationFailed } from './validation.js';
