#!/usr/bin/env node
/**
 * @module The `parley` command: `parley serve` starts the server, `parley worker` a delivery
 * worker alone, `parley keys` manages API keys in Redis; `parley --help` explains.
 */
import { createRequire } from 'node:module';
import { describeStartFailure, environmentWithFlags, UsageError } from './cli-flags.js';
import { loadConfig, type Config } from './config.js';
import { keysCommand } from './keys-command.js';
import type { Logger } from './logger.js';
import { startServer, startWorker } from './start.js';

const HELP = `Usage: parley <command> [options]

Commands:
  serve          Start the HTTP API (agents, conversations, messages, webhooks, events; plants
                 sandbox) with a worker inside for webhook deliveries and agent replies
                 (unless DELIVERY_WORKER=false)
  worker         Run a worker alone (webhook deliveries, agent replies; needs Redis); run as
                 many as you need
  keys           Create, list and revoke API keys in Redis (parley keys --help)

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
  API_KEYS                    JSON array of {key, workspace, plan, scopes?, limitPerHour?};
                              unset: one development key on memory storage, none on Redis
  RATE_LIMIT_FAILURE          open or closed: admit or refuse (503) requests when the rate-limit
                              store does not answer within 250 ms (default open)
  BODY_LIMIT_BYTES            larger request bodies get 413 (default 1048576)
  CORS_ORIGINS                * or comma-separated origins (https://app.example.com) whose
                              pages may call the API from a browser (default: none)
  WEBHOOK_ALLOW_PRIVATE_URLS  true allows loopback/private webhook targets (default false)
  WEBHOOK_RETRY_DELAYS        seconds between delivery attempts, fractions allowed (default
                              5,300,1800,7200,18000,36000,50400,72000,86400)
  EVENT_RETENTION_DAYS        days events and the deliveries log are kept (default 14)
  DELIVERY_WORKER             false: parley serve makes no deliveries or replies (run parley worker)
  MODELS                      JSON {"<agent model name>": {provider: "openai-compatible", baseURL,
                              model, apiKey? | apiKeyEnv?}}: agents with that model reply
  REPLY_CONTEXT_MESSAGES      latest messages a reply is generated from (default 50)
  LOG_LEVEL                   fatal, error, warn, info, debug, trace or silent (default info)
  LOG_FORMAT                  pretty (readable lines), json, or auto: pretty on a terminal,
                              JSON otherwise (default auto)
  METRICS_PORT                serve Prometheus metrics at /metrics on this port (default: none)
`;

function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}

/**
 * SIGTERM/SIGINT drain in-flight requests and delivery attempts, close Redis, then exit; a second
 * signal exits at once.
 */
function exitOnSignals(running: { logger: Logger; close(): Promise<void> }): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      running.logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    running.logger.info({ signal }, 'draining in-flight requests and delivery attempts before exit');
    running.close().then(
      () => {
        running.logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        running.logger.error({ err: error }, 'failed to close the server');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function runCommand(start: (config: Config) => Promise<{ logger: Logger; close(): Promise<void> }>, args: string[]): Promise<void> {
  let config: Config | undefined;
  try {
    config = loadConfig(environmentWithFlags(args, process.env));
    exitOnSignals(await start(config));
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
} else if (command === 'keys') {
  process.exitCode = await keysCommand(rest);
} else {
  process.stderr.write(`${command === undefined ? '' : `parley: unknown command or arguments: ${process.argv.slice(2).join(' ')}\n\n`}${HELP}`);
  process.exit(2);
}
