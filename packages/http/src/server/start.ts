/**
 * @module Boots the ready-made server from a {@link Config} — `parley serve` (API, and unless
 * `DELIVERY_WORKER=false` the workers) and `parley worker` (the workers alone) share one boot
 * sequence: adapters, core, metrics, workers — and stops it: drain requests and in-flight work
 * first, then close the adapters.
 */
import { setMaxListeners } from 'node:events';
import {
  createCore,
  type Adapters,
  type Core,
  type CoreSettings,
  type CoreWorkers,
  type ReplyOutcome,
} from '@parley/core';
import { languageModels } from './language-models.js';
import type { DatabasePoolCounts, ParleyMetrics } from '../app/metrics/metrics.js';
import { serveMetrics, type MetricsServerHandle } from './metrics-server.js';
import { restoreConfiguredKeys, setUpApiKeys, type ApiKeySetup } from './api-key-setup.js';
import { createApp } from '../app/app.js';
import { openAdapters } from './backend.js';
import type { Config } from '../cli/config.js';
import { createLogger, type Logger } from '../app/logger.js';
import { serve, type ServerHandle } from './serve.js';
import { startTracing, type TracingHandle } from './tracing-sdk.js';

/** A started server and what it runs on. */
export interface RunningServer {
  handle: ServerHandle;
  core: Core;
  logger: Logger;
  /** The development key, when one was created (memory storage without `API_KEYS`). */
  devKey?: string;
  /** The workers running in this process; `undefined` with `DELIVERY_WORKER=false`. */
  workers: CoreWorkers | undefined;
  /** The metrics listener (`METRICS_PORT`); `undefined` when it is unset. */
  metrics: MetricsServerHandle | undefined;
  /**
   * Stops accepting connections and new delivery work, lets in-flight requests and delivery
   * attempts finish, then closes the Redis client. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** A started worker process (`parley worker`) and what it runs on. */
export interface RunningWorker {
  core: Core;
  /** The outbox relay, delivery and (with `MODELS`) reply workers. */
  workers: CoreWorkers;
  /** The metrics listener (`METRICS_PORT`); `undefined` when it is unset. */
  metrics: MetricsServerHandle | undefined;
  logger: Logger;
  /** Takes no new work, finishes in-flight attempts, then closes Redis. Safe to call more than once. */
  close(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Where start-up prints its banner; default stdout. */
  print?: (text: string) => void;
  /** How long start-up waits for Redis to answer before failing, in ms; default 10 000. */
  redisWaitMs?: number;
}

/** A URL a person can paste: wildcard listening addresses are reached through loopback. */
function reachableUrl(handle: ServerHandle): string {
  return ['0.0.0.0', '::'].includes(handle.hostname) ? `http://127.0.0.1:${handle.port}` : handle.url;
}

function banner(
  url: string,
  storage: string,
  keys: ApiKeySetup,
  models: readonly string[] = [],
  runsWorkers = true,
  consoleServed = true,
): string {
  // Names only: a model's URL may carry credentials, its key never leaves the config.
  const replies =
    models.length === 0
      ? []
      : runsWorkers
        ? [`Agents with model ${models.join(', ')} reply (MODELS).`]
        : [
            `Agents with model ${models.join(', ')} reply through \`parley worker\` processes that have the same MODELS (DELIVERY_WORKER=false here).`,
          ];
  const lines = [
    `Parley is listening on ${url} (${storage}).`,
    ...(consoleServed ? [`Console: ${url}/console/ (sign in with an API key)`] : []),
    `API reference: ${url}/docs (OpenAPI 3.1: ${url}/openapi.json)`,
    ...replies,
    ...keys.lines,
  ];
  if (keys.devKey !== undefined) {
    lines.push(
      '',
      'Development API key (workspace "default", plan "pro", all scopes). It is shown only this once:',
      '',
      `  KEY=${keys.devKey}`,
      '',
      'Try it:',
      '',
      `  curl -H "Authorization: Bearer ${keys.devKey}" ${url}/api/agents`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/**
 * The server's core over `adapters`: the rate limiter decides by `config.rateLimitFailure` when
 * its store fails or takes over 250 ms (docs/rate-limits.md), and each such failure is logged (pino,
 * `warn`, with the workspace and the policy). Webhook URLs with private or loopback hosts are
 * refused unless `config.webhookAllowPrivateUrls` (`WEBHOOK_ALLOW_PRIVATE_URLS=true`,
 * docs/events-and-webhooks.md). The workers log to `logger` and, with `metrics`, count attempts
 * and replies there.
 */
export function createServerCore(
  adapters: Adapters,
  config: Pick<Config, 'rateLimitFailure' | 'webhookAllowPrivateUrls'> &
    Partial<Pick<Config, 'webhookRetryDelaysSeconds' | 'models' | 'replyContextMessages' | 'replyGiveUpSeconds'>>,
  logger: Logger,
  metrics?: ParleyMetrics,
  settings: Pick<CoreSettings, 'hostResolver'> = {},
): Core {
  return createCore(adapters, {
    ...settings,
    // MODELS: each name becomes an allowed agent model whose agents reply (docs/replies-and-streams.md).
    models: languageModels(config.models ?? {}),
    ...(config.replyContextMessages !== undefined && { replyContextMessages: config.replyContextMessages }),
    ...(config.replyGiveUpSeconds !== undefined && { replyGiveUpMs: config.replyGiveUpSeconds * 1000 }),
    rateLimitFailure: config.rateLimitFailure,
    allowPrivateWebhookUrls: config.webhookAllowPrivateUrls,
    ...(config.webhookRetryDelaysSeconds && { webhookRetryDelays: config.webhookRetryDelaysSeconds }),
    onRateLimitStoreError: (error, failure) => logger.warn({ err: error, ...failure }, 'rate-limit store failed'),
    logger: logger.child({ component: 'workers' }),
    ...(metrics && {
      workers: {
        onDeliveryAttempt: metrics.recordDeliveryAttempt,
        onReplyOutcome: (outcome: ReplyOutcome) => void metrics.replies.inc({ outcome }),
      },
    }),
  });
}

/** What {@link boot} started, whichever command it serves. */
interface Booted {
  adapters: Adapters;
  core: Core;
  logger: Logger;
  metrics: ParleyMetrics | undefined;
  metricsServer: MetricsServerHandle | undefined;
  /** Started; `undefined` when this process runs none. */
  workers: CoreWorkers | undefined;
  /** Closes the adapters, then flushes and stops the OpenTelemetry SDK when it runs. */
  closeBackend(): Promise<void>;
}

/**
 * The boot sequence `parley serve` and `parley worker` share: open the adapters `config` names,
 * wait for them, build the core, serve metrics, start the workers when `runWorkers`. On failure
 * it closes what it opened and rethrows.
 */
async function boot(config: Config, runWorkers: boolean, waitMs: number): Promise<Booted> {
  const logger = createLogger(config.logLevel, undefined, { format: config.logFormat });
  // Before the backend's driver is loaded, which its instrumentation patches (docs/observability.md#traces).
  const tracing = await startTracing();
  if (tracing) logger.info('OpenTelemetry traces on (OTEL_* environment)');
  let adapters: Adapters;
  try {
    adapters = await openAdapters(config, { logger });
  } catch (error) {
    await tracing?.shutdown();
    throw error;
  }
  const closeBackend = () => closeInOrder(adapters, tracing);
  let metricsServer: MetricsServerHandle | undefined;
  try {
    await adapters.ready(waitMs);
    // postgresAdapters() exposes its pool (null on PGlite) for the pool gauge.
    const databasePool = (adapters as { pool?: DatabasePoolCounts | null }).pool ?? null;
    // prom-client is loaded only with METRICS_PORT set: a few MiB a server without metrics never needs.
    const metrics =
      config.metricsPort === undefined
        ? undefined
        : (await import('../app/metrics/metrics.js')).createMetrics({
            deliveryQueue: adapters.deliveryQueue,
            databasePool,
          });
    const core = createServerCore(adapters, config, logger, metrics);
    if (metrics)
      metricsServer = await serveMetrics(metrics.registry, { port: config.metricsPort!, hostname: config.host });
    const workers = runWorkers ? core.workers : undefined;
    // A DATA_DIR server is the only process on its folder: there are no other workers to leave replies to.
    const shared = adapters.info.durable && !(config.database !== undefined && 'dataDir' in config.database);
    if (workers && shared && Object.keys(config.models).length === 0) {
      // docs/replies-and-streams.md: replies asked for here wait for a worker that has their model.
      logger.warn(
        { replyGiveUpSeconds: config.replyGiveUpSeconds },
        "no MODELS in this process: agent reply requests are left to workers that have the agent's model, and fail (reply.failed) after REPLY_GIVE_UP_SECONDS without one",
      );
    }
    workers?.start();
    return { adapters, core, logger, metrics, metricsServer, workers, closeBackend };
  } catch (error) {
    await metricsServer?.close();
    await closeBackend();
    throw error;
  }
}

/** Closes `adapters`, then flushes the spans of the shutdown and stops the SDK (a failed export never fails the stop). */
async function closeInOrder(adapters: Adapters, tracing: TracingHandle | undefined): Promise<void> {
  try {
    await adapters.close();
  } finally {
    await tracing?.shutdown().catch(() => {});
  }
}

/**
 * Boots on the backend `config` names (memory, Redis, PostgreSQL or PGlite), sets up the API keys (see
 * `api-key-setup.ts`), starts the workers unless `config.deliveryWorker` is false, and starts
 * listening. Prints where it listens, on what, and how to get a key.
 * @throws Error when the backend does not answer within `redisWaitMs`, or stored keys disagree on a
 * workspace's plan; nothing is left open then.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const { adapters, core, logger, metrics, metricsServer, workers, closeBackend } = await boot(
    config,
    config.deliveryWorker,
    options.redisWaitMs ?? 10_000,
  );
  const shutdown = new AbortController();
  const stopAll = () => Promise.allSettled([workers?.stop(), metricsServer?.close()]).then(closeBackend);
  try {
    const keys = await setUpApiKeys(core, adapters.info, config.apiKeys);
    if (config.apiKeys?.length) adapters.onReconnect(restoreConfiguredKeys(core, config.apiKeys, logger));
    // Every open live stream listens for it: thousands of listeners are expected, not a leak.
    setMaxListeners(0, shutdown.signal);
    const app = createApp(core, {
      bodyLimitBytes: config.bodyLimitBytes,
      logger,
      replies: { shutdown: shutdown.signal },
      ...(config.corsOrigins && { corsOrigins: config.corsOrigins }),
      ...(metrics && { metrics }),
      console: config.console ?? true,
    });
    const handle = await serve(app, { port: config.port, hostname: config.host });
    print(
      banner(
        reachableUrl(handle),
        adapters.info.description,
        keys,
        Object.keys(config.models),
        config.deliveryWorker,
        config.console ?? true,
      ),
    );
    if (metricsServer) print(`Prometheus metrics: ${metricsServer.url}\n\n`);
    logger.info(
      {
        url: handle.url,
        storage: adapters.info.description,
        deliveryWorker: config.deliveryWorker,
        models: Object.keys(config.models),
        metrics: metricsServer?.url,
      },
      'listening',
    );
    let closing: Promise<void> | undefined;
    // Drain before closing the adapters: in-flight requests (an operator's `test` attempt records its
    // result after the receiver answers) and delivery attempts still need them, so the adapters close
    // only once both the listener and the workers are done. Open streams end first (clients resume
    // elsewhere): they would hold the drain to its deadline.
    const close = () =>
      (closing ??=
        (shutdown.abort(),
        Promise.allSettled([handle.close(), workers?.stop(), metricsServer?.close()]).then(closeBackend)));
    return {
      handle,
      core,
      logger,
      workers,
      metrics: metricsServer,
      close,
      ...(keys.devKey === undefined ? {} : { devKey: keys.devKey }),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Runs the workers alone (`parley worker`): the outbox relay, webhook delivery and (with `MODELS`)
 * agent replies, sharing the work with every other worker on the same backend. Memory storage
 * lives in one process, so a worker of its own could never see the server's events: refused, as
 * is `DATA_DIR` (a folder one process holds).
 * @throws Error on a backend that is not durable, or when it does not answer within `redisWaitMs`
 */
export async function startWorker(
  config: Config,
  options: Pick<StartOptions, 'print' | 'redisWaitMs'> = {},
): Promise<RunningWorker> {
  if (config.database !== undefined && 'dataDir' in config.database) {
    throw new Error(
      'parley worker needs DATABASE_URL, REDIS_URL or REDIS_CLUSTER_NODES: DATA_DIR is used by one process, so deliveries and replies are made by the worker inside parley serve.',
    );
  }
  if (config.redis === undefined && config.database === undefined) {
    throw new Error(
      'parley worker needs DATABASE_URL, REDIS_URL or REDIS_CLUSTER_NODES: with memory storage, deliveries are made by the worker inside parley serve.',
    );
  }
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const { adapters, core, logger, metricsServer, workers, closeBackend } = await boot(
    config,
    true,
    options.redisWaitMs ?? 10_000,
  );
  const models = Object.keys(config.models);
  print(
    `Parley worker is running (${adapters.info.description}): webhook deliveries${models.length > 0 ? `, and replies of agents with model ${models.join(', ')}` : ''}.\n\n`,
  );
  if (metricsServer) print(`Prometheus metrics: ${metricsServer.url}\n\n`);
  logger.info({ storage: adapters.info.description, metrics: metricsServer?.url }, 'delivery worker started');
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= Promise.allSettled([workers!.stop(), metricsServer?.close()]).then(closeBackend));
  return { core, workers: workers!, metrics: metricsServer, logger, close };
}
