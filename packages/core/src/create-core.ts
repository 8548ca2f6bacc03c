/**
 * @module The composition root (docs/architecture.md#the-composition-root): registers an adapter
 * bundle and the settings in a container of their own, and builds the services and workers from it.
 * This is the only place a container is resolved from.
 */
import { container as rootContainer, type DependencyContainer } from './di.js';
import type { Adapters } from './ports/adapters.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { ConversationFeed } from './ports/conversation-feed.js';
import type { IdempotencyStore } from './ports/idempotency.js';
import { createUlidGenerator, type IdGenerator } from './ports/ids.js';
import type { WorkerLogger } from './ports/logger.js';
import type { Storage } from './ports/storage.js';
import type { WebhookTransport } from './ports/webhook-transport.js';
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
import { DeliveryWorker, type DeliveryAttemptReport, type DeliveryWorkerOptions } from './delivery/delivery-worker.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS, checkRetryDelays } from './delivery/retry-schedule.js';
import { undiciTransport } from './delivery/undici-transport.js';
import { agentModelNames, resolveModels, type ModelMap } from './models/registry.js';
import { openConversationStream, type ConversationStream, type ConversationStreamOptions } from './replies/conversation-stream.js';
import { SharedPageReads } from './replies/shared-page-reads.js';
import { ReplyService, type ReplyOptions, type ReplyOutcome } from './replies/reply-service.js';
import { ReplyWorker, type ReplyWorkerOptions } from './replies/reply-worker.js';
import { positiveMs } from './policy.js';
import { agentSchemas } from './schemas/agent.js';
import { TOKENS } from './tokens.js';
import { OutboxRelay, type OutboxRelayOptions } from './workers/outbox-relay.js';
import { WebhookFanOut } from './workers/webhook-fan-out.js';

/**
 * How a core behaves, apart from where it stores things (that is the {@link Adapters} bundle).
 * Every field is optional; the defaults suit a production server.
 */
export interface CoreSettings {
  /** Default the system clock. Ids (prefixed ULIDs) and timestamps follow it. */
  clock?: Clock;
  /** Default prefixed ULIDs on `clock`. */
  ids?: IdGenerator;
  /**
   * How webhook requests are sent (default `undiciTransport({ allowPrivate:
   * allowPrivateWebhookUrls })`: 15 s / 5 s deadlines, no redirects, connect-time target checks).
   */
  webhookTransport?: WebhookTransport;
  /**
   * Seconds between delivery attempts (default {@link DEFAULT_WEBHOOK_RETRY_DELAYS}, the Standard
   * Webhooks schedule: ten attempts over about 75 h).
   */
  webhookRetryDelays?: readonly number[];
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
  /** Where webhook URL host names are resolved at registration (default the operating system's resolver). */
  hostResolver?: HostResolver;
  /**
   * Language models agents reply with, by agent `model` name (docs/replies-and-streams.md): AI SDK
   * language models (any `@ai-sdk/*` provider) or Parley {@link LanguageModel}s. The names join the
   * spec's three as allowed agent `model` values. Default none: agents never reply.
   */
  models?: ModelMap;
  /** How many latest messages a reply is generated from (default 50, `REPLY_CONTEXT_MESSAGES`). */
  replyContextMessages?: number;
  /** Waits between the 3 tries of a failing language model, in ms (default `[1000, 4000]`). */
  replyRetryDelaysMs?: readonly number[];
  /**
   * How long a reply request may wait for a worker that has the agent's language model before it
   * is given up with `reply.failed`, in ms (default 600 000, `REPLY_GIVE_UP_SECONDS`).
   */
  replyGiveUpMs?: number;
  /** Where the workers report (pino's logger fits; default silent). */
  logger?: WorkerLogger;
  /** Tuning and hooks of `core.workers` (metrics count attempts and replies through the hooks). */
  workers?: {
    relay?: Omit<OutboxRelayOptions, 'logger'>;
    delivery?: Pick<DeliveryWorkerOptions, 'concurrency' | 'perEndpoint' | 'pollMs' | 'random'>;
    replies?: Pick<ReplyWorkerOptions, 'concurrency' | 'heartbeatMs' | 'pollMs' | 'drainMs'>;
    /** Told of every settled delivery attempt; never throws into the worker. */
    onDeliveryAttempt?: (report: DeliveryAttemptReport) => void;
    /** Told of every finished reply request. */
    onReplyOutcome?: (outcome: ReplyOutcome) => void;
  };
  /**
   * Replaces a service before any is built, in the core's own container (tsyringe, docs/architecture.md
   * "Replacing a service"): `container.register(AgentService, { useClass: AuditedAgentService })`,
   * where the subclass declares its constructor with `@inject(TOKENS.…)` like Parley's services.
   * What is registered here wins, and every service that depends on it gets the replacement. Ports
   * are replaced in the bundle instead (`{ ...adapters, rateLimits: other }`).
   */
  register?: (container: DependencyContainer) => void;
}

/** The workers of a core, built but not started: one process runs them (`parley serve`, `parley worker`). */
export interface CoreWorkers {
  /** Moves recorded events to their consumers: webhook fan-out, then automatic agent replies. */
  relay: OutboxRelay;
  /** Makes webhook delivery attempts. */
  delivery: DeliveryWorker;
  /**
   * Makes agent replies. Also without language models: it then leaves each request for a worker
   * that has the agent's model, and gives it up after `replyGiveUpMs`.
   */
  replies: ReplyWorker;
  /** Starts every worker. */
  start(): void;
  /**
   * Takes no new work, lets the work in hand finish (delivery attempts within their 15 s deadline,
   * replies within the reply worker's drain time) and resolves once every worker ended.
   */
  stop(): Promise<void>;
}

/** Parley's services over one adapter bundle. */
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
  /** Agent replies: asking for one, and making them (the reply worker). */
  replies: ReplyService;
  /** Per-workspace plan limits over the bundle's rate-limit store (docs/rate-limits.md). */
  rateLimiter: RateLimiter;
  /** The bundle's `Idempotency-Key` store, for the HTTP layer. */
  idempotency: IdempotencyStore;
  /** Live signals of each conversation, read by its streams. */
  feed: ConversationFeed;
  /** The storage the services use, for what is not a service call (the readiness probe's `ping`). */
  storage: Storage;
  /** The clock every service reads. */
  clock: Clock;
  /** The `model` values agents may take: the spec's three, then every name of `settings.models`. */
  agentModels: readonly string[];
  /**
   * Opens a conversation's live stream (`GET /api/conversations/:id/stream`), see
   * {@link openConversationStream}.
   * @throws ParleyError `not_found`, `invalid_request` (bad cursor)
   */
  openStream(workspaceId: string, conversationId: string, options?: ConversationStreamOptions): Promise<ConversationStream>;
  workers: CoreWorkers;
}

/**
 * Builds a core: registers `adapters`' members and `settings` in a new child container (the global
 * tsyringe container is never touched, so several cores live in one process), lets
 * `settings.register` replace services, and resolves the services and workers once.
 * @throws RangeError when `plans`, `rateLimitFailure`, `rateLimitTimeoutMs`, `webhookRetryDelays`
 *   or `replyContextMessages` is invalid, so a bad configuration fails at start-up.
 * @throws TypeError when a `models` entry is not a language model or has a bad name.
 */
export function createCore(adapters: Adapters, settings: CoreSettings = {}): Core {
  const container = rootContainer.createChildContainer();
  const clock = settings.clock ?? systemClock;
  const ids = settings.ids ?? createUlidGenerator(() => clock.now());
  const retryDelaysSeconds = settings.webhookRetryDelays ?? DEFAULT_WEBHOOK_RETRY_DELAYS;
  checkRetryDelays(retryDelaysSeconds);
  const contextMessages = settings.replyContextMessages ?? 50;
  if (!Number.isSafeInteger(contextMessages) || contextMessages < 1) throw new RangeError('replyContextMessages: expected an integer ≥ 1.');
  const models = resolveModels(settings.models);
  const agentModels = agentModelNames(models);
  const transport = settings.webhookTransport ?? undiciTransport({ allowPrivate: settings.allowPrivateWebhookUrls ?? false });

  const values: Array<[symbol, unknown]> = [
    [TOKENS.storage, adapters.storage],
    [TOKENS.apiKeys, adapters.apiKeys],
    [TOKENS.rateLimits, adapters.rateLimits],
    [TOKENS.deliveryQueue, adapters.deliveryQueue],
    [TOKENS.replyQueue, adapters.replyQueue],
    [TOKENS.conversationFeed, adapters.conversationFeed],
    [TOKENS.clock, clock],
    [TOKENS.ids, ids],
    [TOKENS.webhookTransport, transport],
    [TOKENS.deliveryOptions, { retryDelaysSeconds } satisfies DeliveryOptions],
    [TOKENS.models, models],
    [TOKENS.agentSchemas, agentSchemas(agentModels)],
    [TOKENS.replyOptions, { contextMessages, retryDelaysMs: settings.replyRetryDelaysMs ?? [1_000, 4_000] } satisfies ReplyOptions],
    [TOKENS.rateLimiterOptions, rateLimiterOptions(settings)],
    [
      TOKENS.webhookTargets,
      new WebhookTargetPolicy({ allowPrivate: settings.allowPrivateWebhookUrls ?? false, ...(settings.hostResolver && { resolver: settings.hostResolver }) }),
    ],
  ];
  for (const [token, value] of values) container.register(token, { useValue: value });
  settings.register?.(container);

  const replies = container.resolve(ReplyService);
  const logger = settings.logger;
  const tuning = settings.workers ?? {};
  const relay = new OutboxRelay(
    adapters.storage,
    [new WebhookFanOut(adapters.storage, adapters.deliveryQueue), { name: 'replies', consume: (batch) => replies.queueAutomaticReplies(batch) }],
    { ...tuning.relay, ...(logger && { logger }) },
  );
  const delivery = new DeliveryWorker({
    ...tuning.delivery,
    storage: adapters.storage,
    queue: adapters.deliveryQueue,
    transport,
    clock,
    ids,
    retryDelaysSeconds,
    ...(logger && { logger }),
    ...(tuning.onDeliveryAttempt && { onAttempt: tuning.onDeliveryAttempt }),
  });
  const replyWorker = new ReplyWorker({
    ...tuning.replies,
    replies,
    queue: adapters.replyQueue,
    giveUpMs: positiveMs(settings.replyGiveUpMs, 600_000, 'replyGiveUpMs'),
    ...(logger && { logger }),
    ...(tuning.onReplyOutcome && { onOutcome: tuning.onReplyOutcome }),
  });
  const workers: CoreWorkers = {
    relay,
    delivery,
    replies: replyWorker,
    start() {
      relay.start();
      delivery.start();
      replyWorker.start();
    },
    async stop() {
      await Promise.all([relay.stop(), delivery.stop(), replyWorker.stop()]);
    },
  };

  // One per core: its live streams share identical history reads in flight.
  const streamReads = new SharedPageReads(adapters.storage);

  return {
    agents: container.resolve(AgentService),
    conversations: container.resolve(ConversationService),
    usage: container.resolve(UsageService),
    webhooks: container.resolve(WebhookService),
    events: container.resolve(EventService),
    plants: container.resolve(PlantService),
    apiKeys: container.resolve(ApiKeyService),
    deliveries: container.resolve(DeliveryService),
    replies,
    rateLimiter: container.resolve(RateLimiter),
    idempotency: adapters.idempotency,
    feed: adapters.conversationFeed,
    storage: adapters.storage,
    clock,
    agentModels,
    openStream: (workspaceId, conversationId, streamOptions) =>
      openConversationStream({ storage: adapters.storage, feed: adapters.conversationFeed, reads: streamReads }, workspaceId, conversationId, streamOptions),
    workers,
  };
}

/** Delivery settings of a core (`TOKENS.deliveryOptions`). */
export interface DeliveryOptions {
  /** Seconds between attempts (`CoreSettings.webhookRetryDelays`). */
  retryDelaysSeconds: readonly number[];
}

/** The rate limiter's options among `settings`. */
function rateLimiterOptions(settings: CoreSettings): RateLimiterOptions {
  return {
    ...(settings.plans && { plans: settings.plans }),
    ...(settings.rateLimitFailure && { failure: settings.rateLimitFailure }),
    ...(settings.rateLimitTimeoutMs !== undefined && { timeoutMs: settings.rateLimitTimeoutMs }),
    ...(settings.onRateLimitStoreError && { onStoreError: settings.onRateLimitStoreError }),
  };
}
