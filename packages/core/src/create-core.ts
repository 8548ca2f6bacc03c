/**
 * @module The composition root (docs/architecture.md#the-composition-root): registers an adapter
 * bundle and the settings in a container of their own, and builds the services and workers from it.
 * This is the only place a container is resolved from.
 */
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from './di.js';
import type { Adapters } from './ports/adapters.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { ConversationFeed } from './ports/conversation-feed.js';
import type { IdempotencyStore } from './ports/idempotency.js';
import { createUlidGenerator, type IdGenerator } from './ports/ids.js';
import type { WorkerLogger } from './ports/logger.js';
import type { Storage } from './ports/storage.js';
import type { WebhookTransport } from './ports/webhook-transport.js';
import type { WorkspaceScope } from './ports/scope.js';
import { systemHostResolver, type HostResolver } from './ports/webhook-targets.js';
import type { PlanRules } from './rate-limit/plans.js';
import { admitFirst, admitFirstLookup } from './rate-limit/admit-first.js';
import type { RateLimiterOptions, RateLimitFailurePolicy } from './rate-limit/options.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';
import { AgentService } from './services/agent-service.js';
import { ApiKeyService } from './services/api-key-service.js';
import { ConversationService } from './services/conversation-service.js';
import { UsageService } from './services/usage-service.js';
import { EventService } from './services/event-service.js';
import { MessageWriter } from './services/message-writer.js';
import { WebhookService } from './services/webhook-service.js';
import { WebhookTargetPolicy } from './services/webhook-targets.js';
import { DeliveryService } from './delivery/delivery-service.js';
import { DeliveryWorker, type DeliveryAttemptReport, type DeliveryWorkerOptions } from './delivery/delivery-worker.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS, checkRetryDelays, type DeliveryOptions } from './delivery/retry-schedule.js';
import { undiciTransport } from './delivery/undici-transport.js';
import { agentModelNames, contextWindows, resolveModels, type ModelMap } from './models/registry.js';
import {
  openConversationStream,
  type ConversationStream,
  type ConversationStreamOptions,
} from './replies/conversation-stream.js';
import { SharedPageReads } from './replies/shared-page-reads.js';
import type { ReplyOptions } from './replies/reply-options.js';
import { ReplyService, type ReplyOutcome } from './replies/reply-service.js';
import { ReplyWorker, type ReplyWorkerOptions } from './replies/reply-worker.js';
import { sdkMcpClients, type McpClients } from './replies/mcp/mcp-clients.js';
import { positiveMs } from './policy.js';
import { agentSchemas } from './schemas/agent.js';
import { TOKENS, type Token } from './tokens.js';
import { OutboxRelay, type OutboxRelayOptions } from './workers/outbox-relay.js';
import { WebhookFanOut } from './workers/webhook-fan-out.js';
import { Tracing } from './tracing/tracing.js';
import type { Tracer } from '@opentelemetry/api';

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
   * How replies reach agents' MCP servers (docs/mcp.md; default `sdkMcpClients({ allowPrivate:
   * allowPrivateWebhookUrls })`: the MCP SDK over Streamable HTTP, connect-time target checks, 30 s deadlines).
   */
  mcpClients?: McpClients;
  /**
   * Language models agents reply with, by agent `model` name (docs/replies-and-streams.md): AI SDK
   * language models (any `@ai-sdk/*` provider) or Parley {@link LanguageModel}s, each alone or as
   * `{model, contextWindow}` (tokens, default 8 192: a reply's prompt is trimmed to fit it,
   * docs/replies-and-streams.md#context-that-fits-the-model). The names join the spec's three as
   * allowed agent `model` values. Default none: agents never reply.
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
  /**
   * Where Parley's spans go (docs/observability.md#traces): a tracer of the host's OpenTelemetry
   * provider. Default `trace.getTracer('parley', version)` of `@opentelemetry/api`: the global
   * provider's, a no-op when the host registered none. Parley never registers anything global.
   */
  tracer?: Tracer;
  /**
   * Record message content, the system prompt and tool arguments and results in spans (default:
   * the environment's `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`).
   */
  traceMessageContent?: boolean;
  /** Tuning and hooks of `core.workers` (metrics count attempts and replies through the hooks). */
  workers?: {
    relay?: Omit<OutboxRelayOptions, 'logger'>;
    delivery?: Pick<DeliveryWorkerOptions, 'concurrency' | 'perEndpoint' | 'pollMs' | 'random'>;
    replies?: Pick<ReplyWorkerOptions, 'concurrency' | 'heartbeatMs' | 'pollMs' | 'drainMs' | 'cancelCheckMs'>;
    /** Told of every settled delivery attempt; never throws into the worker. */
    onDeliveryAttempt?: (report: DeliveryAttemptReport) => void;
    /** Told of every finished reply request. */
    onReplyOutcome?: (outcome: ReplyOutcome) => void;
  };
  /**
   * Replaces what the core is built from, before anything is built, in the core's own container
   * (tsyringe, docs/architecture.md#replacing-a-port-or-a-service): a service
   * (`container.registerSingleton(AgentService, AuditedAgentService)`, the subclass declaring its
   * constructor with `@inject(TOKENS.…)` like Parley's services) or a token's value
   * (`container.registerInstance(TOKENS.clock, clock)`). What is registered here wins and reaches
   * everything built from it: services, ids, workers, streams and `Core`'s own members. It gets
   * the container to register in, not to resolve from. Ports are replaced in the bundle instead
   * (`{ ...adapters, rateLimits: other }`).
   */
  register?: (container: Pick<DependencyContainer, 'register' | 'registerInstance' | 'registerSingleton'>) => void;
}

/** The workers of a core, built but not started: one process runs them (`parley serve`, `parley worker`). */
export interface CoreWorkers {
  /** Moves recorded events to their consumers: webhook fan-out, then automatic agent replies. */
  relay: OutboxRelay;
  /** Makes webhook delivery attempts. */
  delivery: DeliveryWorker;
  /**
   * Makes agent replies: leases the requests for the models configured here and, also without
   * language models, gives up requests no worker with their model took within `replyGiveUpMs`.
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
  /**
   * The bundle the core was built on, as given (a backend's own members included, e.g.
   * `postgresAdapters()`'s `sql`), for what lives beside the services: `@parley/http`'s sandbox
   * keeps its records on the same backend through it (docs/sandbox.md).
   */
  adapters: Adapters;
  /** The clock every service reads. */
  clock: Clock;
  /** The tracer Parley's spans go to and whether they record content (`settings.tracer`, `traceMessageContent`). */
  tracing: Tracing;
  /** The `model` values agents may take: the spec's three, then every name of `settings.models`. */
  agentModels: readonly string[];
  /**
   * Opens a conversation's live stream (`GET /api/conversations/:id/stream`), see
   * {@link openConversationStream}.
   * @throws ParleyError `not_found`, `invalid_request` (bad cursor)
   */
  openStream(
    scope: WorkspaceScope,
    conversationId: string,
    options?: ConversationStreamOptions,
  ): Promise<ConversationStream>;
  workers: CoreWorkers;
}

/**
 * Builds a core: registers `adapters`' members, `settings`, the services, the workers and the
 * streams' shared reads in a new child container (the global tsyringe container is never touched,
 * so several cores live in one process), lets `settings.register` replace any of them, then
 * resolves every member of `Core` from that container, once: one root, so a replacement reaches
 * everything built from it.
 * @throws RangeError when `plans`, `rateLimitFailure`, `rateLimitTimeoutMs`, `webhookRetryDelays`,
 *   `replyContextMessages`, `replyGiveUpMs` or a model's `contextWindow` is invalid, so a bad
 *   configuration fails at start-up.
 * @throws TypeError when a `models` entry is not a language model or has a bad name, or when a
 *   replacement of `AgentService` or `WebhookService` does not pass on their protections.
 */
export function createCore(adapters: Adapters, settings: CoreSettings = {}): Core {
  const retryDelaysSeconds = settings.webhookRetryDelays ?? DEFAULT_WEBHOOK_RETRY_DELAYS;
  checkRetryDelays(retryDelaysSeconds);
  const contextMessages = settings.replyContextMessages ?? 50;
  if (!Number.isSafeInteger(contextMessages) || contextMessages < 1) {
    throw new RangeError('replyContextMessages: expected an integer ≥ 1.');
  }
  const giveUpMs = positiveMs(settings.replyGiveUpMs, 600_000, 'replyGiveUpMs');
  const allowPrivate = settings.allowPrivateWebhookUrls ?? false;
  const { logger, workers: tuning = {} } = settings;

  const container = rootContainer.createChildContainer();
  const value = <T>(token: Token<T>, useValue: T) => container.register(token, { useValue });
  // Built on first resolve, once per core, from what the container holds by then: what `register`
  // replaced (a clock, ids, the models) reaches everything built from it.
  const built = <T>(token: Key<T>, build: (get: Get) => T) =>
    container.register(token, { useFactory: instanceCachingFactory((c) => build((key) => c.resolve(key))) });

  // What services and workers reach: every call made with a scope whose rate limit is still pending decides
  // it first, unless the storage decides it in that call's own step (docs/rate-limits.md#one-round-trip).
  value(TOKENS.storage, admitFirst(adapters.storage, adapters.rateLimits));
  value(TOKENS.apiKeys, adapters.apiKeys);
  value(TOKENS.rateLimits, adapters.rateLimits);
  value(TOKENS.deliveryQueue, adapters.deliveryQueue);
  value(TOKENS.replyQueue, adapters.replyQueue);
  value(TOKENS.conversationFeed, adapters.conversationFeed);
  value(TOKENS.idempotency, adapters.idempotency);
  value(TOKENS.clock, settings.clock ?? systemClock);
  value(TOKENS.models, resolveModels(settings.models));
  value(TOKENS.deliveryOptions, { retryDelaysSeconds } satisfies DeliveryOptions);
  value(TOKENS.replyOptions, {
    contextMessages,
    retryDelaysMs: settings.replyRetryDelaysMs ?? [1_000, 4_000],
    contextWindows: contextWindows(settings.models),
  } satisfies ReplyOptions);
  const decidedInStorage = adapters.storage.decidesRateLimits?.rateLimits === adapters.rateLimits;
  value(TOKENS.rateLimiterOptions, { ...rateLimiterOptions(settings), decidedInStorage });
  value(TOKENS.webhookTransport, settings.webhookTransport ?? undiciTransport({ allowPrivate }));
  value(
    TOKENS.tracing,
    new Tracing({
      ...(settings.tracer && { tracer: settings.tracer }),
      ...(settings.traceMessageContent !== undefined && { captureContent: settings.traceMessageContent }),
    }),
  );
  value(TOKENS.mcpClients, settings.mcpClients ?? sdkMcpClients({ allowPrivate }));
  const lookup = admitFirstLookup(settings.hostResolver ?? systemHostResolver);
  value(TOKENS.webhookTargets, new WebhookTargetPolicy({ allowPrivate, lookup }));
  built(TOKENS.ids, (get) => settings.ids ?? ulids(get(TOKENS.clock)));
  built(TOKENS.agentModels, (get) => agentModelNames(get(TOKENS.models)));
  built(TOKENS.agentSchemas, (get) => agentSchemas(get(TOKENS.agentModels)));

  // One of each service per core (the reply worker and the relay share the reply service).
  for (const service of SERVICES) container.registerSingleton<object>(service);

  built(OutboxRelay, (get) => {
    const replies = get(ReplyService);
    return new OutboxRelay(
      get(TOKENS.storage),
      [
        new WebhookFanOut(get(TOKENS.storage), get(TOKENS.deliveryQueue)),
        { name: 'replies', consume: (batch) => replies.queueAutomaticReplies(batch, logger) },
      ],
      { ...tuning.relay, ...(logger && { logger }) },
    );
  });
  built(
    DeliveryWorker,
    (get) =>
      new DeliveryWorker({
        ...tuning.delivery,
        storage: get(TOKENS.storage),
        queue: get(TOKENS.deliveryQueue),
        transport: get(TOKENS.webhookTransport),
        clock: get(TOKENS.clock),
        ids: get(TOKENS.ids),
        retryDelaysSeconds: get(TOKENS.deliveryOptions).retryDelaysSeconds,
        tracing: get(TOKENS.tracing),
        ...(logger && { logger }),
        ...(tuning.onDeliveryAttempt && { onAttempt: tuning.onDeliveryAttempt }),
      }),
  );
  built(
    ReplyWorker,
    (get) =>
      new ReplyWorker({
        ...tuning.replies,
        replies: get(ReplyService),
        queue: get(TOKENS.replyQueue),
        clock: get(TOKENS.clock),
        giveUpMs,
        ...(logger && { logger }),
        ...(tuning.onReplyOutcome && { onOutcome: tuning.onReplyOutcome }),
      }),
  );
  // One per core: its live streams share identical history reads in flight.
  built(SharedPageReads, (get) => new SharedPageReads(get(TOKENS.storage)));

  settings.register?.(container);

  const get: Get = (key) => container.resolve(key);
  const streams = { storage: get(TOKENS.storage), feed: get(TOKENS.conversationFeed), reads: get(SharedPageReads) };
  return {
    agents: get(AgentService),
    conversations: get(ConversationService),
    usage: get(UsageService),
    webhooks: get(WebhookService),
    events: get(EventService),
    apiKeys: get(ApiKeyService),
    deliveries: get(DeliveryService),
    replies: get(ReplyService),
    rateLimiter: get(RateLimiter),
    idempotency: get(TOKENS.idempotency),
    feed: get(TOKENS.conversationFeed),
    storage: adapters.storage,
    adapters,
    clock: get(TOKENS.clock),
    tracing: get(TOKENS.tracing),
    agentModels: get(TOKENS.agentModels),
    openStream: (scope, conversationId, streamOptions) =>
      openConversationStream(streams, scope, conversationId, streamOptions),
    workers: coreWorkers(get(OutboxRelay), get(DeliveryWorker), get(ReplyWorker)),
  };
}

/** The services a core holds one of each (`MessageWriter` is shared by conversations and replies). */
const SERVICES = [
  AgentService,
  ConversationService,
  UsageService,
  WebhookService,
  EventService,
  ApiKeyService,
  DeliveryService,
  ReplyService,
  MessageWriter,
  RateLimiter,
] as const;

/** What a core's container holds something under: a token, or the class it builds. */
// `any[]` as in tsyringe's `constructor<T>`: a class is a key whatever its parameters.
type Key<T> = Token<T> | (new (...args: any[]) => T);
type Get = <T>(key: Key<T>) => T;

/** Prefixed ULIDs stamped by `clock`. */
function ulids(clock: Clock): IdGenerator {
  return createUlidGenerator(() => clock.now());
}

/** The workers started and stopped together. */
function coreWorkers(relay: OutboxRelay, delivery: DeliveryWorker, replies: ReplyWorker): CoreWorkers {
  return {
    relay,
    delivery,
    replies,
    start() {
      relay.start();
      delivery.start();
      replies.start();
    },
    async stop() {
      await Promise.all([relay.stop(), delivery.stop(), replies.stop()]);
    },
  };
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
