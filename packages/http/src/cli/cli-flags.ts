/**
 * @module The flags of `parley serve` and `parley worker` (decisions in docs/configuration.md):
 * each names an environment variable and wins over it; and start-up failures as one readable line.
 */
import { isParleyError } from '@parley/core';
import { parseArgs } from 'node:util';
import type { Config } from './config.js';

/** A flag → the environment variable it sets. */
const FLAGS = {
  port: 'PORT',
  host: 'HOST',
  'redis-url': 'REDIS_URL',
  'database-url': 'DATABASE_URL',
  'data-dir': 'DATA_DIR',
  'log-format': 'LOG_FORMAT',
} as const;

/** Bad command-line usage: reported in one line, exit code 2. */
export class UsageError extends Error {}

/**
 * `env` with the variables that `args` (what follows `serve` or `worker`, e.g. `--port 4000
 * --redis-url redis://…`, or `--port=4000`) set; a flag wins over the environment.
 * @throws UsageError for an unknown flag, a flag without its value, or a positional argument
 */
export function environmentWithFlags(
  args: string[],
  env: Record<string, string | undefined>,
): Record<string, string | undefined> {
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }]));
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (error) {
    // parseArgs's messages name the flag ("Unknown option '--prot'"); the help lists the right ones.
    throw new UsageError(`${(error as Error).message.split('. ')[0]!.replace(/\.$/, '')}. See parley --help.`);
  }
  const overrides: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(FLAGS)) {
    const value = values[flag];
    if (typeof value === 'string') overrides[variable] = value;
  }
  return { ...env, ...overrides };
}

/**
 * Why start-up failed, for stderr: start-up failed: an address in use names the address and how to choose
 * another (`EADDRINUSE`, also for `METRICS_PORT`); anything else is its message, never a stack
 * (a configuration error lists one problem per line).
 */
export function describeStartFailure(error: unknown, config: Pick<Config, 'port' | 'metricsPort'> | undefined): string {
  const failure = error as { code?: unknown; address?: unknown; port?: unknown; message?: unknown } | undefined;
  if (failure?.code === 'EADDRINUSE') {
    const port = typeof failure.port === 'number' ? failure.port : config?.port;
    const where = `${typeof failure.address === 'string' ? failure.address : 'this address'}:${port}`;
    const metrics = config?.metricsPort !== undefined && port === config.metricsPort && port !== config.port;
    return metrics
      ? `${where} is already in use (METRICS_PORT): stop what listens there, or choose another METRICS_PORT.`
      : `${where} is already in use (another parley serve?): stop what listens there, or choose another port with --port or PORT.`;
  }
  // Messages are written for operators (a ConfigError lists one problem per line). "Storage is
  // unavailable" says why: its cause is the driver's error, already stripped of arguments and rows.
  if (!(error instanceof Error)) return String(error);
  const cause = isParleyError(error) && error.cause instanceof Error ? error.cause.message : undefined;
  return cause === undefined ? error.message : `${error.message} (${cause})`;
}
