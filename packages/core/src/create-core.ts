/** @module Wires the services to the adapters in a container of their own. */
import { instanceCachingFactory, container as rootContainer, type DependencyContainer } from './di.js';
import type { ApiKeyStore } from './ports/api-keys.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { DeliveryQueue } from './ports/delivery-queue.js';
import type { WebhookTransport } from './ports/webhook-transport.js';
import { createUlidGenerator, type IdGenerator } from './ports/ids.js';
import type { RateLimitStore } from './ports/rate-limit.js';
import type { IdempotencyStore } from './ports/idempotency.js';
import type { Storage } from './ports/storage.js';
import type { HostResolver } from './ports/webhook-targets.js';
import type { PlanRules } from './rate-limit/plans.js';
import { RateLimiter, type RateLimiterOptions, type RateLimitFailurePolicy } from './rate-limit/rate-limiter.js';
import { AgentService } from './services/agent-service.js';
import { ApiKeyService } from './services/api-key-service.js';
import { ConversationService } from './services/conversation-service.js';
import { UsageService } from './services/usage-service.js';
import { EventService } from './services/event-service.js';
import { PlantService } from './services/plant-service.js';
import { WebhookService } from './services/webhook-service.js';
import { WebhookTargetPolicy } from './services/webhook-targets.js';
import { DeliveryService } from './delivery/delivery-service.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS, checkRetryDelays } from './delivery/retry-schedule.js';
import { undiciTransport } from './delivery/undici-transport.js';
import type { ConversationFeed } from './ports/conversation-feed.js';
import type { ReplyQueue } from './ports/reply-queue.js';
import { agentModelNames, resolveModels, type ModelMap } from './models/registry.js';
import { InProcessConversationFeed } from './replies/in-process-feed.js';
import { openConversationStream, type ConversationStream, type ConversationStreamOptions } from './replies/conversation-stream.js';
import { ReplyService, type ReplyOptions } from './replies/reply-service.js';
import { agentSchemas } from './schemas/agent.js';
import { TOKENS } from './tokens.js';

/**
 * The adapters a core runs on. `clock` defaults to the system clock, `ids` to prefixed ULIDs.
 * Plan rate limits are enforced only when `rateLimits` is given (see {@link Core.rateLimiter}).
 */
export interface CoreOptions {
  storage: Storage;
  apiKeys: ApiKeyStore;
  /** Where webhook delivery jobs wait for workers (memory or Redis adapter). */
  deliveryQueue: DeliveryQueue;
  /**
   * How webhook requests are sent (default `undiciTransport({ allowPrivate:
   * allowPrivateWebhookUrls })`: 15 s / 5 s deadlines, no redirects, connect-time target checks).
   */
  webhookTransport?: WebhookTransport;
  /**
   * Seconds between delivery attempts (default the Standard Webhooks schedule
   * `5,300,1800,7200,18000,36000,50400,72000,86400`: ten attempts over about 75 h).
   */
  webhookRetryDelays?: readonly number[];
  clock?: Clock;
  ids?: IdGenerator;
  /** Where rate-limit state lives; without it `core.rateLimiter` is `undefined`. */
  rateLimits?: RateLimitStore;
  /** Where `Idempotency-Key`s live; without it the HTTP API ignores the header. */
  idempotency?: IdempotencyStore;
  /** Overrides of the plan table (default Free 100/h, Pro 1 000/h, Enterprise per key). */
  plans?: Partial<PlanRules>;
  /** What to decide when the rate-limit store fails or takes over `rateLimitTimeoutMs` (default `'open'`). */
  rateLimitFailure?: RateLimitFailurePolicy;
  /** How long to wait for the rate-limit store, in ms (default 250). */
  rateLimitTimeoutMs?: number;
  /** Told of every rate-limit store failure the policy decided (default `console.warn`). */
  onRateLimitStoreError?: RateLimiterOptions['onStoreError'];
  /**
   * Accept webhook URLs whose host is loopback, private, link-local or otherwise non-public
   * (default `false`: refused with `validation_failed`, docs/events-and-webhooks.md). For local development and tests.
   */
  allowPrivateWebhookUrls?: boolean;
  /**
   * Where webhook URL host names are resolved at registration (default the operating system's
   * resolver, `systemHostResolver`). Tests inject one that needs no network.
   */
  hostResolver?: HostResolver;
  /**
   * Called with the core's own container after Parley registered the adapters and options above
   * under {@link TOKENS}, and before any service is built. Registrations made here win: replace a
   * port (`container.register(TOKENS.clock, { useValue: myClock })`; the default id generator
   * then reads that clock) or a service (`container.register(AgentService, { useFactory: (c) =>
   * new AuditedAgentService(c.resolve(TOKENS.storage),
   * c.resolve(TOKENS.clock), c.resolve(TOKENS.ids)) })`: a factory, because tsyringe does not
   * inherit the base class's `@inject` tokens). Every service that depends on what you
   * replaced receives the replacement; `core.storage` and `core.clock` are the replacements too.
   */
  register?: (container: DependencyContainer) => void;
  /**
   * Language models agents reply with, by agent `model` name (README "Agents that reply"): AI SDK
   * language models (any `@ai-sdk/*` provider, e.g. `createOpenAICompatible(…)('llama3.2')`) or
   * Parley {@link LanguageModel}s. The names join the spec's three as allowed agent `model` values.
   * Default none: agents never reply.
   */
  models?: ModelMap;
  /** Where reply requests wait for reply workers; required when `models` is not empty. */
  replyQueue?: ReplyQueue;
  /**
   * Where live stream signals travel (default an in-process feed: right for one process; several
   * instances sharing Redis need the Redis adapter's feed).
   */
  conversationFeed?: ConversationFeed;
  /** How many latest messages a reply is generated from (default 50, `REPLY_CONTEXT_MESSAGES`). */
  replyContextMessages?: number;
  /** Waits between the 3 tries of a failing language model, in ms (default `[1000, 4000]`). */
  replyRetryDelaysMs?: readonly number[];
}

/** Delivery settings of a core (`TOKENS.deliveryOptions`), read by the workers it creates. */
export interface DeliveryOptions {
  /** Seconds between attempts (`CoreOptions.webhookRetryDelays`). */
  retryDelaysSeconds: readonly number[];
}

/** Parley's services over one set of adapters. */
export interface Core {
  agents: AgentService;
  conversations: ConversationService;
  /** Token usage totals of the workspace's replies (`GET /api/usage`). */
  usage: UsageService;
  webhooks: WebhookService;
  /** The workspace's event log, as `GET /api/events` shows it. */
  events: EventService;
  plants: PlantService;
  apiKeys: ApiKeyService;
  /** Operator actions on webhook delivery: deliveries log, retry, recover, test, rotate-secret. */
  deliveries: DeliveryService;
  /** Agent replies: asking for one, and making them (reply workers). */
  replies: ReplyService;
  /** Live signals of each conversation, read by its streams. */
  feed: ConversationFeed;
  /** The `model` values agents may take: the spec's three, then every name of `options.models`. */
  agentModels: readonly string[];
  /**
   * Opens a conversation's live stream (`GET /api/conversations/:id/stream`), see
   * {@link openConversationStream}.
   * @throws ParleyError `not_found`, `invalid_request` (bad cursor)
   */
  openStream(workspaceId: string, conversationId: string, options?: ConversationStreamOptions): Promise<ConversationStream>;
  /**
   * Per-workspace plan limits over `options.rateLimits`; `undefined` when no store was given, which
   * suits scripts and tests (the HTTP rate-limit middleware refuses such a core rather than serve
   * without limits).
   */
  rateLimiter: RateLimiter | undefined;
  /** The storage the services use (`options.storage` unless `register` replaced it), for what is not a service call (the readiness probe's `ping`). */
  storage: Storage;
  /** `options.idempotency`: the HTTP layer's `Idempotency-Key` store, when one was given. */
  idempotency: IdempotencyStore | undefined;
  /** The clock every service reads (`options.clock`, a `register` replacement, or the system clock). */
  clock: Clock;
  /** The child container the services were resolved from (see {@link CoreOptions.register}). */
  container: DependencyContainer;
}

/**
 * Builds the services in a new child container (the global tsyringe container is never
 * touched, so several cores can live in one process). `options.register` may replace any port
 * or service first; `rateLimiter` is built when a rate-limit store is registered either way.
 * @throws RangeError when `plans`, `rateLimitFailure` or `rateLimitTimeoutMs` is invalid (only
 *   checked when `rateLimits` is given), or `webhookRetryDelays` or `replyContextMessages` is, so a bad
 *   configuration fails at start-up.
 * @throws TypeError when a `models` entry is not a language model or has a bad name, or `models` comes
 *   without a `replyQueue`.
 */
export function createCore(options: CoreOptions): Core {
  const container = rootContainer.createChildContainer();
  container.register(TOKENS.storage, { useValue: options.storage });
  container.register(TOKENS.apiKeys, { useValue: options.apiKeys });
  container.register(TOKENS.deliveryQueue, { useValue: options.deliveryQueue });
  const retryDelaysSeconds = options.webhookRetryDelays ?? DEFAULT_WEBHOOK_RETRY_DELAYS;
  checkRetryDelays(retryDelaysSeconds);
  container.register(TOKENS.deliveryOptions, { useValue: { retryDelaysSeconds } satisfies DeliveryOptions });
  container.register(TOKENS.webhookTransport, {
    useValue: options.webhookTransport ?? undiciTransport({ allowPrivate: options.allowPrivateWebhookUrls ?? false }),
  });
  const models = resolveModels(options.models);
  if (models.size > 0 && !options.replyQueue) throw new TypeError('createCore: `models` needs a `replyQueue` (e.g. MemoryReplyQueue).');
  const contextMessages = options.replyContextMessages ?? 50;
  if (!Number.isSafeInteger(contextMessages) || contextMessages < 1) throw new RangeError('replyContextMessages: expected an integer ≥ 1.');
  const agentModels = agentModelNames(models);
  const feed = options.conversationFeed ?? new InProcessConversationFeed();
  container.register(TOKENS.models, { useValue: models });
  container.register(TOKENS.agentSchemas, { useValue: agentSchemas(agentModels) });
  // tsyringe treats a null value as unregistered: the queue is registered only when given, and the
  // reply service reads it from its options.
  if (options.replyQueue) container.register(TOKENS.replyQueue, { useValue: options.replyQueue });
  container.register(TOKENS.conversationFeed, { useValue: feed });
  container.register(TOKENS.replyOptions, {
    useValue: { contextMessages, retryDelaysMs: options.replyRetryDelaysMs ?? [1_000, 4_000], queue: options.replyQueue ?? null } satisfies ReplyOptions,
  });
  container.register(TOKENS.clock, { useValue: options.clock ?? systemClock });
  if (options.ids) container.register(TOKENS.ids, { useValue: options.ids });
  else {
    // One generator per core (ids stay monotonic across services), on whichever clock is registered.
    container.register(TOKENS.ids, {
      useFactory: instanceCachingFactory((resolver) => {
        const clock = resolver.resolve<Clock>(TOKENS.clock);
        return createUlidGenerator(() => clock.now());
      }),
    });
  }
  if (options.rateLimits) container.register(TOKENS.rateLimits, { useValue: options.rateLimits });
  const limiterOptions: RateLimiterOptions = {
    ...(options.plans && { plans: options.plans }),
    ...(options.rateLimitFailure && { failure: options.rateLimitFailure }),
    ...(options.rateLimitTimeoutMs !== undefined && { timeoutMs: options.rateLimitTimeoutMs }),
    ...(options.onRateLimitStoreError && { onStoreError: options.onRateLimitStoreError }),
  };
  container.register(TOKENS.rateLimiterOptions, { useValue: limiterOptions });
  const targets = new WebhookTargetPolicy({
    allowPrivate: options.allowPrivateWebhookUrls ?? false,
    ...(options.hostResolver && { resolver: options.hostResolver }),
  });
  container.register(TOKENS.webhookTargets, { useValue: targets });
  options.register?.(container);
  return {
    agents: container.resolve(AgentService),
    conversations: container.resolve(ConversationService),
    usage: container.resolve(UsageService),
    webhooks: container.resolve(WebhookService),
    events: container.resolve(EventService),
    plants: container.resolve(PlantService),
    apiKeys: container.resolve(ApiKeyService),
    deliveries: container.resolve(DeliveryService),
    replies: container.resolve(ReplyService),
    feed,
    agentModels,
    openStream: (workspaceId, conversationId, streamOptions) =>
      openConversationStream({ storage: container.resolve<Storage>(TOKENS.storage), feed }, workspaceId, conversationId, streamOptions),
    rateLimiter: container.isRegistered(TOKENS.rateLimits) ? container.resolve(RateLimiter) : undefined,
    storage: container.resolve<Storage>(TOKENS.storage),
    idempotency: options.idempotency,
    clock: container.resolve<Clock>(TOKENS.clock),
    container,
  };
}
