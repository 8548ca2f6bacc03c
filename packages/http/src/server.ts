/**
 * @module @parley/http/server: the ready-made server — configuration from environment variables,
 * memory or Redis adapters, API keys at start-up, a draining Node listener — as `parley serve`
 * runs it. Importing it loads ioredis; embedders who only mount `createApp` import `@parley/http`.
 */
export { serve, type ServeOptions, type ServerHandle } from './serve.js';
export { loadConfig, loadRedisConfig, ConfigError, type Config, type ApiKeyEntry, type RedisConfig } from './config.js';
export { startServer, startWorker, createServerCore, type RunningServer, type RunningWorker, type StartOptions } from './start.js';
export { keysCommand } from './keys-command.js';
export { serveMetrics, type MetricsServerHandle } from './metrics/metrics-server.js';
