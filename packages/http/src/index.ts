/**
 * @module @parley/http: Parley's HTTP API as an embeddable Hono app, the plants sandbox, a
 * draining Node server and the configuration loader behind the `parley` command.
 */
export { createApp, type AppOptions } from './app.js';
export { createSandboxApp, type SandboxOptions } from './sandbox/sandbox-app.js';
export { serve, type ServeOptions, type ServerHandle } from './serve.js';
export { loadConfig, loadRedisConfig, ConfigError, type Config, type ApiKeyEntry, type RedisConfig } from './config.js';
export { startServer, startWorker, type RunningServer, type RunningWorker, type StartOptions } from './start.js';
export { createOpenApiDocument } from './openapi/document.js';
export { STATUS_BY_CODE } from './http-errors.js';
export { rateLimit, rateLimitHeaders, type RateLimitOptions } from './middleware/rate-limit.js';
export { createLogger, LOG_LEVELS, type LogLevel } from './logger.js';
export { DEFAULT_BODY_LIMIT_BYTES } from './middleware/json-body.js';
export type { ParleyEnv } from './env.js';
