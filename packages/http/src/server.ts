/**
 * @module @parley/http/server: the ready-made server — configuration from environment variables,
 * the configured backend's adapters, API keys at start-up, a draining Node listener — as `parley
 * serve` runs it. Importing it loads the Node server but no database driver: Redis and PostgreSQL
 * come from the optional peers `@parley/adapter-redis` and `@parley/adapter-postgres`, imported on
 * start when configured. Embedders who only mount `createApp` import `@parley/http`.
 */
export { serve, type ServeOptions, type ServerHandle } from './server/serve.js';
export {
  loadConfig,
  loadRedisConfig,
  ConfigError,
  type Config,
  type ApiKeyEntry,
  type RedisConfig,
} from './cli/config.js';
export {
  startServer,
  startWorker,
  createServerCore,
  type RunningServer,
  type RunningWorker,
  type StartOptions,
} from './server/start.js';
export { keysCommand } from './cli/keys-command.js';
export { serveMetrics, type MetricsServerHandle } from './server/metrics-server.js';
