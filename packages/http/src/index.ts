/**
 * @module @parley/http: Parley's HTTP API as an embeddable Hono app, the plants sandbox, the
 * OpenAPI document and the pieces a host reuses (error rendering, rate-limit headers, logger).
 * It loads no Redis client and no server: the ready-made server, its configuration and the
 * `parley` command live behind `@parley/http/server`.
 */
export { createApp, type AppOptions } from './app.js';
export { createSandboxApp, type SandboxOptions } from './sandbox/sandbox-app.js';
export { createOpenApiDocument } from './openapi/document.js';
export { STATUS_BY_CODE } from './http-errors.js';
export { toErrorResponse, type ErrorHandlerOptions, type ErrorShape } from './middleware/error-handler.js';
export { rateLimit, rateLimitHeaders, type RateLimitOptions } from './middleware/rate-limit.js';
export { createMetrics, type MetricsOptions, type ParleyMetrics } from './metrics/metrics.js';
export { requestMetrics } from './metrics/metrics-middleware.js';
export { createLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LoggerOptions, type LogLevel, type Logger } from './logger.js';
export { DEFAULT_BODY_LIMIT_BYTES } from './middleware/json-body.js';
export type { ParleyEnv } from './env.js';
