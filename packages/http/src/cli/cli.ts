#!/usr/bin/env node
/**
 * @module The `parley` command: `parley serve` starts the server, `parley worker` a delivery
 * worker alone, `parley migrate` migrates PostgreSQL, `parley keys` manages API keys in Redis or
 * PostgreSQL; `parley --help` explains.
 */
import { createRequire } from 'node:module';
import { describeStartFailure, environmentWithFlags, UsageError } from './cli-flags.js';
import { loadConfig, type Config } from './config.js';
import { keysCommand } from './keys-command.js';
import { migrateCommand } from './migrate-command.js';
import type { Logger } from '../app/logger.js';
import { startServer, startWorker } from '../server/start.js';

const HELP = `Usage: parley <command> [options]

Commands:
  serve          Start the HTTP API (agents, conversations, messages, webhooks, events; plants
                 sandbox) with a worker inside for webhook deliveries and agent replies
                 (unless DELIVERY_WORKER=false)
  worker         Run a worker alone (webhook deliveries, agent replies; needs Redis or
                 DATABASE_URL); run as many as you need
  migrate        Apply pending PostgreSQL migrations (DATABASE_URL or DATA_DIR) and say which
  keys           Create, list and revoke API keys in Redis or PostgreSQL (parley keys --help)

Options of serve and worker (each wins over its environment variable):
  --port <n>             PORT
  --host <address>       HOST
  --redis-url <url>      REDIS_URL
  --database-url <url>   DATABASE_URL
  --data-dir <folder>    DATA_DIR
  --log-format <format>  LOG_FORMAT

Options:
  -h, --help     Show this help
  -v, --version  Show the version

Environment (all optional):
  PORT                        listening port (default 3000)
  HOST                        listening address (default 127.0.0.1; 0.0.0.0 in containers)
  REDIS_URL                   redis://[user:password@]host:port[/db]: storage, rate limits and
                              API keys in Redis (unset, with REDIS_CLUSTER_NODES unset: memory)
  REDIS_CLUSTER_NODES         host:port,host:port,... seed nodes of a Redis Cluster instead
  REDIS_PREFIX                prefix of every Redis key (default parley:)
  DATABASE_URL                postgres://user:password@host:port/db: everything in PostgreSQL
  DATA_DIR                    a folder: everything in embedded PostgreSQL (PGlite), one process
                              (set at most one of REDIS_URL, DATABASE_URL, DATA_DIR)
  DATABASE_MIGRATE            auto (apply pending migrations at start) or off (default auto)
  PARLEY_SCHEMA               PostgreSQL schema of every table (default parley)
  DATABASE_POOL_SIZE          connections to PostgreSQL per process (default 10)
  DATABASE_STATEMENT_TIMEOUT_MS  statement_timeout of those connections (default 5000)
  DATABASE_LISTEN_URL         direct connection for LISTEN behind a transaction-mode pooler
  API_KEYS                    JSON array of {key, workspace, plan, scopes?, limitPerHour?};
                              unset: one development key on memory storage, none on Redis
  RATE_LIMIT_FAILURE          open or closed: admit or refuse (503) requests when the rate-limit
                              store does not answer within 250 ms (default open)
  BODY_LIMIT_BYTES            larger request bodies get 413 (default 1048576)
  CORS_ORIGINS                * or comma-separated origins (https://app.example.com) whose
                              pages may call the API from a browser (default: none)
  CONSOLE                     false: no web console at /console (default true)
  WEBHOOK_ALLOW_PRIVATE_URLS  true allows loopback/private webhook and MCP targets (default false)
  WEBHOOK_RETRY_DELAYS        seconds between delivery attempts, fractions allowed (default
                              5,300,1800,7200,18000,36000,50400,72000,86400)
  EVENT_RETENTION_DAYS        days events and the deliveries log are kept (default 14)
  DELIVERY_WORKER             false: parley serve makes no deliveries or replies (run parley worker)
  MODELS                      JSON {"<agent model name>": {provider: "openai-compatible", baseURL,
                              model, apiKey? | apiKeyEnv?, contextWindow?}}: agents with that
                              model reply; contextWindow in tokens (default 8192)
  REPLY_CONTEXT_MESSAGES      latest messages a reply is generated from, at most (default 50)
  LOG_LEVEL                   fatal, error, warn, info, debug, trace or silent (default info)
  LOG_FORMAT                  pretty (readable lines), json, or auto: pretty on a terminal,
                              JSON otherwise (default auto)
  METRICS_PORT                serve Prometheus metrics at /metrics on this port (default: none)
  OTEL_EXPORTER_OTLP_ENDPOINT export OpenTelemetry traces (OTLP, http/protobuf unless
                              OTEL_EXPORTER_OTLP_PROTOCOL=http/json) to this collector; or set
                              OTEL_TRACES_EXPORTER. Every standard OTEL_* variable applies
                              (default service name parley). Unset: no tracing
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
                              true records message content and tool arguments in spans
`;

function version(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/** A repeat signal within this long of the first is the same stop: a terminal and npm both forward Ctrl-C. */
const REPEAT_SIGNAL_MS = 1_000;

/** What a stop signal drains: a started server or worker. */
interface Stoppable {
  logger: Logger;
  close(): Promise<void>;
}

/**
 * SIGTERM/SIGINT drain in-flight requests and delivery attempts, close the adapters, then exit.
 * The handlers are in place before start-up begins, so no signal finds the process without one
 * (its default action would kill it with no exit code): a signal during start-up stops the server
 * as soon as it has started (nothing is in flight yet), or the failed start-up exits as it would
 * have. A signal within {@link REPEAT_SIGNAL_MS} of the first is the same stop (npm forwards the
 * terminal's Ctrl-C, systemd signals the whole group); only a later one exits at once — also
 * during a start-up that is still waiting for its store.
 */
function stopOnSignals(): { started(running: Stoppable): void } {
  let running: Stoppable | undefined;
  let firstAt: number | undefined;
  let pending: NodeJS.Signals | undefined;
  const drain = (server: Stoppable, signal: NodeJS.Signals) => {
    server.logger.info({ signal }, 'draining in-flight requests and delivery attempts before exit');
    server.close().then(
      () => {
        server.logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        server.logger.error({ err: error }, 'failed to close the server');
        process.exit(1);
      },
    );
  };
  const stop = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (performance.now() - firstAt < REPEAT_SIGNAL_MS) return;
      if (running) running.logger.warn({ signal }, 'second signal: exiting without waiting');
      else process.stderr.write(`parley: ${signal} again during start-up: exiting without waiting\n`);
      process.exit(1);
    }
    firstAt = performance.now();
    if (running) drain(running, signal);
    else pending = signal;
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return {
    started(server) {
      running = server;
      if (pending) drain(server, pending);
    },
  };
}

async function runCommand(start: (config: Config) => Promise<Stoppable>, args: string[]): Promise<void> {
  const signals = stopOnSignals();
  let config: Config | undefined;
  try {
    config = loadConfig(environmentWithFlags(args, process.env));
    signals.started(await start(config));
  } catch (error) {
    // Start-up failures are the operator's to fix: say what, in one line, not where in Parley's code.
    process.stderr.write(`parley: ${describeStartFailure(error, config)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === '-h' || command === '--help' || command === 'help') {
  process.stdout.write(HELP);
} else if (command === '-v' || command === '--version') {
  process.stdout.write(`${version()}\n`);
} else if (command === 'serve') {
  await runCommand((config) => startServer(config), rest);
} else if (command === 'worker') {
  await runCommand((config) => startWorker(config), rest);
} else if (command === 'migrate') {
  process.exitCode = await migrateCommand(rest);
} else if (command === 'keys') {
  process.exitCode = await keysCommand(rest);
} else {
  process.stderr.write(
    `${command === undefined ? '' : `parley: unknown command or arguments: ${process.argv.slice(2).join(' ')}\n\n`}${HELP}`,
  );
  process.exit(2);
}
