/**
 * @module Starts the ready-made server from a {@link Config}: storage (memory or Redis), API
 * keys, app, listener and (unless `DELIVERY_WORKER=false`) a delivery worker — and stops it:
 * drain requests and in-flight delivery attempts first, then close Redis. Also starts a
 * delivery worker alone (`parley worker`).
 */
import { setMaxListeners } from 'node:events';
import { createCore, createDeliveryWorker, createReplyWorker, type Core, type CoreOptions, type DeliveryWorker, type ReplyOutcome, type ReplyWorker } from '@parley/core';
import { languageModels } from './language-models.js';
import { createMetrics, type ParleyMetrics } from './metrics/metrics.js';
import { serveMetrics, type MetricsServerHandle } from './metrics/metrics-server.js';
import { restoreConfiguredKeys, setUpApiKeys, type ApiKeySetup } from './api-key-setup.js';
import { createApp } from './app.js';
import { openBackend } from './backend.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { serve, type ServerHandle } from './serve.js';

/** A started server and what it runs on. */
export interface RunningServer {
  handle: ServerHandle;
  core: Core;
  logger: Logger;
  /** The development key, when one was created (memory storage without `API_KEYS`). */
  devKey?: string;
  /** The in-process delivery worker; `undefined` with `DELIVERY_WORKER=false`. */
  worker: DeliveryWorker | undefined;
  /** The in-process reply worker; `undefined` with `DELIVERY_WORKER=false` or without `MODELS`. */
  replyWorker: ReplyWorker | undefined;
  /** The metrics listener (`METRICS_PORT`); `undefined` when it is unset. */
  metrics: MetricsServerHandle | undefined;
  /**
   * Stops accepting connections and new delivery work, lets in-flight requests and delivery
   * attempts finish, then closes the Redis client. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** A started delivery worker (`parley worker`) and what it runs on. */
export interface RunningWorker {
  core: Core;
  worker: DeliveryWorker;
  /** Makes agent replies; `undefined` without `MODELS`. */
  replyWorker: ReplyWorker | undefined;
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

function banner(url: string, storage: string, keys: ApiKeySetup, models: readonly string[] = []): string {
  const lines = [
    `Parley is listening on ${url} (${storage}).`,
    `API reference: ${url}/docs (OpenAPI 3.1: ${url}/openapi.json)`,
    // Names only: a model's URL may carry credentials, its key never leaves the config.
    ...(models.length > 0 ? [`Agents with model ${models.join(', ')} reply (MODELS).`] : []),
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
 * refused unless `config.webhookAllowPrivateUrls` (`WEBHOOK_ALLOW_PRIVATE_URLS=true`, docs/events-and-webhooks.md).
 */
export function createServerCore(
  adapters: CoreOptions,
  config: Pick<Config, 'rateLimitFailure' | 'webhookAllowPrivateUrls'> & Partial<Pick<Config, 'webhookRetryDelaysSeconds' | 'models' | 'replyContextMessages'>>,
  logger: Logger,
): Core {
  return createCore({
    ...adapters,
    // MODELS: each name becomes an allowed agent model whose agents reply (README "Agents that reply").
    models: languageModels(config.models ?? {}),
    ...(config.replyContextMessages !== undefined && { replyContextMessages: config.replyContextMessages }),
    rateLimitFailure: config.rateLimitFailure,
    allowPrivateWebhookUrls: config.webhookAllowPrivateUrls,
    ...(config.webhookRetryDelaysSeconds && { webhookRetryDelays: config.webhookRetryDelaysSeconds }),
    onRateLimitStoreError: (error, failure) => logger.warn({ err: error, ...failure }, 'rate-limit store failed'),
  });
}

/** A delivery worker's options: its log, and its attempts counted in `metrics` when given. */
function workerOptions(logger: Logger, metrics: ParleyMetrics | undefined) {
  return { logger: logger.child({ component: 'delivery' }), ...(metrics && { onAttempt: metrics.recordDeliveryAttempt }) };
}

/** The reply worker's logger and, with metrics, its `parley_replies_total` count. */
function replyWorkerOptions(logger: Logger, metrics: ParleyMetrics | undefined) {
  return { logger: logger.child({ component: 'replies' }), ...(metrics && { onOutcome: (outcome: ReplyOutcome) => void metrics.replies.inc({ outcome }) }) };
}

/**
 * Builds the core on memory storage, or on Redis when `config.redis` is set (storage, event log,
 * delivery queue, rate limits and API keys), sets up the API keys (see `api-key-setup.ts`), starts
 * a delivery worker unless `config.deliveryWorker` is false, and starts listening. Prints where it
 * listens, on what, and how to get a key.
 * @throws Error when Redis does not answer within `redisWaitMs`, or stored keys disagree on a
 * workspace's plan; nothing is left open then.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const logger = createLogger(config.logLevel, undefined, { format: config.logFormat });
  const backend = openBackend(config.redis, { logger, eventRetentionDays: config.eventRetentionDays });
  let worker: DeliveryWorker | undefined;
  let replyWorker: ReplyWorker | undefined;
  let metricsServer: MetricsServerHandle | undefined;
  try {
    await backend.waitUntilReachable(options.redisWaitMs ?? 10_000);
    const core = createServerCore(backend.adapters, config, logger);
    const keys = await setUpApiKeys(core, backend.keyStorage, config.apiKeys);
    if (config.apiKeys?.length) backend.onReconnect(restoreConfiguredKeys(core, config.apiKeys, logger));
    const shutdown = new AbortController();
    // Every open live stream listens for it: thousands of listeners are expected, not a leak.
    setMaxListeners(0, shutdown.signal);
    const metrics = config.metricsPort === undefined ? undefined : createMetrics({ deliveryQueue: backend.adapters.deliveryQueue });
    const app = createApp(core, {
      bodyLimitBytes: config.bodyLimitBytes,
      logger,
      replies: { shutdown: shutdown.signal },
      ...(config.corsOrigins && { corsOrigins: config.corsOrigins }),
      ...(metrics && { metrics }),
    });
    if (metrics) metricsServer = await serveMetrics(metrics.registry, { port: config.metricsPort!, hostname: config.host });
    const handle = await serve(app, { port: config.port, hostname: config.host });
    if (config.deliveryWorker) {
      worker = createDeliveryWorker(core, workerOptions(logger, metrics));
      worker.start();
      replyWorker = createReplyWorker(core, replyWorkerOptions(logger, metrics));
      replyWorker?.start();
    }
    print(banner(reachableUrl(handle), backend.description, keys, Object.keys(config.models)));
    if (metricsServer) print(`Prometheus metrics: ${metricsServer.url}\n\n`);
    logger.info({ url: handle.url, storage: backend.description, deliveryWorker: config.deliveryWorker, models: Object.keys(config.models), metrics: metricsServer?.url }, 'listening');
    let closing: Promise<void> | undefined;
    // Drain before closing Redis: in-flight requests and delivery attempts still need it to finish.
    // Open streams end first (clients resume elsewhere): they would hold the drain to its deadline.
    const close = () =>
      (closing ??= (shutdown.abort(), Promise.allSettled([handle.close(), worker?.stop(), replyWorker?.stop(), metricsServer?.close()]).then(() => backend.close())));
    return { handle, core, logger, worker, replyWorker, metrics: metricsServer, close, ...(keys.devKey === undefined ? {} : { devKey: keys.devKey }) };
  } catch (error) {
    await worker?.stop();
    await replyWorker?.stop();
    await metricsServer?.close();
    await backend.close();
    throw error;
  }
}

/**
 * Runs a delivery worker alone (`parley worker`): it relays the event log into the delivery queue
 * and makes the attempts, sharing the work with every other worker on the same Redis. Memory
 * storage lives in one process, so a worker of its own could never see the server's events:
 * refused with an `Error`.
 * @throws Error without Redis, or when Redis does not answer within `redisWaitMs`
 */
export async function startWorker(config: Config, options: Pick<StartOptions, 'print' | 'redisWaitMs'> = {}): Promise<RunningWorker> {
  if (config.redis === undefined) {
    throw new Error('parley worker needs REDIS_URL or REDIS_CLUSTER_NODES: with memory storage, deliveries are made by the worker inside parley serve.');
  }
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const logger = createLogger(config.logLevel, undefined, { format: config.logFormat });
  const backend = openBackend(config.redis, { logger, eventRetentionDays: config.eventRetentionDays });
  let metricsServer: MetricsServerHandle | undefined;
  try {
    await backend.waitUntilReachable(options.redisWaitMs ?? 10_000);
    const core = createServerCore(backend.adapters, config, logger);
    const metrics = config.metricsPort === undefined ? undefined : createMetrics({ deliveryQueue: backend.adapters.deliveryQueue });
    if (metrics) metricsServer = await serveMetrics(metrics.registry, { port: config.metricsPort!, hostname: config.host });
    const worker = createDeliveryWorker(core, workerOptions(logger, metrics));
    worker.start();
    const replyWorker = createReplyWorker(core, replyWorkerOptions(logger, metrics));
    replyWorker?.start();
    print(`Parley delivery worker is running (${backend.description})${replyWorker ? ', making agent replies too' : ''}.\n\n`);
    if (metricsServer) print(`Prometheus metrics: ${metricsServer.url}\n\n`);
    logger.info({ storage: backend.description, metrics: metricsServer?.url }, 'delivery worker started');
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= Promise.allSettled([worker.stop(), replyWorker?.stop(), metricsServer?.close()]).then(() => backend.close()));
    return { core, worker, replyWorker, metrics: metricsServer, logger, close };
  } catch (error) {
    await metricsServer?.close();
    await backend.close();
    throw error;
  }
}
