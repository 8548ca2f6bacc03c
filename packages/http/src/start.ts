/** @module Starts the ready-made server from a {@link Config}: storage, API keys, app, listener. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { serve, type ServerHandle } from './serve.js';

/** A started server and what it runs on. */
export interface RunningServer {
  handle: ServerHandle;
  core: Core;
  logger: Logger;
  /** The development key, when one was created (no `API_KEYS`). */
  devKey?: string;
}

/** Where start-up prints its banner; default stdout. */
export interface StartOptions {
  print?: (text: string) => void;
}

/** A URL a person can paste: wildcard listening addresses are reached through loopback. */
function reachableUrl(handle: ServerHandle): string {
  return ['0.0.0.0', '::'].includes(handle.hostname) ? `http://127.0.0.1:${handle.port}` : handle.url;
}

function banner(url: string, config: Config, devKey: string | undefined): string {
  const lines = [
    `Parley is listening on ${url} (memory storage: data is lost when the server stops).`,
    `API reference: ${url}/docs (OpenAPI 3.1: ${url}/openapi.json)`,
  ];
  if (devKey === undefined) {
    lines.push(`API keys: ${config.apiKeys?.length ?? 0} from API_KEYS.`);
  } else {
    lines.push(
      '',
      'Development API key (workspace "default", plan "pro", all scopes). It is shown only this once:',
      '',
      `  KEY=${devKey}`,
      '',
      'Try it:',
      '',
      `  curl -H "Authorization: Bearer ${devKey}" ${url}/api/agents`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/**
 * Builds the core on memory storage, issues the configured keys (only their SHA-256 hashes are
 * kept) or one development key, and starts listening. Prints where it listens and, for a
 * development key, the key and a ready curl line.
 * @throws Error when `REDIS_URL` is set: Redis storage is not wired into the server yet
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  if (config.redisUrl !== undefined) {
    throw new Error('Redis storage is not available yet: unset REDIS_URL to run Parley on memory storage.');
  }
  const logger = createLogger(config.logLevel);
  const core = createCore({
    ...memoryAdapters(),
    onRateLimitStoreError: (error, failure) => logger.warn({ err: error, ...failure }, 'rate-limit store failed'),
  });
  let devKey: string | undefined;
  if (config.apiKeys) {
    for (const entry of config.apiKeys) {
      const grant = { workspaceId: entry.workspace, plan: entry.plan, scopes: entry.scopes, limitPerHour: entry.limitPerHour };
      await core.apiKeys.issue(grant, entry.key);
    }
  } else {
    devKey = (await core.apiKeys.issue({ workspaceId: 'default', plan: 'pro', scopes: ['*'] })).key;
  }
  const app = createApp(core, { bodyLimitBytes: config.bodyLimitBytes, logger });
  const handle = await serve(app, { port: config.port, hostname: config.host });
  print(banner(reachableUrl(handle), config, devKey));
  logger.info({ url: handle.url }, 'listening');
  return { handle, core, logger, ...(devKey === undefined ? {} : { devKey }) };
}
