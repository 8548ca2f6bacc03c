/**
 * @module @parley/core/adapter: what an adapter author needs — the ports an adapter implements, the
 * `Adapters` bundle it returns, and the helpers the memory, Redis and PostgreSQL adapters share
 * (frozen records, record versions, what counts as a delivered attempt, hidden fields, GCRA, usage
 * counters, lease defaults, the end-of-turn queue, which the HTTP server shares too). Records and
 * errors come from `@parley/core`; contract suites from `@parley/core/testing`.
 */
export { STALL_ALLOWANCE_MS, callDeadline } from './call-deadline.js';
export { isSuccess } from './delivery/attempt.js';
export { frozenCopy } from './frozen-records.js';
export { HIDDEN_FIELDS, withoutHiddenFields } from './hidden-fields.js';
export {
  DEFAULT_DELIVERY_LEASE_MS,
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_OUTBOX_LEASE_MS,
  DEFAULT_REPLY_LEASE_MS,
  checkWaitMs,
  positiveInteger,
  positiveMs,
} from './policy.js';
export type { Adapters, BackendInfo } from './ports/adapters.js';
export type { ApiKeyStore, ApiKeyUpsert } from './ports/api-keys.js';
export { systemClock, type Clock } from './ports/clock.js';
export type { ConversationFeed, FeedSignal, FeedSubscription } from './ports/conversation-feed.js';
export type {
  DeliveryJob,
  DeliveryLane,
  DeliveryQueue,
  DeliveryQueueStats,
  LeasedJob,
} from './ports/delivery-queue.js';
export type {
  IdempotencyClaim,
  IdempotencyCompletion,
  IdempotencyRelease,
  IdempotencyRequest,
  IdempotencyStore,
  IdempotentResponse,
} from './ports/idempotency.js';
export { createUlidGenerator, firstIdAt, type IdGenerator } from './ports/ids.js';
export type { WorkerLogger } from './ports/logger.js';
export type { RateLimitDecision, RateLimitRule, RateLimitStore } from './ports/rate-limit.js';
export type { CancelledReplyJobs, LeasedReply, ReplyClaim, ReplyJob, ReplyQueue } from './ports/reply-queue.js';
export type {
  AgentStore,
  Change,
  Condition,
  ConditionField,
  ConversationFilter,
  ConversationStore,
  DeleteOptions,
  DeliveryPage,
  DeliveryStore,
  EventDraft,
  EventOutbox,
  EventPage,
  EventStore,
  MessagePage,
  MessageStore,
  OffsetPage,
  OutboxBatch,
  ScopedCalls,
  Storage,
  UsageGroup,
  UsageRecord,
  UsageStore,
  UsageTotal,
  WebhookEndpointStore,
  WriteResult,
} from './ports/storage.js';
export type { WorkspaceScope } from './ports/scope.js';
export { emissionIntervalMs, gcra } from './rate-limit/gcra.js';
export { recordVersion, withVersion } from './record-version.js';
export { InProcessConversationFeed } from './replies/in-process-feed.js';
export { MAX_STEPS } from './schemas/tools.js';
export { regrantApiKey, sameApiKeyGrant } from './services/api-key-grant.js';
export { API_KEY_CACHE_TTL_MS, ApiKeyService } from './services/api-key-service.js';
export { atTurnEnd } from './turn-end.js';
export { formatTraceContext, parseTraceContext, traceContextOf } from './tracing/trace-context.js';
export { daysBetween, usageDay, usageIncrements, usageTotals } from './services/usage-counters.js';
export { AGENT_STATUSES, CONVERSATION_STATUSES, subscribesTo, type WebhookEndpointRecord } from './types.js';
